"""The public model suite for aotrun's exporter and GPU tests.

Each Case builds a fresh module on a device and says which methods to
export, with example inputs (also the inputs of every reference call) and
optional dynamic shapes. Stateful cases (buffers written per call) are run
`calls` times eagerly to give the expected outputs of consecutive calls.
"""

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Case:
    name: str
    build: Callable[[str], Tuple[nn.Module, Dict[str, Tuple]]]
    dynamic_shapes: Optional[Callable[[], Dict[str, object]]] = None
    stateful: bool = False
    notes: str = ""
    extra: dict = field(default_factory=dict)


def _seed():
    torch.manual_seed(1234)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(16, 32)
        self.l2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.c1(x)), 2)
        x = F.max_pool2d(torch.relu(self.c2(x)), 2)
        return self.fc(torch.flatten(x, 1))


class TransformerBlock(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.reshape(shape).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class NoisyPolicy(nn.Module):
    """A policy head that samples: a discrete action by Gumbel-max over its
    logits (rand_like -> -log(-log u) -> argmax) and a continuous action
    mu + sigma * randn_like. The same observation row is repeated, so every
    row draws from one distribution (checked by distribution, not value)."""

    def __init__(self, d=32, hidden=64, actions=8):
        super().__init__()
        self.body = nn.Linear(d, hidden)
        self.logits = nn.Linear(hidden, actions)
        self.mu = nn.Linear(hidden, actions)
        self.log_sigma = nn.Parameter(torch.linspace(-1.0, 0.5, actions))

    def forward(self, obs):
        h = torch.tanh(self.body(obs))
        logits = self.logits(h)
        u = torch.rand_like(logits).clamp(1e-12, 1.0 - 1e-7)
        action = torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)
        mu = self.mu(h)
        cont = mu + torch.randn_like(mu) * self.log_sigma.exp()
        return action, cont


class Float64Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8, dtype=torch.float64))
        self.register_buffer("b", torch.randn(16, dtype=torch.float64))

    def forward(self, x):
        y = x @ self.w + self.b[:8] * self.b[8:]
        return y, y.float().sum()


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("n", torch.zeros(1))

    def forward(self, x):
        self.n.add_(1)
        return self.lin(x) + self.n


class EncodeDecode(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 16)
        self.dec = nn.Linear(16, 8)

    def forward(self, x):
        return self.dec(torch.tanh(self.enc(x)))

    def decode(self, h):
        return self.dec(h), self.enc.weight.sum()


class MaskIndex(nn.Module):
    def forward(self, x):
        return x[x > 0] * 2


class ItemModel(nn.Module):
    # An integer .item() (aoti_torch_item_int64). A float .item() feeding a
    # kernel is miscompiled by torch 2.11's AOTInductor itself: the wrapper
    # passes the float symbol as int64_t (1.6165 arrives as 1.0), so
    # torch's own runner disagrees with eager too; see docs/gpu-results.md.
    def forward(self, x):
        return x * (x > 0).sum().item()


class CounterThenMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.zeros(1))

    def forward(self, x):
        self.n.add_(1)
        return x[x > self.n], self.n.clone()


class CondCpuPredicate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("flag", torch.tensor(True))

    def forward(self, x):
        return torch.cond(self.flag, lambda t: self.lin(t).relu(),
                          lambda t: t * 2, (x,))


