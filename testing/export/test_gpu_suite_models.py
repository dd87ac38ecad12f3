"""The GPU suite's pass models (testing/gpu/models_passes.py) export on the
CPU with the exporter's passes, leave none of the patterns the passes
remove, and (where eager PyTorch runs on the CPU) match eager. The GPU
run through aotrun is testing/gpu/run_gpu_check.sh."""

import os
import sys

import pytest

from conftest import ROOT
from pass_helpers import flat, op_names

GONE = ("aten._assert_async.msg", "aten._reshape_copy.default",
        "torch_attn._varlen_attn.default",
        "aten.linalg_solve_triangular.default", "aten.item.default",
        "aten._local_scalar_dense.default", "aten.index_put.default")


@pytest.fixture(scope="module")
def suite():
    pytest.importorskip("torch", exc_type=ImportError)
    sys.path.insert(0, os.path.join(ROOT, "testing", "gpu"))
    import models  # noqa: F401  (first: models_passes imports models.Case)
    import models_passes
    return models, models_passes


def test_pass_cases_are_in_the_suite(suite):
    models, mp = suite
    names = [c.name for c in mp.CASES]
    assert all(models.BY_NAME[n] is c for n, c in zip(names, mp.CASES))
    assert [c.name for c in models.CASES][-len(names):] == names


@pytest.mark.parametrize("name", [
    "float_item", "policy_head_h16", "policy_head_h64", "policy_head_h256",
    "assert_async", "masked_copy_x5", "masked_copy_cond",
    "masked_copy_checked", "reshape_copy", "varlen_attention", "kv_cache"])
def test_pass_case_exports_on_cpu(suite, torch, name):
    import copy

    from aotrun_export.exporter import export_method
    from aotrun_export.passes import run_passes
    models, _ = suite
    case = models.BY_NAME[name]
    module, methods = case.build("cpu")
    for method, (fn, args) in methods.items():
        ref = copy.deepcopy(module)
        ep = export_method(fn, args, {}, dynamic_shapes=None, strict=False)
        ep, notes = run_passes(ep)
        if case.stateful:
            from aotrun_export.passes import constant_folding_decision
            assert constant_folding_decision(ep)[0], name
        else:
            assert notes, f"{name}.{method}: no pass applied"
        names = set(op_names(ep))
        left = names & set(GONE)
        if name == "masked_copy_checked":
            assert "aten.index.Tensor" in names   # the user's check keeps it
        elif name == "float_item":
            assert not left
        else:
            assert not left, left
        if name == "varlen_attention":
            continue   # eager varlen_attn needs CUDA (Flash)
        eager, program = getattr(ref, fn.__name__), ep.module()
        with torch.no_grad():
            for _ in range(3 if case.stateful else 1):
                e, p = flat(eager(*args)), flat(program(*args))
                for x, y in zip(e, p):
                    torch.testing.assert_close(y, x, rtol=1e-5, atol=1e-4)
