"""Builds a method's manifest entry from the exported program and the
compiled library's constant table.

Inputs/outputs (dtype, symbolic shape) come from the exported program's
graph. Constants are listed in the library's index order (wrapper.cpp's
constants_info_, folded ones left out). Their sizes, strides, storage
offsets and bytes are the library's own (constants_info_ and the weight-blob
records, which Inductor takes from the exported program's tensors but may
re-store: a view into a larger storage becomes a fresh storage), their
values checked element by element against the exported program's tensors.
"""

import ctypes
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .dtypes import DtypeError, check_name, itemsize, torch_dtype_name
from .wrapper_constants import WrapperConstant, WrapperInfo, blob_records


class ExportError(RuntimeError):
    pass


@dataclass
class Weight:
    """One safetensors entry: a constant's whole storage."""
    fqn: str
    dtype: str
    shape: Tuple[int, ...]
    data: bytes
    owner: str      # "method:constant" that first wrote it, for messages


# ---------------------------------------------------------------- io specs

def _dim(d):
    if isinstance(d, int):
        return d
    maybe = getattr(getattr(d, "node", None), "maybe_as_int", None)
    if maybe is not None:
        v = maybe()
        if v is not None:
            return int(v)
    return str(d)


def _value_spec(name: str, val, what: str) -> dict:
    import torch
    if isinstance(val, torch.Tensor):
        dtype = torch_dtype_name(val.dtype)
        try:
            check_name(dtype, what)
        except DtypeError as e:
            raise ExportError(str(e)) from None
        return {"name": name, "dtype": dtype,
                "shape": [_dim(d) for d in val.shape]}
    # AOTInductor returns a symbolic or constant scalar as a 0-dim tensor.
    for kind, dtype in ((torch.SymBool, "bool"), (bool, "bool"),
                        (torch.SymInt, "int64"), (int, "int64"),
                        (torch.SymFloat, "float64"), (float, "float64")):
        if isinstance(val, kind):
            return {"name": name, "dtype": dtype, "shape": []}
    raise ExportError(f"{what} '{name}' is a {type(val).__name__}, not a "
                      "tensor or scalar; aotrun methods take and return "
                      "tensors")


def io_specs(ep) -> Tuple[List[dict], List[dict]]:
    """(inputs, outputs) of the exported program, flattened as the compiled
    library takes and returns them."""
    from torch.export.graph_signature import OutputKind
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    inputs = []
    for name in ep.graph_signature.user_inputs:
        if not isinstance(name, str):
            continue  # a constant argument: baked into the library
        node = placeholders.get(name)
        val = node.meta.get("val") if node is not None else None
        if val is None:
            raise ExportError(f"input '{name}' has no example value")
        inputs.append(_value_spec(name, val, "input"))
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    values = list(out_node.args[0])
    outputs = []
    for spec, arg in zip(ep.graph_signature.output_specs, values):
        if spec.kind != OutputKind.USER_OUTPUT:
            continue
        val = arg.meta.get("val") if hasattr(arg, "meta") else arg
        name = f"out{len(outputs)}"
        if val is None:
            raise ExportError(f"output {len(outputs)} is None; aotrun "
                              "methods return tensors")
        outputs.append(_value_spec(name, val, "output"))
    return inputs, outputs


def _has_mutating_op(ep) -> bool:
    for n in ep.graph.nodes:
        schema = getattr(n.target, "_schema", None)
        if n.op == "call_function" and schema is not None and schema.is_mutable:
            return True
    return False


def writes_buffers(ep) -> bool:
    """True when the program writes a buffer. torch.export's default IR
    keeps in-place ops (aten.add_ on the buffer) and lists the mutation only
    after functionalization, so that is run when an in-place op is seen."""
    if ep.graph_signature.buffers_to_mutate:
        return True
    if not _has_mutating_op(ep):
        return False
    return bool(ep.run_decompositions({}).graph_signature.buffers_to_mutate)


# ---------------------------------------------------------------- constants

def program_tensors(ep) -> Dict[str, object]:
    """FQN -> tensor for every parameter, buffer and lifted constant."""
    import torch
    out = {}
    for src in (ep.state_dict, ep.constants):
        for k, v in src.items():
            if isinstance(v, torch.Tensor):
                out[k] = v
    return out


def storage_bytes(t) -> bytes:
    """The bytes of a tensor's whole untyped storage (not just its view)."""
    st = t.untyped_storage()
    if st.device.type != "cpu":
        st = st.cpu()
    n = st.nbytes()
    return ctypes.string_at(st.data_ptr(), n) if n else b""


def view_fits(sizes, strides, offset, isize, nbytes) -> bool:
    if any(s == 0 for s in sizes):
        return offset * isize <= nbytes
    span = offset + 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    return span * isize <= nbytes


def _contiguous_strides(sizes):
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= max(s, 1)
    return list(reversed(out))