class Affine4D(nn.Module):
    """Elementwise over a 4-D input with dynamic dims 1 and 2: (2,3,4,4) and
    (2,4,3,4) are both valid inputs of the same byte count (graph shape test)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.linspace(-1, 1, 4))

    def forward(self, x):
        return x * self.w + 1.0


def _dyn4d_shapes():
    c = torch.export.Dim("c", min=2, max=16)
    h = torch.export.Dim("h", min=2, max=16)
    return {"forward": {"x": {1: c, 2: h}}}


class BF16MLP(nn.Module):
    """The MLP in bfloat16, taking and returning bfloat16 (and a float32
    sum), run from the CLI with .safetensors inputs and outputs."""

    def __init__(self):
        super().__init__()
        self.mlp = MLP().to(torch.bfloat16)

    def forward(self, x):
        y = self.mlp(x)
        return y, y.float().sum(-1)


# ---- models that need the index / scatter / sort fallback ops (issue 9) ----

class MoELayer(nn.Module):
    """Top-2 routing of tokens to 4 expert MLPs in bfloat16: topk, a
    data-dependent torch.where (nonzero), x[tok] and index_add_. Takes and
    returns float32 (.npy has no bfloat16)."""

    def __init__(self, d=32, hidden=64, experts=4):
        super().__init__()
        self.experts = experts
        self.gate = nn.Linear(d, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, d, hidden) / d ** 0.5)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, d) / hidden ** 0.5)

    def forward(self, x):
        x = x.to(torch.bfloat16)
        w, idx = torch.topk(self.gate(x).float().softmax(-1), 2, dim=-1)
        out = torch.zeros_like(x)
        for e in range(self.experts):
            tok, slot = torch.where(idx == e)
            y = torch.relu(x[tok] @ self.w1[e]) @ self.w2[e]
            out.index_add_(0, tok, (y * w[tok, slot, None]).to(x.dtype))
        return out.float()


class MessagePassing(nn.Module):
    """A graph layer aggregating neighbour messages with scatter_reduce amax
    and mean (the index is dst expanded over the features: stride 0)."""

    def __init__(self, f=16):
        super().__init__()
        self.msg = nn.Linear(f, f)
        self.upd = nn.Linear(3 * f, f)

    def forward(self, x, edges):
        src, dst = edges[0], edges[1]
        m = torch.relu(self.msg(x[src]))
        idx = dst[:, None].expand(-1, x.shape[1])
        amax = torch.zeros_like(x).scatter_reduce(0, idx, m, "amax",
                                                  include_self=False)
        mean = torch.zeros_like(x).scatter_reduce(0, idx, m, "mean",
                                                  include_self=False)
        return self.upd(torch.cat([x, amax, mean], dim=1))


class MaskedStateUpdate(nn.Module):
    """Only active agents' states go through the update MLP: a mask index of
    rows and a masked index_put (aoti_torch_index_put_out)."""

    def __init__(self, d=8):
        super().__init__()
        self.f = nn.Linear(d, d)

    def forward(self, state, active):
        new = state.clone()
        new[active] = torch.tanh(self.f(state[active]))
        return new


class TopKSelector(nn.Module):
    """Scores items, keeps the best k (topk), sorts a feature (sort) and
    gathers the chosen items' features."""

    def __init__(self, d=16, k=5):
        super().__init__()
        self.k = k
        self.score = nn.Linear(d, 1)

    def forward(self, items):
        s = self.score(items).squeeze(-1)               # [batch, n]
        top, idx = torch.topk(s, self.k, dim=-1)
        chosen = torch.gather(items, 1, idx[..., None].expand(-1, -1, items.shape[-1]))
        order, perm = torch.sort(s, dim=-1, descending=True, stable=True)
        return top, idx, chosen, order, perm


class ScatterReduceZoo(nn.Module):
    """scatter_reduce prod and amin with include_self, on a transposed
    source, plus nonzero and masked_select."""

    def forward(self, x, index):
        p = x.scatter_reduce(0, index, x.t()[: index.shape[0], : x.shape[1]] + 1.5,
                             "prod")
        m = x.scatter_reduce(1, index.t()[:, :3] % x.shape[1], x[:, :3] * 2,
                             "amin", include_self=True)
        return p, m, torch.nonzero(x > 0.5), torch.masked_select(x, x < -0.5)


class DeterministicAccumulate(nn.Module):
    """Accumulating and last-write-wins ops exported in deterministic mode
    (they become fallback shims instead of Triton atomics): scatter_add,
    index_put with accumulate, index_add, scatter_reduce sum, scatter of a
    source and of a value with repeated targets."""

    def forward(self, x, idx, rows, vals):
        z = x.new_zeros(16, x.shape[1])
        return (z.scatter_add(0, idx, x),
                z.index_put((rows,), vals, accumulate=True),
                z.index_add(0, rows, vals),
                z.scatter_reduce(0, idx, x, "sum", include_self=False),
                z.scatter(0, idx, x),
                z.scatter(0, idx, 2.5),
                x.masked_scatter(x > 0.3, vals.reshape(-1)[: x.numel()]
                                 .reshape(x.shape) * 3))


