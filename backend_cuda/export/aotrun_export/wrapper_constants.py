"""Reads the constant table of an AOTInductor model from its wrapper.cpp.

The generated C++ constructor fills `constants_info_[i].FIELD = VALUE;` for
every constant in the container's index order (the order of the C API and of
the weight blob), and passes the input, output and constant counts to
`AOTInductorModelBase(num_inputs, num_outputs, num_constants, ...)`. Reading
the source needs neither a GPU nor libtorch and sees exactly what the
library was built with.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

_ASSIGN = re.compile(
    r"^\s*constants_info_\[(\d+)\]\.(\w+)\s*=\s*(.*?);\s*$", re.M)
_IO_NAME = re.compile(r'^\s*(inputs|outputs)_info_\[(\d+)\]\.name\s*=\s*"(.*)";',
                      re.M)
_BASE = re.compile(r"AOTInductorModelBase\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,")

_CONSTANT_TYPES = {"Unknown": "unknown", "Parameter": "parameter",
                   "Buffer": "buffer", "TensorConstant": "tensor_constant",
                   "FoldedConstant": "folded_constant"}


class WrapperParseError(ValueError):
    pass


@dataclass
class WrapperConstant:
    index: int
    name: str = ""
    dtype: str = ""                 # torch name, e.g. "float32"
    device: str = ""                # "cuda" or "cpu"
    offset: int = 0                 # storage offset in elements
    data_size: int = 0              # bytes in the blob / GetConstantDataSize
    from_folded: bool = False
    type: str = "unknown"           # parameter, buffer, tensor_constant, ...
    shape: Tuple[int, ...] = ()
    stride: Tuple[int, ...] = ()
    original_fqn: str = ""
    seen: set = field(default_factory=set, repr=False)


@dataclass
class WrapperInfo:
    num_inputs: int
    num_outputs: int
    constants: List[WrapperConstant]
    input_names: List[str]
    output_names: List[str]


def _c_string(value: str, where: str) -> str:
    if len(value) < 2 or value[0] != '"' or value[-1] != '"':
        raise WrapperParseError(f"{where}: expected a string literal, got "
                                f"{value!r}")
    out, i, body = [], 0, value[1:-1]
    escapes = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _int(value: str, where: str) -> int:
    v = value.strip().rstrip("L").rstrip("l")
    try:
        return int(v)
    except ValueError:
        raise WrapperParseError(f"{where}: expected an integer, got "
                                f"{value!r}") from None


def _int_list(value: str, where: str) -> Tuple[int, ...]:
    v = value.strip()
    if not (v.startswith("{") and v.endswith("}")):
        raise WrapperParseError(f"{where}: expected {{...}}, got {value!r}")
    inner = v[1:-1].strip()
    if not inner:
        return ()
    return tuple(_int(x, where) for x in inner.split(",") if x.strip())


def _suffix(value: str, prefix: str, where: str) -> str:
    v = value.strip()
    if not v.startswith(prefix):
        raise WrapperParseError(f"{where}: expected {prefix}..., got "
                                f"{value!r}")
    return v[len(prefix):]


def _set(c: WrapperConstant, fld: str, value: str) -> None:
    where = f"constants_info_[{c.index}].{fld}"
    if fld == "name":
        c.name = _c_string(value, where)
    elif fld == "original_fqn":
        c.original_fqn = _c_string(value, where)
    elif fld == "dtype":
        c.dtype = _suffix(value, "cached_torch_dtype_", where)
    elif fld == "device_type":
        c.device = _suffix(value, "cached_torch_device_type_", where)
    elif fld == "offset":
        c.offset = _int(value, where)
    elif fld == "data_size":
        c.data_size = _int(value, where)
    elif fld == "from_folded":
        if value.strip() not in ("true", "false"):
            raise WrapperParseError(f"{where}: expected true/false, got "
                                    f"{value!r}")
        c.from_folded = value.strip() == "true"
    elif fld == "type":
        m = re.search(r"ConstantType::(\w+)", value)
        if not m or m.group(1) not in _CONSTANT_TYPES:
            raise WrapperParseError(f"{where}: unknown constant type "
                                    f"{value!r}")
        c.type = _CONSTANT_TYPES[m.group(1)]
    elif fld == "shape":
        c.shape = _int_list(value, where)
    elif fld == "stride":
        c.stride = _int_list(value, where)
    else:
        return  # layout, opaque_metadata: not needed
    c.seen.add(fld)


_REQUIRED = ("name", "dtype", "device_type", "offset", "data_size",
             "from_folded", "type", "shape", "stride", "original_fqn")


def parse_wrapper_source(text: str, source: str = "wrapper.cpp") -> WrapperInfo:
    """Parses the constructor's tables; raises WrapperParseError naming the
    constant and field that is missing or malformed."""
    base = _BASE.search(text)
    if not base:
        raise WrapperParseError(f"{source}: no AOTInductorModelBase(...) "
                                "constructor call found")
    n_in, n_out, n_const = (int(base.group(i)) for i in (1, 2, 3))
    consts: Dict[int, WrapperConstant] = {}
    for m in _ASSIGN.finditer(text):
        i = int(m.group(1))
        c = consts.setdefault(i, WrapperConstant(index=i))
        _set(c, m.group(2), m.group(3))
    if sorted(consts) != list(range(n_const)):
        raise WrapperParseError(
            f"{source}: the model has {n_const} constants but "
            f"constants_info_ sets indices {sorted(consts)}")
    for c in consts.values():
        missing = [f for f in _REQUIRED if f not in c.seen]
        if missing:
            raise WrapperParseError(
                f"{source}: constants_info_[{c.index}] ('{c.name}') has no "
                f"{', '.join(missing)}")
        if len(c.shape) != len(c.stride):
            raise WrapperParseError(
                f"{source}: constant '{c.name}' has {len(c.shape)} sizes but "
                f"{len(c.stride)} strides")
    io: Dict[str, Dict[int, str]] = {"inputs": {}, "outputs": {}}
    for m in _IO_NAME.finditer(text):
        io[m.group(1)][int(m.group(2))] = m.group(3)
    return WrapperInfo(
        num_inputs=n_in, num_outputs=n_out,
        constants=[consts[i] for i in range(n_const)],
        input_names=[io["inputs"][i] for i in sorted(io["inputs"])],
        output_names=[io["outputs"][i] for i in sorted(io["outputs"])])


def parse_wrapper_file(path: str) -> WrapperInfo:
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse_wrapper_source(f.read(), path)


def blob_records(info: WrapperInfo, blob: bytes,
                 source: str = "weights blob") -> Dict[int, bytes]:
    """Splits the binary_blob: the non-folded constants in index order, each
    exactly data_size bytes. Returns index -> bytes."""
    out, off = {}, 0
    for c in info.constants:
        if c.from_folded:
            continue
        end = off + c.data_size
        if end > len(blob):
            raise WrapperParseError(
                f"{source}: constant '{c.name}' needs bytes {off}..{end} but "
                f"the blob has {len(blob)} bytes")
        out[c.index] = bytes(blob[off:end])
        off = end
    if off != len(blob):
        raise WrapperParseError(f"{source}: {len(blob)} bytes, but the "
                                f"constants use {off}")
    return out


def find_constant(info: WrapperInfo, name: str) -> Optional[WrapperConstant]:
    for c in info.constants:
        if c.name == name:
            return c
    return None
