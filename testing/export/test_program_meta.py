"""Manifest contents from exported programs (torch.export on the CPU; the
library's constant table is built here from the exported tensors, so no
AOTInductor compile is needed)."""

import pytest

from aotrun_export.wrapper_constants import WrapperConstant, WrapperInfo


def _make_lib_table(ep, fqns, torch, restore=None):
    """A WrapperInfo + blob as AOTInductor writes them for `fqns` (all on
    CUDA: records are exactly the storage bytes)."""
    from aotrun_export.program_meta import program_tensors, storage_bytes
    tensors = program_tensors(ep)
    consts, blob = [], b""
    for i, fqn in enumerate(fqns):
        t = tensors[fqn]
        if restore and fqn in restore:   # the library re-stored the view
            t = t.clone()
        raw = storage_bytes(t)
        consts.append(WrapperConstant(
            index=i, name=fqn.replace(".", "_"), dtype=str(t.dtype)[6:],
            device=t.device.type, offset=t.storage_offset(), data_size=len(raw),
            type="parameter" if fqn in ep.state_dict and "weight" in fqn or
            "bias" in fqn else "buffer",
            shape=tuple(t.shape), stride=tuple(t.stride()), original_fqn=fqn))
        blob += raw
    return WrapperInfo(1, 1, consts, [], []), blob


@pytest.fixture
def models(torch):
    nn = torch.nn

    class TwoMethods(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 8)
            self.l2 = nn.Linear(8, 2)
            self.register_buffer("scale", torch.tensor([0.5, 2.0, 3.0, 4.0],
                                                       dtype=torch.float64))
            base = torch.arange(30, dtype=torch.float32).reshape(5, 6)
            self.register_buffer("window", base[1:4, 2:5])   # offset 8, strides (6,1)
            self.register_buffer("tr", torch.arange(6.0).reshape(2, 3).t())

        def forward(self, x, y):
            h = self.l2(torch.relu(self.l1(x)))
            return h, (y * self.scale).sum(), self.window + self.tr.sum()

        def decode(self, x):
            return self.l2(self.l1(x))
    return TwoMethods


def test_io_specs_dynamic_and_float64(torch, models):
    from aotrun_export.program_meta import io_specs
    m = models()
    x = torch.randn(3, 4)
    y = torch.randn(4, dtype=torch.float64)
    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(m, (x, y), dynamic_shapes=({0: batch}, None))
    ins, outs = io_specs(ep)
    assert [i["name"] for i in ins] == ["x", "y"]
    assert ins[0]["dtype"] == "float32" and isinstance(ins[0]["shape"][0], str)
    assert ins[0]["shape"][1] == 4
    assert ins[1] == {"name": "y", "dtype": "float64", "shape": [4]}
    assert [o["name"] for o in outs] == ["out0", "out1", "out2"]
    assert outs[0]["shape"] == [ins[0]["shape"][0], 2]   # same symbol
    assert outs[1] == {"name": "out1", "dtype": "float64", "shape": []}
    assert outs[2] == {"name": "out2", "dtype": "float32", "shape": [3, 3]}


def test_scalar_output_from_item(torch):
    from aotrun_export.program_meta import io_specs

    class M(torch.nn.Module):
        def forward(self, x):
            return x * 2, x.sum().item() > 0
    ins, outs = io_specs(torch.export.export(M(), (torch.randn(3),)))
    assert outs[1] == {"name": "out1", "dtype": "bool", "shape": []}


def test_second_method_keeps_fqns_and_input_names(torch, models):
    from aotrun_export.exporter import method_module
    from aotrun_export.program_meta import io_specs
    m = models()
    w = method_module(m.decode)
    assert method_module(m.forward) is m and method_module(m) is m
    assert w.l1 is m.l1 and w.scale is m.scale       # shared, not copied
    ep = torch.export.export(w, (torch.randn(2, 4),))
    assert set(ep.state_dict) >= {"l1.weight", "l1.bias", "l2.weight", "l2.bias"}
    assert io_specs(ep)[0][0]["name"] == "x"
    out = w(torch.ones(2, 4))
    assert torch.equal(out, m.decode(torch.ones(2, 4)))


def test_constants_shared_across_methods(torch, models):
    from aotrun_export.exporter import method_module
    from aotrun_export.program_meta import method_constants
    m = models()
    x, y = torch.randn(3, 4), torch.randn(4, dtype=torch.float64)
    ep_f = torch.export.export(m, (x, y))
    ep_d = torch.export.export(method_module(m.decode), (x,))
    weights, notes = {}, []
    fw_fqns = ["l1.weight", "l1.bias", "l2.weight", "scale", "window", "tr"]
    w, b = _make_lib_table(ep_f, fw_fqns, torch)
    cf = method_constants("forward", ep_f, w, b, weights, notes)
    w, b = _make_lib_table(ep_d, ["l1.weight", "l2.weight", "l2.bias"], torch)
    cd = method_constants("decode", ep_d, w, b, weights, notes)
    assert [c["fqn"] for c in cf] == fw_fqns
    assert [c["fqn"] for c in cd] == ["l1.weight", "l2.weight", "l2.bias"]
    assert sorted(weights) == sorted(set(fw_fqns) | {"l2.bias"})
    l1 = cf[0]
    assert l1 == {"name": "l1_weight", "fqn": "l1.weight", "type": "parameter",
                  "dtype": "float32", "device": "cpu", "sizes": [8, 4],
                  "strides": [4, 1], "storage_offset": 0, "nbytes": 128}
    assert weights["l1.weight"].shape == (8, 4)
    assert weights["l1.weight"].data == m.l1.weight.detach().numpy().tobytes()
    sc = cf[3]
    assert (sc["dtype"], sc["nbytes"], sc["type"]) == ("float64", 32, "buffer")
    assert weights["scale"].data == m.scale.numpy().tobytes()
    win = cf[4]   # a view: offset and strides kept, whole storage written flat
    assert (win["sizes"], win["strides"], win["storage_offset"], win["nbytes"]) \
        == ([3, 3], [6, 1], 8, 120)
    assert weights["window"].shape == (30,)
    assert weights["window"].data == torch.arange(30.0).numpy().tobytes()
    tr = cf[5]    # transposed: not contiguous, flat shape
    assert (tr["sizes"], tr["strides"]) == ([3, 2], [1, 3])
    assert weights["tr"].shape == (6,)
    assert notes == []


