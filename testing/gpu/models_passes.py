"""GPU suite models for the exporter passes (docs/exporter-passes.md).

Each pattern the passes handle, as models.py cases: exported by
export_suite.py (the passes run inside export_program), run through aotrun
with and without CUDA graphs and compared with eager PyTorch by
run_suite.py. models.py appends CASES to its own list (import models,
not this module first: it imports models.Case).

  float_item          float32/float64 .item() values (1.5, -0.25, 1e-8, 0.1)
                      in several kernels; no host read left (graph-capturable)
  policy_head_h16/64/256
                      MultivariateNormal(mean, scale_tril) with 14 actions:
                      forward with validate_args=True, manual with the check
                      written as torch._assert_async
  assert_async        a hand-written device assert on the input
  masked_copy_x5      out[mask] = src[mask] five times: no index fallback,
                      no count read (graph-capturable)
  masked_copy_cond    the same inside a torch.cond branch (the device flag
                      is read on the host: runs without a graph)
  masked_copy_checked a user check on the count keeps the mask index (its
                      count is read: runs without a graph)
  reshape_copy        aten._reshape_copy of a transposed tensor
  varlen_attention    varlen_attn in float16: causal GQA with different
                      query/key lengths and NaN padding; sliding window
  kv_cache            a KV cache and step counter written every call
                      (stateful: constant folding must stay off)
"""

import torch
from torch import nn

from models import Case


def _seed():
    torch.manual_seed(1234)


class FloatItem(nn.Module):
    """Float scalars read with .item(), each feeding several kernels (a
    reduction between them forces separate kernels)."""

    def forward(self, x, s, t64, tiny, v64):
        a, b, c, d = s.item(), t64.item(), tiny.item(), v64.item()
        y = x * a + b                        # kernel 1
        m = y.sum(0, keepdim=True)           # reduction: kernel 2
        z = (y - m) * d + c                  # kernel 3
        return y, z, torch.where(x > d, x * c, x / a), (x.half() * d)


def _float_item(device):
    _seed()
    m = FloatItem().to(device)
    f = {"device": device}
    args = (torch.randn(6, 5, **f), torch.tensor(1.5, **f),
            torch.tensor(-0.25, dtype=torch.float64, **f),
            torch.tensor(1e-8, **f), torch.tensor(0.1, dtype=torch.float64,
                                                  **f))
    return m, {"forward": (m.forward, args)}


class PolicyHead(nn.Module):
    """Gaussian policy head: mean, log-prob of a given action, entropy."""

    def __init__(self, hidden, actions=14):
        super().__init__()
        self.body = nn.Linear(hidden, hidden)
        self.mu = nn.Linear(hidden, actions)
        self.tril = nn.Parameter(torch.randn(actions, actions) / 10)
        self.log_diag = nn.Parameter(torch.randn(actions) / 10)

    def _scale(self, batch):
        s = torch.tril(self.tril, -1) + torch.diag_embed(self.log_diag.exp())
        return s.expand(batch, -1, -1)

    def forward(self, x, action):
        from torch.distributions import MultivariateNormal
        mean = self.mu(torch.tanh(self.body(x)))
        d = MultivariateNormal(mean, scale_tril=self._scale(mean.shape[0]),
                               validate_args=True)
        return mean, d.log_prob(action), d.entropy()

    def manual(self, x, action):
        from torch.distributions import MultivariateNormal
        mean = self.mu(torch.tanh(self.body(x)))
        scale = self._scale(mean.shape[0])
        torch._assert_async((scale.diagonal(dim1=-2, dim2=-1) > 0).all(),
                            "scale_tril needs a positive diagonal")
        torch._assert_async(torch.isfinite(action).all(), "finite action")
        d = MultivariateNormal(mean, scale_tril=scale, validate_args=False)
        return mean, d.log_prob(action), d.entropy()


def _policy(hidden):
    def build(device):
        _seed()
        m = PolicyHead(hidden).to(device)
        args = (torch.randn(8, hidden, device=device),
                torch.randn(8, 14, device=device))
        return m, {"forward": (m.forward, args), "manual": (m.manual, args)}
    return build


class AssertAsync(nn.Module):
    def forward(self, x):
        torch._assert_async((x.abs() < 1e6).all(), "x out of range")
        return x.sigmoid() * 2


class MaskedCopy5(nn.Module):
    def forward(self, out, src, x):
        out = out.clone()
        for i in range(5):
            mask = x > (i - 2) * 0.5
            out[mask] = (src * (i + 1))[mask]
        return out


def _masked5(device):
    f = {"device": device}
    _seed()
    m = MaskedCopy5().to(device)
    return m, {"forward": (m.forward, (torch.randn(16, 33, **f),
                                       torch.randn(16, 33, **f),
                                       torch.randn(16, 33, **f)))}