def safetensors_shape(sizes, strides, offset, isize, nbytes) -> Tuple[int, ...]:
    """sizes when the view is the whole storage, else the flat storage."""
    numel = 1
    for s in sizes:
        numel *= s
    if (offset == 0 and numel * isize == nbytes and
            list(strides) == _contiguous_strides(sizes)):
        return tuple(sizes)
    return (nbytes // isize,)


def _mismatch(method, c, what, prog, lib):
    return ExportError(
        f"method '{method}': constant '{c.name}' (fqn '{c.original_fqn}'): "
        f"{what} {prog} in the exported program, {lib} in the compiled "
        "library")


def record_view(c: WrapperConstant, record: bytes):
    """The constant as the library sees it: its view over the record."""
    import torch
    dt = getattr(torch, c.dtype)
    n = len(record) // itemsize(c.dtype)
    if n == 0:
        flat = torch.empty(0, dtype=dt)
    else:
        base = torch.frombuffer(bytearray(record), dtype=torch.uint8)
        flat = base[: n * itemsize(c.dtype)].view(dt)
    return torch.as_strided(flat, c.shape, c.stride, c.offset)


def _bits(t):
    """Bitwise-comparable contiguous bytes (NaN and -0.0 compare exactly)."""
    import torch
    t = t.detach().cpu().contiguous()
    return t.reshape(-1).view(torch.uint8) if t.numel() else t.reshape(-1)


def _check_against_program(method, c: WrapperConstant, t, record: bytes):
    """The library may re-store a constant (a view of a larger storage
    becomes a fresh storage with offset 0), so its layout can differ from
    the exported tensor's; what must agree is dtype, sizes, device and every
    element's bits."""
    dtype = torch_dtype_name(t.dtype)
    if dtype != c.dtype:
        raise _mismatch(method, c, "dtype", dtype, c.dtype)
    if tuple(t.shape) != c.shape:
        raise _mismatch(method, c, "sizes", list(t.shape), list(c.shape))
    if t.device.type != c.device:
        raise _mismatch(method, c, "device", t.device.type, c.device)
    isize = itemsize(dtype)
    if len(record) % isize or not view_fits(c.shape, c.stride, c.offset,
                                            isize, len(record)):
        raise ExportError(
            f"method '{method}': constant '{c.name}': the library's view "
            f"(sizes {list(c.shape)}, strides {list(c.stride)}, offset "
            f"{c.offset}) does not fit its {len(record)}-byte record")
    import torch
    if not torch.equal(_bits(record_view(c, record)), _bits(t)):
        raise ExportError(
            f"method '{method}': constant '{c.name}' (fqn "
            f"'{c.original_fqn}'): the compiled library's weight bytes differ "
            "from the exported program's tensor")


def method_constants(method: str, ep, winfo: WrapperInfo, blob: bytes,
                     weights: Dict[str, Weight],
                     notes: List[str]) -> List[dict]:
    """Manifest constants of one method; adds its weights to `weights`
    (shared by FQN across methods, checked for equal bytes)."""
    tensors = program_tensors(ep) if ep is not None else {}
    try:
        records = blob_records(winfo, blob, f"method '{method}' weight blob")
    except ValueError as e:
        raise ExportError(str(e)) from None
    out = []
    for c in winfo.constants:
        if c.from_folded:
            continue
        fqn = c.original_fqn or c.name
        try:
            check_name(c.dtype, f"method '{method}': constant '{c.name}'")
        except DtypeError as e:
            raise ExportError(str(e)) from None
        if c.device not in ("cuda", "cpu"):
            raise ExportError(f"method '{method}': constant '{c.name}' is on "
                              f"device '{c.device}'; aotrun supports cuda "
                              "and cpu constants")
        rec = records[c.index]
        # Layout and bytes are the library's (what its code indexes);
        # values are checked against the exported program's tensor.
        dtype, sizes, strides, offset = (c.dtype, list(c.shape),
                                         list(c.stride), c.offset)
        t = tensors.get(fqn)
        if t is not None:
            _check_against_program(method, c, t, rec)
        else:
            notes.append(f"method '{method}': constant '{c.name}' (fqn "
                         f"'{fqn}') is not in the exported program; its "
                         "metadata comes from the compiled library")
        isize = itemsize(dtype)
        if c.data_size % isize or not view_fits(sizes, strides, offset,
                                                isize, c.data_size):
            raise ExportError(
                f"method '{method}': constant '{c.name}': a view of sizes "
                f"{sizes}, strides {strides}, offset {offset} does not fit "
                f"its {c.data_size}-byte storage of {dtype}")
        shape = safetensors_shape(sizes, strides, offset, isize, c.data_size)
        _add_weight(weights, Weight(fqn, dtype, shape, rec,
                                    f"{method}:{c.name}"))
        out.append({"name": c.name, "fqn": fqn, "type": c.type,
                    "dtype": dtype, "device": c.device, "sizes": sizes,
                    "strides": strides, "storage_offset": offset,
                    "nbytes": c.data_size})
    return out


def _add_weight(weights: Dict[str, Weight], w: Weight) -> None:
    old: Optional[Weight] = weights.get(w.fqn)
    if old is None:
        weights[w.fqn] = w
        return
    if old.dtype != w.dtype or len(old.data) != len(w.data):
        raise ExportError(
            f"fqn '{w.fqn}' is {old.dtype}, {len(old.data)} bytes for "
            f"{old.owner} but {w.dtype}, {len(w.data)} bytes for {w.owner}; "
            "methods sharing an FQN must share its storage (a method with a "
            "CPU constant pads every constant to 64 bytes)")
    if old.data != w.data:
        raise ExportError(
            f"fqn '{w.fqn}' has different bytes in {old.owner} and "
            f"{w.owner}; one program holds one value per FQN (register "
            "distinct tensors under distinct names)")