def test_restored_view_and_value_checks(torch, models):
    from aotrun_export.program_meta import ExportError, method_constants
    m = models()
    ep = torch.export.export(m, (torch.randn(3, 4), torch.randn(4, dtype=torch.float64)))
    # The library re-stored 'window' as a fresh storage: its layout wins.
    w, b = _make_lib_table(ep, ["window"], torch, restore={"window"})
    c = method_constants("forward", ep, w, b, {}, [])[0]
    assert (c["storage_offset"], c["strides"], c["nbytes"]) == (0, [3, 1], 36)
    # Bytes that differ from the program's tensor are refused.
    w, b = _make_lib_table(ep, ["l1.weight"], torch)
    with pytest.raises(ExportError, match="weight bytes differ"):
        method_constants("forward", ep, w, b[:-1] + b"\x7f", {}, [])
    w.constants[0].dtype = "float16"
    with pytest.raises(ExportError, match="dtype float32 in the exported program, "
                       "float16 in the compiled library"):
        method_constants("forward", ep, w, b, {}, [])


def test_conflicting_fqn_across_methods(torch, models):
    from aotrun_export.program_meta import ExportError, method_constants
    m = models()
    ep = torch.export.export(m, (torch.randn(3, 4), torch.randn(4, dtype=torch.float64)))
    weights = {}
    w, b = _make_lib_table(ep, ["l1.weight"], torch)
    method_constants("forward", ep, w, b, weights, [])
    with torch.no_grad():
        m.l1.weight.add_(1)
    ep2 = torch.export.export(m, (torch.randn(3, 4), torch.randn(4, dtype=torch.float64)))
    w2, b2 = _make_lib_table(ep2, ["l1.weight"], torch)
    with pytest.raises(ExportError, match="fqn 'l1.weight' has different bytes "
                       "in forward:l1_weight and decode:l1_weight"):
        method_constants("decode", ep2, w2, b2, weights, [])


def test_constant_unknown_to_program_and_bad_view(torch, models):
    from aotrun_export.program_meta import ExportError, method_constants
    m = models()
    ep = torch.export.export(m, (torch.randn(3, 4), torch.randn(4, dtype=torch.float64)))
    c = WrapperConstant(index=0, name="_tensor_constant0", dtype="int64",
                        device="cuda", offset=0, data_size=16,
                        type="tensor_constant", shape=(2,), stride=(1,),
                        original_fqn="_tensor_constant0")
    notes = []
    out = method_constants("forward", ep, WrapperInfo(1, 1, [c], [], []),
                           b"\1" * 16, {}, notes)
    assert out[0]["device"] == "cuda" and out[0]["type"] == "tensor_constant"
    assert "not in the exported program" in notes[0]
    c.shape = (3,)
    with pytest.raises(ExportError, match=r"sizes \[3\], strides \[1\], offset 0 "
                       "does not fit its 16-byte storage"):
        method_constants("forward", ep, WrapperInfo(1, 1, [c], [], []),
                         b"\1" * 16, {}, [])


def test_graph_facts_pick_compile_options(torch):
    from aotrun_export.options import BASE_OPTIONS, has_convolution, inductor_options
    from aotrun_export.program_meta import writes_buffers
    nn = torch.nn

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(1, 2, 3)

        def forward(self, x):
            return self.c(x).relu()

    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", torch.zeros(1))

        def forward(self, x):
            self.n.add_(1)
            return x + self.n

    class Branch(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv1d(1, 1, 1)

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: self.c(t), lambda t: t * 2, (x,))

    cnn = torch.export.export(Cnn(), (torch.randn(1, 1, 5, 5),))
    cnt = torch.export.export(Counter(), (torch.randn(2),))
    br = torch.export.export(Branch(), (torch.randn(1, 1, 4),))
    assert has_convolution(cnn) and not has_convolution(cnt)
    assert has_convolution(br)          # inside a torch.cond branch
    assert writes_buffers(cnt) and not writes_buffers(cnn)
    # The shim has aoti_torch_cuda_convolution: no forced Triton conv
    # templates and no max_autotune, only a note.
    opts, notes = inductor_options(has_conv=True)
    assert opts == BASE_OPTIONS
    assert "max_autotune" not in opts and "max_autotune_conv_backends" not in opts
    assert len(notes) == 1 and "aoti_torch_cuda_convolution" in notes[0]
    opts, notes = inductor_options(triton_gemm=True, has_conv=True)
    assert opts["max_autotune_gemm_backends"] == "TRITON,ATEN"
    assert "max_autotune_conv_backends" not in opts
    opts, notes = inductor_options(triton_gemm=True, writes_buffers=True)
    assert opts["max_autotune_gemm_backends"] == "TRITON,ATEN"
    assert opts["joint_graph_constant_folding"] is False
    opts, notes = inductor_options()
    assert opts == BASE_OPTIONS and notes == []
    assert BASE_OPTIONS["aot_inductor.link_libtorch"] is False
    assert BASE_OPTIONS["aot_inductor.package_constants_on_disk_format"] == "binary_blob"