class SortRows(nn.Module):
    """Row sorts past Inductor's own (persistent) sort size: plain, stable
    descending along dim 0, argsort, and a masked_scatter."""

    def forward(self, x, m):
        v, i = torch.sort(x, dim=-1)
        vd, id_ = torch.sort(x.t(), dim=0, stable=True, descending=True)
        return v, i, vd, id_, torch.argsort(x, dim=-1, stable=True), \
            x.masked_scatter(m, x.flip(-1) * 2)


class AliasOutputs(nn.Module):
    """Outputs that are views of one buffer, transposed, reshaped, aliased
    with each other (issue 13's crash)."""

    def forward(self, x):
        sq = x * x
        t = sq.t()
        return t, t.contiguous(), sq, sq.reshape(sq.shape), sq.view(1, 3, 4), \
            sq * x


class InputAliasOutputs(nn.Module):
    """Outputs that are the input itself or views of it."""

    def forward(self, x):
        return x, x.t(), x[1:], x.view(12), x + 1


def _det_accumulate(device):
    _seed()
    m = DeterministicAccumulate().to(device)
    x = torch.randn(40, 8, device=device)
    idx = torch.randint(0, 16, (40, 8), device=device)
    rows = torch.randint(0, 16, (320,), device=device)
    vals = torch.randn(320, 8, device=device)
    return m, {"forward": (m.forward, (x, idx, rows, vals))}


def _sort_rows(device):
    _seed()
    m = SortRows().to(device)
    x = torch.randn(6, 3000, device=device)
    x[0, :100] = 0.5                      # ties: stable order matters
    return m, {"forward": (m.forward, (x, torch.rand(6, 3000, device=device) > 0.5))}


def _moe(device):
    _seed()
    m = MoELayer().to(device).to(torch.bfloat16)
    return m, {"forward": (m.forward, (torch.randn(64, 32, device=device),))}


def _gnn(device):
    _seed()
    m = MessagePassing().to(device)
    x = torch.randn(50, 16, device=device)
    edges = torch.randint(0, 50, (2, 300), device=device)
    return m, {"forward": (m.forward, (x, edges))}


def _masked_update(device):
    _seed()
    m = MaskedStateUpdate().to(device)
    state = torch.randn(40, 8, device=device)
    active = torch.rand(40, device=device) > 0.4
    return m, {"forward": (m.forward, (state, active))}


def _topk(device):
    _seed()
    m = TopKSelector().to(device)
    return m, {"forward": (m.forward, (torch.randn(3, 40, 16, device=device),))}


def _scatter_zoo(device):
    _seed()
    m = ScatterReduceZoo().to(device)
    x = torch.randn(12, 10, device=device)
    index = torch.randint(0, 12, (6, 10), device=device)
    return m, {"forward": (m.forward, (x, index))}


def _plain(cls, *shape, dtype=torch.float32):
    def build(device):
        _seed()
        m = cls().to(device)
        x = torch.randn(*shape, dtype=dtype, device=device)
        return m, {"forward": (m.forward, (x,))}
    return build


def _two_methods(device):
    _seed()
    m = EncodeDecode().to(device)
    return m, {"forward": (m.forward, (torch.randn(3, 8, device=device),)),
               "decode": (m.decode, (torch.randn(3, 16, device=device),))}


def _cond_cpu(device):
    _seed()
    m = CondCpuPredicate().to(device)
    m.flag = m.flag.cpu()      # the predicate stays in host memory
    return m, {"forward": (m.forward, (torch.randn(2, 4, device=device),))}


def _transformer_t2048(device):
    """A transformer block at T=2048 (d 512, 8 heads of 64) in bfloat16."""
    _seed()
    m = TransformerBlock(d=512, heads=8).to(device).to(torch.bfloat16)
    x = torch.randn(2, 2048, 512, device=device, dtype=torch.bfloat16)
    return m, {"forward": (m.forward, (x,))}


def _policy(device):
    _seed()
    m = NoisyPolicy().to(device)
    obs = torch.randn(1, 32, device=device).expand(4096, 32).contiguous()
    return m, {"forward": (m.forward, (obs,))}


# bfloat16 end to end: eager's flash kernel and aotrun's differ in rounding.
_T2048_TOL = {"atol": 6e-2, "rtol": 5e-2}
# Sampled outputs: compared by distribution (run_suite.py, "distribution"):
# the histogram of an integer output (total variation distance), mean and
# std of a float output, against eager's draws; plus aotrun's own reruns
# with AOTRUN_SEED (same seed: identical, other seed: different).
_DIST = {"compare": "distribution", "tv_max": 0.05, "mean_atol": 0.05,
         "std_rtol": 0.05}


