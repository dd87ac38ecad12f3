"""python3 -m aotrun_export --model MODULE:FACTORY --out DIR [options]

FACTORY() returns either an nn.Module plus example inputs as
(module, (x, ...)) or a methods dict {"forward": (callable, (x, ...)), ...}
as export_program takes it.
"""

import argparse
import importlib
import json
import sys

from .shim_check import MissingShimFunctions


def _load(spec: str):
    mod, _, attr = spec.partition(":")
    if not mod or not attr:
        raise SystemExit(f"--model: expected MODULE:FACTORY, got '{spec}'")
    return getattr(importlib.import_module(mod), attr)()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="aotrun_export", description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", required=True, help="MODULE:FACTORY")
    p.add_argument("--out", required=True, help="program directory to write")
    p.add_argument("--shim-exports", action="append", default=None,
                   metavar="FILE", help="libaotrun_shim.so or a text file of "
                   "exported names (repeatable); checks every library")
    p.add_argument("--triton-gemm", action="store_true",
                   help="GEMMs as autotuned Triton kernels")
    p.add_argument("--no-math-attention", action="store_true",
                   help="keep fused SDPA kernels (needs the attention shims)")
    a = p.parse_args(argv)
    from .exporter import export_program
    obj = _load(a.model)
    methods = obj if isinstance(obj, dict) else {"forward": obj}
    try:
        m = export_program(methods, a.out, triton_gemm=a.triton_gemm,
                           shim_exports=a.shim_exports,
                           attention_math=not a.no_math_attention,
                           log=lambda s: print(s, file=sys.stderr))
    except MissingShimFunctions as e:
        print(f"aotrun-export: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: len(v["constants"]) for k, v in m["methods"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
