"""Dynamic-dim ranges for the manifest (docs/program-format.md, "Dynamic-dim
ranges"): each symbol's [min, max] from torch.export's range constraints,
and each symbolic input dim as `scale*symbol + offset` over one symbol
(e.g. `s1 = 2*s0`, `s2 = s0 + 1`). A dim that is not of that form, or a
symbol without a finite integer range, is left out with an export note (the
runtime then checks only that equal names have equal sizes)."""

from typing import Dict, List, Optional, Tuple

MAX_EXACT = 2 ** 53        # the loader refuses JSON integers above this
INT64_MAX = 2 ** 63 - 1


def finite_bound(v) -> Optional[int]:
    """An exact finite integer bound, or None (infinite, symbolic, huge)."""
    try:
        if getattr(v, "is_finite", True) is False:
            return None
        n = int(v)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
    return n if abs(n) <= MAX_EXACT else None


def affine(expr) -> Optional[Tuple[object, int, int]]:
    """(symbol, scale, offset) when expr == scale*symbol + offset with
    integers scale >= 1 and offset, else None."""
    try:
        import sympy
        syms = expr.free_symbols
        if len(syms) != 1:
            return None
        sym = next(iter(syms))
        if not expr.is_polynomial(sym):
            return None
        coeffs = sympy.Poly(expr, sym).all_coeffs()
    except Exception:       # FloorDiv, Mod, ...: not a polynomial
        return None
    if len(coeffs) == 1:
        return None          # a constant: not symbolic
    if len(coeffs) != 2 or not all(c.is_Integer for c in coeffs):
        return None
    scale, offset = int(coeffs[0]), int(coeffs[1])
    if scale < 1 or scale > MAX_EXACT or abs(offset) > MAX_EXACT:
        return None
    return sym, scale, offset


def _ranges(ep) -> Dict[str, Tuple[int, Optional[int]]]:
    """symbol name -> (min, max or None) for symbols with a usable range."""
    out = {}
    for sym, vr in getattr(ep, "range_constraints", {}).items():
        lo = finite_bound(vr.lower)
        if lo is None or lo < 0:
            continue
        out[str(sym)] = (lo, finite_bound(vr.upper))
    return out


def _dim_entry(expr, name, d, ranges, symbols, notes) -> Optional[dict]:
    what = f"input '{name}' dim {d} ({expr})"
    aff = affine(expr)
    if aff is None:
        notes.append(f"{what} is not scale*symbol + offset over one "
                     "symbol: its range is not recorded or checked")
        return None
    sym, scale, offset = aff
    rng = ranges.get(str(sym))
    if rng is None:
        notes.append(f"{what}: symbol {sym} has no finite integer range in "
                     "the exported program: its range is not recorded")
        return None
    top = rng[1] if rng[1] is not None else rng[0]
    if scale * top + offset > INT64_MAX:
        notes.append(f"{what} overflows a 64-bit size: its range is not "
                     "recorded")
        return None
    symbols[str(sym)] = rng
    return {"symbol": str(sym), "scale": scale, "offset": offset}


def _symbolic_dims(ep) -> List[Tuple[str, list]]:
    """(name, [sympy expr or None per dim]) for each user tensor input."""
    import torch
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    out = []
    for name in ep.graph_signature.user_inputs:
        if not isinstance(name, str):
            continue
        node = placeholders.get(name)
        val = node.meta.get("val") if node is not None else None
        if not isinstance(val, torch.Tensor):
            out.append((name, []))
            continue
        exprs = []
        for size in val.shape:
            node_ = getattr(size, "node", None)
            static = isinstance(size, int) or (
                node_ is not None and node_.maybe_as_int() is not None)
            exprs.append(None if static else node_.expr)
        out.append((name, exprs))
    return out


def _hints(ep) -> Dict[str, int]:
    """symbol name -> its value in the export's example inputs (torch's
    shape environment), where torch kept one."""
    for node in ep.graph.nodes:
        val = node.meta.get("val") if node.op == "placeholder" else None
        for size in getattr(val, "shape", ()):
            env = getattr(getattr(size, "node", None), "shape_env", None)
            if env is None:
                continue
            out = {}
            vals = getattr(env, "backed_var_to_val", None)
            if vals is None:   # torch before backed_var_to_val
                vals = getattr(env, "var_to_val", {})
            for sym, v in vals.items():
                n = finite_bound(v)
                if n is not None:
                    out[str(sym)] = n
            return out
    return {}


def method_dims(ep, inputs: List[dict], notes: List[str]) -> Dict[str, dict]:
    """Adds "dims" to each input of `inputs` (io_specs' list, same order)
    that has a recorded symbolic dim; returns the method's "symbols"
    ({} when none), each with its example value ("hint", the size the
    runtime's warm-up run uses) where it lies in the range."""
    ranges = _ranges(ep)
    hints = _hints(ep)
    symbols: Dict[str, Tuple[int, Optional[int]]] = {}
    for spec, (name, exprs) in zip(inputs, _symbolic_dims(ep)):
        dims = [None if e is None else
                _dim_entry(e, name, d, ranges, symbols, notes)
                for d, e in enumerate(exprs)]
        if any(x is not None for x in dims):
            spec["dims"] = dims
    out = {}
    for name in sorted(symbols):
        lo, hi = symbols[name]
        out[name] = {"min": lo} if hi is None else {"min": lo, "max": hi}
        hint = hints.get(name)
        if hint is not None and lo <= hint and (hi is None or hint <= hi):
            out[name]["hint"] = hint
    return out
