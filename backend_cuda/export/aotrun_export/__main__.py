"""python3 -m aotrun_export SOURCE OUT_DIR [options]

Exports a model into an aotrun program directory (docs/program-format.md):
torch.export, the exporter passes (docs/exporter-passes.md), AOTInductor.

SOURCE is one of:
  MODULE:FACTORY      FACTORY is a callable in an importable module (the
                      current directory is on the import path). FACTORY()
                      takes no arguments and returns one of:
                        (module, (x, ...))         an nn.Module's forward
                                                   with example inputs
                        {"forward": (fn, (x, ...)[, kwargs]), ...}
                                                   methods, fn a module or a
                                                   bound method of one
                        {"methods": {...}, "dynamic_shapes": {...}, ...}
                                                   methods plus keyword
                                                   arguments of
                                                   export_program:
                                                   dynamic_shapes, strict,
                                                   triton_gemm,
                                                   attention_math,
                                                   inductor_configs,
                                                   small_gemm
                        an ExportedProgram, or {"forward": ExportedProgram}
  FILE.pt2            a program saved with torch.export.save (method
                      "forward", or --method NAME); its dynamic shapes are
                      the ones it was exported with
  NAME=FILE.pt2[,NAME=FILE.pt2...]
                      several saved programs, one method each

The older form `--model MODULE:FACTORY --out DIR` still works.
Exit status: 0 written; 2 bad input or a model aotrun cannot run (the
message says why); 1 an unexpected error (with its traceback).
"""

import argparse
import importlib
import json
import os
import sys
import traceback

from .passes import PassError
from .program_meta import ExportError
from .shim_check import MissingShimFunctions, ProxyExecutorCalls

_KWARGS = ("dynamic_shapes", "strict", "triton_gemm", "attention_math",
           "inductor_configs", "small_gemm")


class UsageError(Exception):
    """Bad command-line input; the message is for the user."""


# ------------------------------------------------------------- sources

def _is_pt2_source(spec: str) -> bool:
    return all(part.strip().endswith(".pt2") for part in spec.split(","))


def load_pt2(path: str):
    """torch.export.load with a clear error."""
    if not os.path.isfile(path):
        raise UsageError(f"no such file '{path}'")
    import torch
    try:
        return torch.export.load(path)
    except Exception as e:  # noqa: BLE001  (any failure: not a program)
        raise UsageError(
            f"cannot load '{path}' as a saved torch.export program "
            f"(torch.export.save output): {type(e).__name__}: {e}") from e


def pt2_methods(spec: str, method: str = "forward") -> dict:
    """{method: ExportedProgram} from FILE.pt2 or NAME=FILE.pt2,..."""
    paths = {}
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    for part in parts:   # names first: a bad spec fails before any load
        name, sep, path = part.partition("=")
        if not sep:
            if len(parts) > 1:
                raise UsageError(f"'{part}': several programs need "
                                 "NAME=FILE.pt2 each")
            name, path = method, part
        if not name or name in paths:
            raise UsageError(f"'{part}': empty or repeated method name")
        paths[name] = path
    return {name: load_pt2(path) for name, path in paths.items()}


def call_factory(spec: str):
    """Imports MODULE and returns FACTORY()."""
    mod_name, sep, attr = spec.partition(":")
    if not sep or not mod_name or not attr:
        raise UsageError(f"expected MODULE:FACTORY or FILE.pt2, got '{spec}'")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as e:
        raise UsageError(f"cannot import module '{mod_name}' (from "
                         f"'{spec}'): {e}") from e
    factory = module
    for part in attr.split("."):
        if not hasattr(factory, part):
            raise UsageError(f"module '{mod_name}' has no attribute "
                             f"'{attr}' (from '{spec}')")
        factory = getattr(factory, part)
    if not callable(factory):
        raise UsageError(f"'{spec}' is a {type(factory).__name__}, not a "
                         "callable factory")
    try:
        return factory()
    except Exception as e:  # noqa: BLE001  (the user's code failed)
        traceback.print_exc(file=sys.stderr)
        raise UsageError(f"factory '{spec}' raised {type(e).__name__}: "
                         f"{e}") from e


def _describe(obj) -> str:
    return type(obj).__name__ + (f" of {len(obj)}" if isinstance(
        obj, (tuple, list, dict)) else "")


