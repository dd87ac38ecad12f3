"""Exporter passes (DESIGN.md section 4), applied to each exported program
between torch.export and AOTInductor.

Each pass lives in its own module whose docstring states what it
guarantees; docs/exporter-passes.md has the torch 2.11 behaviour each one
works around and how to reproduce it. `run_passes` applies them in order
and returns one note per pass that changed something (the exporter logs
them and writes them into the method's manifest notes):

1. decompositions: functional ATen IR; `_reshape_copy`, varlen attention
   and small triangular solves decomposed (decompositions.py);
2. assert_async: device asserts and the math feeding them removed;
3. float_item: float/bool `.item()` values reach kernels as 0-d tensors;
4. masked_copy: `out[mask] = src[mask]` becomes `torch.where`.

Named in `run_passes(..., enable=...)` (the exporter enables small_gemm by
default; `small_gemm=False` / `--no-small-gemm` leave it out):
5. small_gemm: small matrix products become a multiply and a sum that
   Inductor fuses (small_gemm.py).

Compile-time decisions that are not graph rewrites: written_buffers.py
(constant folding off for programs that write buffers) and linking.py
(`-Wl,--as-needed`). Tracing aid: distribution_checks.py.
"""

from typing import Callable, List, Optional, Tuple

from .assert_async import remove_device_asserts
from .decompositions import functionalize_and_decompose
from .distribution_checks import distribution_checks_as_asserts
from .float_item import float_item_to_tensor
from .graph_utils import PassError
from .linking import as_needed_linking
from .masked_copy import masked_copy_to_where
from .small_gemm import small_gemms_to_reductions
from .written_buffers import constant_folding_decision

__all__ = ["PassError", "run_passes", "GRAPH_PASSES", "OPT_IN_PASSES",
           "distribution_checks_as_asserts", "as_needed_linking",
           "constant_folding_decision"]

# (name, function on the program in place -> summary or None)
GRAPH_PASSES: List[Tuple[str, Callable]] = [
    ("assert_async", remove_device_asserts),
    ("float_item", float_item_to_tensor),
    ("masked_copy", masked_copy_to_where),
]

# Run after GRAPH_PASSES, only when named in run_passes' `enable`.
OPT_IN_PASSES: List[Tuple[str, Callable]] = [
    ("small_gemm", small_gemms_to_reductions),
]


def run_passes(ep, skip=(), enable=()) -> Tuple[object, List[str]]:
    """(the rewritten program, one note per pass that changed it). `skip`
    names passes to leave out (tests show what each one prevents);
    "decompositions" also skips functionalization. `enable` names the
    opt-in passes to run."""
    unknown = set(enable) - {name for name, _ in OPT_IN_PASSES}
    if unknown:
        raise ValueError(f"unknown opt-in passes {sorted(unknown)}; known: "
                         f"{[name for name, _ in OPT_IN_PASSES]}")
    notes: List[str] = []
    if "decompositions" not in skip:
        ep, summary = functionalize_and_decompose(ep)
        if summary:
            notes.append(f"pass decompositions: {summary}")
    chosen = GRAPH_PASSES + [(n, f) for n, f in OPT_IN_PASSES if n in enable]
    for name, fn in chosen:
        if name in skip:
            continue
        summary: Optional[str] = fn(ep)
        if summary:
            notes.append(f"pass {name}: {summary}")
    try:
        ep.validate()
    except Exception as e:  # noqa: BLE001  (a pass bug: say which passes)
        raise PassError(f"the program is not a valid ExportedProgram after "
                        f"the passes ({'; '.join(notes) or 'none applied'}):"
                        f" {type(e).__name__}: {e}") from e
    return ep, notes
