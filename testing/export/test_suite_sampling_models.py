"""The GPU suite's issue-10 models (testing/gpu/models.py) on the CPU:
the T=2048 transformer pair hands its attention mode to the exporter and
its reference runs with the matching eager SDPA backend; the policy head
samples (different draws per call, one distribution per row) and compiles
to the random fallbacks run_suite.py expects to see imported. The GPU run
through aotrun is testing/gpu/run_gpu_check.sh."""

import os
import sys

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def suite():
    pytest.importorskip("torch", exc_type=ImportError)
    sys.path.insert(0, os.path.join(ROOT, "testing", "gpu"))
    import export_suite
    import models
    return models, export_suite


def test_t2048_cases_pass_attention_mode_and_tolerance(suite, torch, tmp_path,
                                                       monkeypatch):
    models, export_suite = suite
    seen = {}

    def fake_export(methods, out_dir, **kw):   # records, compiles nothing
        seen[os.path.basename(out_dir)] = kw
        return {"methods": {"forward": {"notes": [], "aoti_torch_imports": []}}}

    monkeypatch.setattr(export_suite, "export_program", fake_export)
    small = models.Case("t", lambda dev: _small_block(models, dev))
    args = type("A", (), {"device": "cpu", "calls": 1, "triton_gemm": False,
                          "no_small_gemm": False, "shim_exports": None, "keep_packages": False})
    for name, math in (("transformer_t2048_fused", False),
                       ("transformer_t2048_math", True)):
        case = models.BY_NAME[name]
        assert case.extra["attention_math"] is math
        # The real case's options on a small block (T=2048 in eager on
        # this CPU would only cost time).
        small.name, small.extra = name, case.extra
        ref = export_suite.run_case(small, str(tmp_path), args, log=print)
        assert seen[name]["attention_math"] is math
        assert seen[name]["inductor_configs"] is None
        assert ref["tolerance"] == case.extra["tolerance"]
        assert "compare" not in ref


def _small_block(models, device):
    import torch
    models._seed()
    m = models.TransformerBlock(d=64, heads=4).to(device)
    return m, {"forward": (m.forward, (torch.randn(1, 16, 64, device=device),))}


def test_eager_sdpa_math_only_for_the_math_case(suite, torch):
    models, _ = suite
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: F401
    import contextlib
    assert isinstance(models.eager_sdpa(models.BY_NAME["transformer_t2048_fused"]),
                      contextlib.nullcontext)
    assert not isinstance(models.eager_sdpa(models.BY_NAME["transformer_t2048_math"]),
                          contextlib.nullcontext)


def test_t2048_builds_at_its_size(suite, torch):
    models, _ = suite
    m, methods = models.BY_NAME["transformer_t2048_fused"].build("meta")
    x = methods["forward"][1][0]
    assert tuple(x.shape) == (2, 2048, 512) and x.dtype == torch.bfloat16
    assert m.heads == 8 and m.qkv.weight.dtype == torch.bfloat16


def test_policy_samples_one_distribution(suite, torch):
    models, _ = suite
    m, methods = models.BY_NAME["policy_sample"].build("cpu")
    obs = methods["forward"][1][0]
    assert torch.equal(obs, obs[:1].expand_as(obs))   # one row, repeated
    with torch.no_grad():
        a1, c1 = m(obs)
        a2, c2 = m(obs)
        probs = torch.softmax(m.logits(torch.tanh(m.body(obs[:1]))), -1)[0]
        mu = m.mu(torch.tanh(m.body(obs[:1])))[0]
    assert not torch.equal(a1, a2) and not torch.equal(c1, c2)
    freq = torch.bincount(torch.cat([a1, a2]), minlength=8).double() / (2 * len(a1))
    assert (freq - probs.double()).abs().sum() / 2 < 0.05      # Gumbel-max
    z = (c1 - mu) / m.log_sigma.exp()
    assert abs(z.mean().item()) < 0.05 and abs(z.std().item() - 1) < 0.05
    spec = models.BY_NAME["policy_sample"].extra
    assert spec["compare"] == "distribution"


@pytest.mark.slow
@pytest.mark.parametrize("name,want", [
    ("policy_sample", {"aoti_torch_cpu_randint_low_out"}),
    ("policy_sample_fallback", {"aoti_torch_cpu_rand", "aoti_torch_cpu_randn"})])
def test_policy_compiles_to_the_random_fallbacks(suite, torch, tmp_path, name,
                                                 want):
    """On CUDA the same calls are aoti_torch_cuda_randint_low_out (the seeds
    of Inductor's Triton Philox) and aoti_torch_cuda_rand / randn
    (fallback_random)."""
    models, _ = suite
    from aotrun_export import export_program
    case = models.BY_NAME[name]
    _, methods = case.build("cpu")
    man = export_program(methods, str(tmp_path / name),
                         inductor_configs=case.extra.get("inductor_configs"),
                         log=lambda s: None)
    imports = set(man["methods"]["forward"]["aoti_torch_imports"])
    random = {n for n in imports if "rand" in n}
    assert random == want, sorted(imports)
