"""dtype names shared by the manifest, safetensors and the library.

Manifest names are torch's (`float32`); safetensors has its own codes (`F32`).
See docs/program-format.md.
"""

# manifest (torch) name -> (safetensors code, element size in bytes)
DTYPES = {
    "float64": ("F64", 8),
    "float32": ("F32", 4),
    "float16": ("F16", 2),
    "bfloat16": ("BF16", 2),
    "float8_e5m2": ("F8_E5M2", 1),
    "float8_e4m3fn": ("F8_E4M3", 1),
    "int64": ("I64", 8),
    "int32": ("I32", 4),
    "int16": ("I16", 2),
    "int8": ("I8", 1),
    "uint8": ("U8", 1),
    "uint16": ("U16", 2),
    "uint32": ("U32", 4),
    "uint64": ("U64", 8),
    "bool": ("BOOL", 1),
    "complex64": ("C64", 8),
}

SAFETENSORS_TO_NAME = {code: name for name, (code, _) in DTYPES.items()}


class DtypeError(ValueError):
    pass


def check_name(name: str, what: str) -> str:
    if name not in DTYPES:
        raise DtypeError(f"{what}: dtype '{name}' is not supported by the "
                         f"aotrun program format (supported: "
                         f"{', '.join(DTYPES)})")
    return name


def itemsize(name: str) -> int:
    return DTYPES[check_name(name, "itemsize")][1]


def safetensors_code(name: str) -> str:
    return DTYPES[check_name(name, "safetensors")][0]


def torch_dtype_name(dtype) -> str:
    """'float32' for torch.float32 (works for any object whose str is
    'torch.NAME', so this module needs no torch import)."""
    s = str(dtype)
    return s[len("torch."):] if s.startswith("torch.") else s