class MaskedCopyCond(nn.Module):
    def forward(self, out, src, x, flag):
        def copy(out, src, x):
            out = out.clone()
            mask = x > 0
            out[mask] = src[mask]
            return out
        return torch.cond(flag, copy, lambda o, s, x: o * 2, (out, src, x))


def _masked_cond(device):
    f = {"device": device}
    _seed()
    m = MaskedCopyCond().to(device)
    return m, {"forward": (m.forward, (torch.randn(8, 5, **f),
                                       torch.randn(8, 5, **f),
                                       torch.randn(8, 5, **f),
                                       torch.tensor(True, **f)))}


class MaskedCopyChecked(nn.Module):
    def forward(self, out, src, x):
        mask = x > 0
        picked = src[mask]
        torch._check(picked.shape[0] >= 1)
        out = out.clone()
        out[mask] = picked
        return out


class ReshapeCopy(nn.Module):
    def forward(self, x):
        return torch.ops.aten._reshape_copy(x.transpose(0, 1), [-1, 4]) * 3


def _packed_varlen(device):
    """Packed float16 tokens: 3 sequences, query lengths 3, 5, 2 and key
    lengths 4, 6, 2, two NaN padding tokens after them."""
    _seed()
    f = {"device": device}
    lens_q, lens_k, pad = [3, 5, 2], [4, 6, 2], 2
    q = torch.randn(sum(lens_q) + pad, 8, 64, **f).half()
    k = torch.randn(sum(lens_k) + pad, 2, 64, **f).half()
    v = torch.randn(sum(lens_k) + pad, 2, 64, **f).half()
    for t in (q, k, v):
        t[-pad:] = float("nan")
    cu_q = torch.tensor([0, 3, 8, 10], dtype=torch.int32, **f)
    cu_k = torch.tensor([0, 4, 10, 12], dtype=torch.int32, **f)
    return q, k, v, cu_q, cu_k


class VarlenAttention(nn.Module):
    """Only the rows of real tokens are returned: Flash leaves padding rows
    of its output uninitialised (the decomposition writes zeros there)."""
    valid_q = 10

    def forward(self, q, k, v, cu_q, cu_k):
        from torch.nn.attention.varlen import varlen_attn
        out = varlen_attn(q, k, v, cu_q, cu_k, 5, 6, window_size=(-1, 0))
        return out[: self.valid_q]

    def window(self, q, k, v, cu_q, cu_k):
        from torch.nn.attention.varlen import varlen_attn
        out = varlen_attn(q, k, v, cu_q, cu_k, 5, 6, window_size=(2, 0))
        return out[: self.valid_q]


def _varlen(device):
    m = VarlenAttention().to(device)
    args = _packed_varlen(device)
    return m, {"forward": (m.forward, args), "window": (m.window, args)}


class KVCache(nn.Module):
    """Writes one key per call at the step counter's slot (pointwise ops
    only: graph-capturable) and advances the counter."""

    def __init__(self, slots=8, dim=4):
        super().__init__()
        self.register_buffer("cache", torch.zeros(slots, dim))
        self.register_buffer("step", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        here = torch.arange(self.cache.shape[0], device=x.device) == self.step
        self.cache.copy_(torch.where(here.unsqueeze(1), x, self.cache))
        self.step.add_(1)
        return self.cache * 1.0, self.step.float()


def _plain(cls, *shape, dtype=torch.float32):
    def build(device):
        _seed()
        m = cls().to(device)
        return m, {"forward": (m.forward, (torch.randn(*shape, dtype=dtype,
                                                       device=device),))}
    return build


def _three(cls, *shape):
    def build(device):
        _seed()
        m = cls().to(device)
        args = tuple(torch.randn(*shape, device=device) for _ in range(3))
        return m, {"forward": (m.forward, args)}
    return build


CASES = [
    Case("float_item", _float_item,
         notes="float .item() values reach kernels exactly (float_item pass)"),
    Case("policy_head_h16", _policy(16),
         notes="validate_args=True and a hand-written _assert_async"),
    Case("policy_head_h64", _policy(64)),
    Case("policy_head_h256", _policy(256)),
    Case("assert_async", _plain(AssertAsync, 4, 7)),
    Case("masked_copy_x5", _masked5,
         notes="five out[mask] = src[mask]: where, no count read"),
    Case("masked_copy_cond", _masked_cond),
    Case("masked_copy_checked", _three(MaskedCopyChecked, 6, 5),
         notes="a user check on the count keeps the index"),
    Case("reshape_copy", _plain(ReshapeCopy, 4, 6)),
    Case("varlen_attention", _varlen,
         notes="float16 outputs: Flash rounds its probabilities to float16, "
               "the decomposition keeps them in float32",
         extra={"tolerance": {"atol": 2e-3, "rtol": 1e-2}}),
    Case("kv_cache", _plain(KVCache, 1, 4), stateful=True),
]
