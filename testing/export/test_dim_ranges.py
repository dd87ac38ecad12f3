"""Dynamic-dim ranges the exporter records (aotrun_export/dim_ranges.py):
torch.export on the CPU, no AOTInductor compile."""



def _export(torch, dynamic_shapes, *args):
    class Net(torch.nn.Module):
        def forward(self, x, y, z):
            return x.sum() + y.sum() + z.sum()
    return torch.export.export(Net(), args, dynamic_shapes=dynamic_shapes)


def test_ranges_and_relations(torch):
    from aotrun_export.dim_ranges import method_dims
    from aotrun_export.program_meta import io_specs
    Dim = torch.export.Dim
    b = Dim("b", min=1, max=1024)
    ep = _export(torch, {"x": {0: b}, "y": {0: 2 * b}, "z": {0: b + 1}},
                 torch.randn(4, 3), torch.randn(8, 3), torch.randn(5))
    inputs, _ = io_specs(ep)
    notes = []
    symbols = method_dims(ep, inputs, notes)
    assert notes == []
    (sym,) = symbols
    # hint: the example's size (x has 4 rows), for the warm-up run.
    assert symbols[sym] == {"min": 1, "max": 1024, "hint": 4}
    assert inputs[0]["dims"] == [{"symbol": sym, "scale": 1, "offset": 0},
                                 None]
    assert inputs[1]["dims"] == [{"symbol": sym, "scale": 2, "offset": 0},
                                 None]
    assert inputs[2]["dims"] == [{"symbol": sym, "scale": 1, "offset": 1}]
    assert inputs[0]["shape"] == [sym, 3]


def test_unbounded_and_static(torch):
    from aotrun_export.dim_ranges import method_dims
    from aotrun_export.program_meta import io_specs
    Dim = torch.export.Dim
    ep = _export(torch, {"x": {0: Dim("n")}, "y": None, "z": None},
                 torch.randn(4, 3), torch.randn(8, 3), torch.randn(5))
    inputs, _ = io_specs(ep)
    symbols = method_dims(ep, inputs, [])
    (sym,) = symbols
    assert "max" not in symbols[sym]          # no finite upper bound
    assert symbols[sym]["hint"] == 4
    assert symbols[sym]["min"] >= 0
    assert "dims" not in inputs[1] and "dims" not in inputs[2]


def test_affine_forms(torch):
    import sympy
    from aotrun_export.dim_ranges import affine
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    assert affine(s0) == (s0, 1, 0)
    assert affine(2 * s0) == (s0, 2, 0)
    assert affine(s0 + 1) == (s0, 1, 1)
    assert affine(3 * s0 - 2) == (s0, 3, -2)
    assert affine(s0 * s1) is None            # two symbols
    assert affine(s0 ** 2) is None            # not affine
    assert affine(s0 / 2) is None             # not an integer scale
    assert affine(-s0 + 8) is None            # scale must be >= 1
    assert affine(sympy.Integer(4)) is None   # static
    from torch.utils._sympy.functions import FloorDiv
    assert affine(FloorDiv(s0, 2)) is None


def test_unsupported_dim_is_a_note(torch):
    import sympy
    from aotrun_export.dim_ranges import _dim_entry
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    notes, symbols = [], {}
    assert _dim_entry(s0 ** 2, "x", 0, {"s0": (1, 8)}, symbols, notes) is None
    assert notes == ["input 'x' dim 0 (s0**2) is not scale*symbol + offset "
                     "over one symbol: its range is not recorded or checked"]
    assert _dim_entry(s0, "x", 1, {}, symbols, notes) is None
    assert "has no finite integer range" in notes[1]
    assert symbols == {}