def normalize_factory_result(obj, spec: str):
    """(methods, export_program keyword arguments) from what a factory
    returned; UsageError naming what was wrong."""
    import torch
    expected = ("expected (module, example_inputs), a methods dict "
                "{name: (callable, example_inputs)}, {\"methods\": ..., "
                "\"dynamic_shapes\": ...} or an ExportedProgram")
    if isinstance(obj, torch.export.ExportedProgram):
        return {"forward": obj}, {}
    if isinstance(obj, tuple) and len(obj) in (2, 3) and \
            isinstance(obj[0], torch.nn.Module):
        return {"forward": obj}, {}
    if isinstance(obj, dict) and "methods" in obj:
        unknown = sorted(set(obj) - {"methods", *_KWARGS})
        if unknown:
            raise UsageError(f"factory '{spec}' returned unknown keys "
                             f"{unknown}; allowed: methods, "
                             f"{', '.join(_KWARGS)}")
        methods = obj["methods"]
        kwargs = {k: obj[k] for k in _KWARGS if k in obj}
    elif isinstance(obj, dict):
        methods, kwargs = obj, {}
    else:
        raise UsageError(f"factory '{spec}' returned a {_describe(obj)}; "
                         f"{expected}")
    if not isinstance(methods, dict) or not methods:
        raise UsageError(f"factory '{spec}': methods must be a non-empty "
                         f"dict, got a {_describe(methods)}")
    for name, m in methods.items():
        if isinstance(m, torch.export.ExportedProgram):
            continue
        ok = isinstance(m, (tuple, list)) and len(m) in (2, 3) and \
            callable(m[0]) and isinstance(m[1], (tuple, list, torch.Tensor))
        if not ok:
            raise UsageError(
                f"factory '{spec}': method '{name}' is a {_describe(m)}; "
                "expected (callable, example_inputs[, example_kwargs]) or "
                "an ExportedProgram")
    return methods, kwargs


def load_source(spec: str, method: str = "forward"):
    """(methods, export_program keyword arguments) for SOURCE."""
    if _is_pt2_source(spec):
        return pt2_methods(spec, method), {}
    return normalize_factory_result(call_factory(spec), spec)


# ------------------------------------------------------------- main

def _parser():
    p = argparse.ArgumentParser(prog="python3 -m aotrun_export",
                                description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("source", nargs="?", help="MODULE:FACTORY or FILE.pt2")
    p.add_argument("out_dir", nargs="?", help="program directory to write")
    p.add_argument("--model", help="MODULE:FACTORY (older form of SOURCE)")
    p.add_argument("--out", help="program directory (older form of OUT_DIR)")
    p.add_argument("--method", default="forward",
                   help="method name for a single FILE.pt2 (default forward)")
    p.add_argument("--shim-exports", action="append", default=None,
                   metavar="FILE", help="libaotrun_shim.so or a text file of "
                   "exported names (repeatable); checks every library")
    p.add_argument("--triton-gemm", action="store_true",
                   help="GEMMs as autotuned Triton kernels")
    p.add_argument("--no-small-gemm", action="store_true",
                   help="keep every GEMM on cuBLAS; by default small matrix "
                   "products (M or N <= 16; sizes static, or dynamic with a "
                   "max) become fused "
                   "Triton reductions (docs/exporter-passes.md)")
    p.add_argument("--no-math-attention", action="store_true",
                   help="always keep fused SDPA kernels (needs the attention "
                   "shims); the default keeps them where the shim covers "
                   "every call")
    p.add_argument("--math-attention", action="store_true",
                   help="always decompose SDPA into bmm + softmax")
    p.add_argument("--deterministic", action="store_true",
                   help="compile under torch.use_deterministic_algorithms: "
                   "accumulating ops (scatter_add, index_put accumulate, "
                   "scatter_reduce sum/mean) become aotrun's deterministic "
                   "shims, so every run gives the same bits")
    p.add_argument("--keep-packages", action="store_true",
                   help="also copy the AOTInductor .pt2 packages to OUT_DIR")
    return p


def _arguments(p, argv):
    a = p.parse_args(argv)
    source = a.source or a.model
    out = a.out_dir or a.out
    if a.source and a.model:
        p.error("give SOURCE or --model, not both")
    if a.out_dir and a.out:
        p.error("give OUT_DIR or --out, not both")
    if a.model and a.source and not a.out_dir:
        out = a.source
    if not source or not out:
        p.error("SOURCE and OUT_DIR are required")
    return a, source, out


def main(argv=None) -> int:
    p = _parser()
    a, source, out = _arguments(p, argv)
    try:
        methods, kwargs = load_source(source, a.method)
        if a.triton_gemm:
            kwargs["triton_gemm"] = True
        if a.no_small_gemm:
            kwargs["small_gemm"] = False
        if a.no_math_attention and a.math_attention:
            raise UsageError("give --math-attention or --no-math-attention, "
                             "not both")
        if a.no_math_attention:
            kwargs["attention_math"] = False
        if a.math_attention:
            kwargs["attention_math"] = True
        if a.deterministic:
            kwargs["deterministic"] = True
        from .exporter import export_program
        m = export_program(methods, out, shim_exports=a.shim_exports,
                           keep_packages=a.keep_packages,
                           log=lambda s: print(s, file=sys.stderr), **kwargs)
    except UsageError as e:
        print(f"aotrun-export: {e}", file=sys.stderr)
        return 2
    except (MissingShimFunctions, ProxyExecutorCalls, ExportError,
            PassError) as e:
        print(f"aotrun-export: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: len(v["constants"]) for k, v in m["methods"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
