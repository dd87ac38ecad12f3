"""How SDPA is exported (aotrun_export/attention_mode.py): fused attention
shims by default where the program runs on CUDA and the shim covers every
call, bmm + softmax otherwise (with an export note), and the CLI flags."""

import pytest

from aotrun_export import attention_mode as am

BOTH = {am.FLASH_SHIM, am.EFFICIENT_SHIM, "aoti_torch_cuda_mm_out"}


def test_resolve_defaults_to_fused_on_cuda():
    assert am.resolve(None, BOTH, True) == (False, None)
    assert am.resolve(None, None, True) == (False, None)  # exports unknown


def test_resolve_math_when_the_shim_lacks_a_fused_function():
    math, note = am.resolve(None, {am.FLASH_SHIM}, True)
    assert math
    assert note == ("attention: the shim library does not export "
                    f"{am.EFFICIENT_SHIM}; SDPA exported with the math "
                    "decomposition (bmm + softmax)")


def test_resolve_cpu_programs_and_forced_modes():
    assert am.resolve(None, BOTH, False) == (True, None)
    assert am.resolve(True, BOTH, True) == (True, None)
    assert am.resolve(False, set(), True) == (False, None)
    assert am.resolve(False, BOTH, False) == (False, None)


@pytest.fixture
def torch():
    return pytest.importorskip("torch", exc_type=ImportError)


def test_attention_context_backends(torch):
    cuda = torch.backends.cuda
    before = (cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(),
              cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled())
    with am.attention_context(False):
        assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled()
        assert cuda.math_sdp_enabled()
        assert not cuda.cudnn_sdp_enabled()  # no aotrun shim for cuDNN SDPA
    with am.attention_context(True):
        assert cuda.math_sdp_enabled()
        assert not (cuda.flash_sdp_enabled() or cuda.mem_efficient_sdp_enabled()
                    or cuda.cudnn_sdp_enabled())
    assert (cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(),
            cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled()) == before


def _graph(torch, op, args_fn, q_shape=(1, 2, 8, 64), v_shape=None,
           dtype=None):
    """An fx graph: placeholders q, k, v (meta tensors), then op(*args)."""
    import torch.fx as fx
    dtype = dtype or torch.bfloat16
    g = fx.Graph()
    nodes = []
    for name, shape in (("q", q_shape), ("k", q_shape),
                        ("v", v_shape or q_shape)):
        n = g.placeholder(name)
        n.meta["val"] = torch.empty(shape, dtype=dtype, device="meta")
        nodes.append(n)
    out = g.call_function(op, tuple(nodes) + tuple(args_fn(nodes)))
    g.output(out)
    return g


def test_uncovered_calls(torch):
    aten = torch.ops.aten
    flash = aten._scaled_dot_product_flash_attention.default
    eff = aten._scaled_dot_product_efficient_attention.default
    ok = _graph(torch, flash, lambda n: (0.0, True, False))
    assert am.uncovered_calls(ok, BOTH) == []
    assert am.uncovered_calls(ok, None) == []
    assert am.uncovered_calls(_graph(torch, eff, lambda n: (None, True, 0.0, True)),
                              BOTH) == []
    drop = _graph(torch, eff, lambda n: (None, True, 0.1, False))
    assert am.uncovered_calls(drop, BOTH) == [
        "_scaled_dot_product_efficient_attention_default "
        "(_scaled_dot_product_efficient_attention): dropout_p=0.1 (aotrun "
        "attention has no dropout)"]
    big = _graph(torch, flash, lambda n: (0.0, False, False),
                 q_shape=(1, 2, 8, 512))
    assert "head dim 512 > 256" in am.uncovered_calls(big, BOTH)[0]
    dv = _graph(torch, eff, lambda n: (None, False, 0.0, False),
                v_shape=(1, 2, 8, 32))
    assert "value head dim 32 != query head dim 64" in am.uncovered_calls(dv, BOTH)[0]
    f64 = _graph(torch, eff, lambda n: (None, False, 0.0, False),
                 dtype=torch.float64)
    assert "dtype torch.float64" in am.uncovered_calls(f64, BOTH)[0]
    assert ("does not export " + am.EFFICIENT_SHIM in
            am.uncovered_calls(_graph(torch, eff, lambda n: (None, False)),
                               {am.FLASH_SHIM})[0])
    dbg = _graph(torch, flash, lambda n: (0.0, False, True))
    assert "argument 5 (True) is not supported" in am.uncovered_calls(dbg, BOTH)[0]
    cudnn = _graph(torch, aten._scaled_dot_product_cudnn_attention.default,
                   lambda n: (None, False, 0.0, False, False))
    assert "no aotrun shim" in am.uncovered_calls(cudnn, BOTH)[0]


def test_on_cuda(torch):
    from torch._subclasses.fake_tensor import FakeTensorMode
    lin = torch.nn.Linear(2, 2)
    x = torch.randn(1, 2)
    assert not am.on_cuda(lin, (x,), {})
    with FakeTensorMode():
        xc = torch.empty(1, 2, device="cuda")
    assert am.on_cuda(lin, (xc,), {})
    assert am.on_cuda(lin.forward, (), {"x": [xc]})


def test_cpu_sdpa_traces_to_math(torch):
    """A CPU program keeps the math decomposition (the CPU fused ops have no
    aotrun shim): export + passes, no Inductor compile."""
    from aotrun_export.exporter import _trace
    from pass_helpers import op_names

    class Attn(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True)

    args = tuple(torch.randn(1, 2, 8, 16) for _ in range(3))
    math, note = am.resolve(None, BOTH, am.on_cuda(Attn(), args, {}))
    assert math and note is None
    ep, _ = _trace("forward", Attn(), args, {}, dynamic_shapes=None,
                   strict=False, skip_passes=(), math=math)
    names = set(op_names(ep))
    assert not any("_scaled_dot_product" in n for n in names), names
    assert am.uncovered_calls(ep, BOTH) == []


def test_cli_flags():
    from aotrun_export.__main__ import _parser
    a = _parser().parse_args(["m:f", "out", "--math-attention"])
    assert a.math_attention and not a.no_math_attention
    a = _parser().parse_args(["m:f", "out"])
    assert not a.math_attention and not a.no_math_attention