def eager_sdpa(case):
    """The SDPA backend eager runs a case with (its reference outputs and
    run_suite's eager timing): the math decomposition where the case
    exports it (extra "eager_sdpa": "math"), torch's default otherwise."""
    import contextlib
    if case.extra.get("eager_sdpa") != "math":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(SDPBackend.MATH)


def _mlp_dynamic():
    batch = torch.export.Dim("batch", min=1, max=1024)
    return {"forward": {"x": {0: batch}}}


CASES = [
    Case("mlp", _plain(MLP, 4, 16), dynamic_shapes=_mlp_dynamic),
    Case("cnn", _plain(SmallCNN, 2, 3, 16, 16),
         notes="convolution: aoti_torch_cuda_convolution (cuDNN)"),
    Case("transformer", _plain(TransformerBlock, 2, 8, 32),
         notes="SDPA exported with the math backend"),
    Case("transformer_t2048_fused", _transformer_t2048,
         notes="bfloat16 T=2048: SDPA on the fused attention shim",
         extra={"attention_math": False, "tolerance": _T2048_TOL,
                "eager_sdpa": "default"}),
    Case("transformer_t2048_math", _transformer_t2048,
         notes="bfloat16 T=2048: SDPA as bmm + softmax (attention_math=True)",
         extra={"attention_math": True, "tolerance": _T2048_TOL,
                "eager_sdpa": "math"}),
    Case("policy_sample", _policy,
         notes="rand_like/randn_like in Inductor's Triton Philox, seeded by "
               "randint_low_out (inductor_seeds)", extra=dict(_DIST)),
    Case("policy_sample_fallback", _policy,
         notes="the same with Inductor's fallback_random: rand and randn "
               "through the shim", extra=dict(_DIST, inductor_configs={
                   "fallback_random": True})),
    Case("float64", _plain(Float64Model, 3, 8, dtype=torch.float64)),
    Case("counter", _plain(Counter, 2, 4), stateful=True),
    Case("two_methods", _two_methods),
    Case("mask_index", _plain(MaskIndex, 64)),
    Case("item", _plain(ItemModel, 5, 3)),
    Case("counter_mask", _plain(CounterThenMask, 32), stateful=True),
    Case("cond_cpu_predicate", _cond_cpu),
    Case("dyn4d", _plain(Affine4D, 2, 3, 4, 4), dynamic_shapes=_dyn4d_shapes,
         notes="dynamic dims 1 and 2: CUDA graph replay shape check"),
    Case("moe_bf16", _moe, notes="topk, nonzero, index, index_add in bfloat16",
         extra={"tolerance": {"atol": 3e-2, "rtol": 3e-2}}),
    Case("bf16_io", _plain(BF16MLP, 4, 16, dtype=torch.bfloat16),
         notes="bfloat16 in and out through the CLI (.safetensors I/O)",
         extra={"tolerance": {"atol": 2e-2, "rtol": 2e-2}}),
    Case("gnn", _gnn, notes="scatter_reduce amax/mean, expanded index"),
    Case("masked_update", _masked_update,
         notes="mask index + masked index_put_out"),
    Case("topk_selector", _topk, notes="topk, sort, gather"),
    Case("scatter_zoo", _scatter_zoo,
         notes="scatter_reduce prod/amin, nonzero, masked_select"),
    Case("det_accumulate", _det_accumulate,
         notes="exported with deterministic=True: scatter_add, index_put "
               "accumulate, index_add, scatter src/value, masked_scatter",
         extra={"deterministic": True}),
    Case("sort_rows", _sort_rows, notes="sort, stable sort, argsort, "
         "masked_scatter on 3000-wide rows"),
    Case("alias_outputs", _plain(AliasOutputs, 3, 4),
         notes="outputs that are views/aliases of one buffer"),
    Case("input_alias_outputs", _plain(InputAliasOutputs, 3, 4),
         notes="outputs that are the input or views of it"),
]

BY_NAME = {c.name: c for c in CASES}

from models_passes import CASES as _PASS_CASES  # noqa: E402  (the passes' models)
CASES += _PASS_CASES; BY_NAME.update({c.name: c for c in _PASS_CASES})  # noqa: E702
