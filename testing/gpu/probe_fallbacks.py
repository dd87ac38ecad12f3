"""Which ATen fallback ops does AOTInductor (this torch, this GPU) emit for a
set of small models, with which arguments, and what strides do eager
results of those ops have? A development probe, run on the GPU machine:

  python3 testing/gpu/probe_fallbacks.py OUT_DIR [--only a,b] [--bench]

For each model: compiles it with aotrun's compile options (no shim check),
lists the aoti_torch_* functions the library imports, and copies the lines
of the generated wrapper that call fallback ops. Writes OUT_DIR/probe.json
and OUT_DIR/probe.md; with --bench also times the ATen ops of issue 9.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "backend_cuda", "export"))

from aotrun_export.options import BASE_OPTIONS  # noqa: E402
from aotrun_export.pt2_package import read_package  # noqa: E402

DEV = "cuda"


class Fn(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *a):
        return self.f(*a)


def r(*s, dtype=torch.float32):
    return torch.randn(*s, device=DEV, dtype=dtype)


def ri(hi, *s, dtype=torch.int64):
    return torch.randint(0, hi, s, device=DEV, dtype=dtype)


def moe(x, wg, w1, w2):
    # top-2 routing over 4 experts, bf16
    logits = x @ wg
    w, idx = torch.topk(logits.float().softmax(-1), 2, dim=-1)
    out = torch.zeros_like(x)
    for e in range(4):
        tok, slot = torch.where(idx == e)
        y = torch.relu(x[tok] @ w1[e]) @ w2[e]
        out.index_add_(0, tok, (y * w[tok, slot, None]).to(x.dtype))
    return out


def gnn(x, src, dst):
    msg = x[src] * 2.0
    n, f = x.shape
    idx = dst[:, None].expand(-1, f)
    amax = torch.zeros(n, f, device=x.device).scatter_reduce(
        0, idx, msg, "amax", include_self=False)
    mean = torch.zeros(n, f, device=x.device).scatter_reduce(
        0, idx, msg, "mean", include_self=False)
    return amax + mean


def masked_copy(out, src, m):
    out = out.clone()
    out[m] = src[m]
    return out


PROBES = {
    "moe_bf16": (moe, lambda: (r(64, 32, dtype=torch.bfloat16),
                               r(32, 4, dtype=torch.bfloat16),
                               r(4, 32, 64, dtype=torch.bfloat16),
                               r(4, 64, 32, dtype=torch.bfloat16))),
    "gnn": (gnn, lambda: (r(50, 16), ri(50, 200), ri(50, 200))),
    "scatter_reduce_sum": (lambda s, i, x: s.scatter_reduce(0, i, x, "sum"),
                           lambda: (r(8, 16), ri(8, 32, 16), r(32, 16))),
    "scatter_reduce_amax": (lambda s, i, x: s.scatter_reduce(1, i, x, "amax", include_self=False),
                            lambda: (r(8, 16), ri(16, 8, 32), r(8, 32))),
    "scatter_reduce_prod": (lambda s, i, x: s.scatter_reduce(0, i, x, "prod"),
                            lambda: (r(8, 16), ri(8, 32, 16), r(32, 16))),
    "scatter_reduce_mean": (lambda s, i, x: s.scatter_reduce(0, i, x, "mean"),
                            lambda: (r(8, 16), ri(8, 32, 16), r(32, 16))),
    "scatter_add": (lambda s, i, x: s.scatter_add(0, i, x),
                    lambda: (r(8, 16), ri(8, 32, 16), r(32, 16))),
    "scatter_src": (lambda s, i, x: s.scatter(1, i, x),
                    lambda: (r(8, 64), ri(64, 8, 16), r(8, 16))),
    "scatter_src_bf16": (lambda s, i, x: s.scatter(1, i, x),
                         lambda: (r(8, 64, dtype=torch.bfloat16), ri(64, 8, 16),
                                  r(8, 16, dtype=torch.bfloat16))),
    "scatter_value": (lambda s, i: s.scatter(0, i, 2.5),
                      lambda: (r(8, 16), ri(8, 4, 16))),
    "index_put_acc": (lambda s, i, v: s.index_put((i,), v, accumulate=True),
                      lambda: (r(64, 8), ri(64, 100), r(100, 8))),
    "index_put_acc_bf16": (lambda s, i, v: s.index_put((i,), v, accumulate=True),
                           lambda: (r(64, 8, dtype=torch.bfloat16), ri(64, 100),
                                    r(100, 8, dtype=torch.bfloat16))),
    "index_put": (lambda s, i, v: s.index_put((i,), v),
                  lambda: (r(64, 8), ri(64, 100), r(100, 8))),
    "index_put_2idx": (lambda s, i, j, v: s.index_put((i, j), v, accumulate=True),
                       lambda: (r(16, 16), ri(16, 40), ri(16, 40), r(40))),
    "index_add": (lambda s, i, v: s.index_add(0, i, v),
                  lambda: (r(64, 8), ri(64, 100), r(100, 8))),
    "masked_copy": (masked_copy, lambda: (r(16, 8), r(16, 8), r(16, 8) > 0)),
    "masked_scatter": (lambda s, m, v: s.masked_scatter(m, v),
                       lambda: (r(16, 8), r(16, 8) > 0, r(16, 8))),
    "masked_select": (lambda s, m: torch.masked_select(s, m),
                      lambda: (r(16, 8), r(16, 8) > 0)),
    "nonzero": (lambda s: torch.nonzero(s > 0), lambda: (r(16, 8),)),
    "index_multi": (lambda s, i, j: s[i, j], lambda: (r(16, 8), ri(16, 5, 1), ri(8, 1, 3))),
    "index_none": (lambda s, i: s[:, i], lambda: (r(4, 16, 8), ri(16, 6))),
    "index_neg": (lambda s, i: s[i - 16], lambda: (r(16, 8), ri(16, 10))),
    "index_int32": (lambda s, i: s[i], lambda: (r(16, 8), ri(16, 10, dtype=torch.int32))),
    "sort": (lambda s: torch.sort(s, dim=-1), lambda: (r(8, 100),)),
    "sort_stable_desc": (lambda s: torch.sort(s, dim=0, stable=True, descending=True),
                         lambda: (r(100, 8),)),
    "argsort": (lambda s: torch.argsort(s, dim=-1), lambda: (r(8, 100),)),
    "topk": (lambda s: torch.topk(s, 5, dim=-1), lambda: (r(8, 100),)),
    "topk_big": (lambda s: torch.topk(s, 64, dim=-1), lambda: (r(8, 5000),)),
    "gather": (lambda s, i: torch.gather(s, 1, i), lambda: (r(8, 100), ri(100, 8, 5))),
}


def compile_probe(name, fn, args, work):
    ep = torch.export.export(Fn(fn), args)
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(work, name + ".pt2"),
        inductor_configs=dict(BASE_OPTIONS))
    pkg = read_package(path)
    so = os.path.join(work, name + ".so")
    with open(so, "wb") as f:
        f.write(pkg.library)
    nm = subprocess.run(["nm", "-D", "--undefined-only", so],
                        capture_output=True, text=True).stdout
    imports = sorted({l.split()[-1] for l in nm.splitlines()
                      if "aoti_torch_" in l})
    calls = [l.strip() for l in pkg.wrapper_cpp.splitlines()
             if re.search(r"aoti_torch_(cuda_\w+|index_put_out|scatter\w*_out)\(", l)
             and "mm_out" not in l][:12]
    graph = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    return {"imports": imports, "calls": calls, "graph": graph[:40],
            "fallbacks": [i for i in imports if re.match(
                r"aoti_torch_(cuda_|index_put|scatter)", i)]}


def strides_probe():
    out = {}
    x = r(6, 10)
    xt = r(10, 6).t()
    out["sort_contig"] = [t.stride() for t in torch.sort(x, dim=-1)]
    out["sort_transposed_in"] = [t.stride() for t in torch.sort(xt, dim=-1)]
    out["sort_dim0"] = [t.stride() for t in torch.sort(x, dim=0)]
    out["topk_transposed_in"] = [t.stride() for t in torch.topk(xt, 3, dim=0)]
    out["topk_dim0"] = [t.stride() for t in torch.topk(x, 3, dim=0)]
    out["nonzero"] = torch.nonzero(x > 0).stride()
    out["masked_select"] = torch.masked_select(x, x > 0).stride()
    out["index_transposed_in"] = xt[torch.tensor([0, 2], device=DEV)].stride()
    out["index_none"] = r(4, 5, 6)[:, torch.tensor([0, 2], device=DEV)].stride()
    out["index_split"] = r(4, 5, 6)[torch.tensor([0, 2], device=DEV), :,
                                    torch.tensor([1, 3], device=DEV)].stride()
    out["scatter_transposed_self"] = xt.scatter(0, torch.zeros(2, 6, dtype=torch.long, device=DEV),
                                                r(2, 6)).stride()
    # NaN and signed zero in sort
    v = torch.tensor([1.0, float("nan"), -0.0, 0.0, -float("nan"), float("-inf"), 2.0], device=DEV)
    s, i = torch.sort(v, stable=True)
    out["sort_nan"] = [s.tolist().__repr__(), i.tolist()]
    s, i = torch.sort(v, stable=True, descending=True)
    out["sort_nan_desc"] = [s.tolist().__repr__(), i.tolist()]
    t, i = torch.topk(v, 3)
    out["topk_nan"] = [t.tolist().__repr__(), i.tolist()]
    # integer mean rounding, int8 wrap count
    s = torch.zeros(2, dtype=torch.int64, device=DEV)
    out["mean_int"] = s.scatter_reduce(0, torch.tensor([0, 0, 1, 1, 1], device=DEV),
                                       torch.tensor([1, 2, -1, -2, -2], device=DEV),
                                       "mean", include_self=False).tolist()
    s8 = torch.zeros(1, dtype=torch.int8, device=DEV)
    out["mean_int8_128"] = s8.scatter_reduce(0, torch.zeros(128, dtype=torch.long, device=DEV),
                                             torch.ones(128, dtype=torch.int8, device=DEV),
                                             "mean", include_self=False).tolist()
    out["mean_int8_256"] = s8.scatter_reduce(0, torch.zeros(256, dtype=torch.long, device=DEV),
                                             torch.ones(256, dtype=torch.int8, device=DEV),
                                             "mean", include_self=False).tolist()
    h = torch.ones(1, dtype=torch.half, device=DEV)
    out["prod_half_overflow"] = h.scatter_reduce(0, torch.zeros(3, dtype=torch.long, device=DEV),
                                                 torch.tensor([300.0, 300.0, 0.001], device=DEV).half(),
                                                 "prod").tolist()
    return out


def bench():
    from triton.testing import do_bench
    res = {}
    def t(name, f):
        f(); torch.cuda.synchronize()
        res[name] = round(do_bench(f, warmup=25, rep=200, return_mode="median") * 1000, 1)
    s = r(512, 1024); idx = ri(512, 4096, 1024); src = r(4096, 1024)
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        t(f"scatter_reduce_{red}", lambda red=red: s.scatter_reduce(0, idx, src, red))
    s4 = r(4, 1024); idx4 = ri(4, 4096, 1024)
    t("scatter_reduce_amax_4rows", lambda: s4.scatter_reduce(0, idx4, src, "amax"))
    torch.use_deterministic_algorithms(True)
    t("scatter_reduce_sum_deterministic", lambda: s.scatter_reduce(0, idx, src, "sum"))
    torch.use_deterministic_algorithms(False)
    big = r(1 << 20, 64, dtype=torch.bfloat16); ii = ri(1 << 20, 1 << 18)
    vv = r(1 << 18, 64, dtype=torch.bfloat16)
    t("index_put_acc_bf16", lambda: big.index_put_((ii,), vv, accumulate=True))
    torch.use_deterministic_algorithms(True)
    t("index_put_acc_bf16_deterministic", lambda: big.index_put_((ii,), vv, accumulate=True))
    torch.use_deterministic_algorithms(False)
    o = r(8192, 4096, dtype=torch.bfloat16); mi = ri(4096, 8192, 1024)
    ms = r(8192, 1024, dtype=torch.bfloat16)
    t("scatter_src_moe_bf16", lambda: o.scatter(1, mi, ms))
    t("scatter_src_moe_bf16_inplace", lambda: o.scatter_(1, mi, ms))
    so = r(4096, 1024)
    t("sort_4096x1024", lambda: torch.sort(so, dim=-1))
    t("sort_stable_4096x1024", lambda: torch.sort(so, dim=-1, stable=True))
    t("topk_4096x1024_k8", lambda: torch.topk(so, 8, dim=-1))
    m = r(1 << 24) > 0; xm = r(1 << 24)
    t("mask_index_16M", lambda: xm[m])
    t("nonzero_16M", lambda: torch.nonzero(m))
    cp = r(1 << 26)
    cp2 = torch.empty_like(cp)
    t("copy_256MB", lambda: cp2.copy_(cp))
    res["copy_GBps"] = round(2 * cp.numel() * 4 / (res["copy_256MB"] * 1e-6) / 1e9, 1)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--one", default="")
    ap.add_argument("--jobs", type=int, default=8)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    names = [n for n in a.only.split(",") if n] or list(PROBES)
    result = {"torch": torch.__version__, "models": {}}
    if a.one:
        work = tempfile.mkdtemp()
        fn, mk = PROBES[a.one]
        torch.manual_seed(0)
        try:
            res = compile_probe(a.one, fn, mk(), work)
        except Exception as e:
            res = {"error": f"{type(e).__name__}: {str(e)[:1500]}",
                   "tb": traceback.format_exc()[-3000:]}
        with open(os.path.join(a.out, a.one + ".json"), "w") as f:
            json.dump(res, f, indent=1)
        return
    # One process per model, several at once: compiles are CPU-bound.
    from concurrent.futures import ThreadPoolExecutor
    def one(n):
        subprocess.run([sys.executable, __file__, a.out, "--one", n],
                       capture_output=True, timeout=400)
        try:
            with open(os.path.join(a.out, n + ".json")) as f:
                return n, json.load(f)
        except OSError:
            return n, {"error": "no result (crash or timeout)"}
    with ThreadPoolExecutor(a.jobs) as ex:
        for n, res in ex.map(one, names):
            result["models"][n] = res
            print(n, json.dumps(res.get("fallbacks", res.get("error")))[:400],
                  flush=True)
    try:
        result["strides"] = strides_probe()
    except Exception as e:
        result["strides"] = {"error": repr(e)}
    if a.bench:
        result["bench"] = bench()
        print(json.dumps(result["bench"]), flush=True)
    with open(os.path.join(a.out, "probe.json"), "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(json.dumps(result["strides"], default=str))


if __name__ == "__main__":
    main()
