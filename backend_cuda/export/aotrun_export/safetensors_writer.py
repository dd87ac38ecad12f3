"""A minimal safetensors writer (no dependency on the safetensors package).

Layout: u64 little-endian header length N, N bytes of JSON (keys sorted,
padded with spaces to a multiple of 8 so the data is 8-byte aligned), then
each entry's bytes in header-key order.
"""

import json
import os
import struct
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from .dtypes import itemsize, safetensors_code


@dataclass(frozen=True)
class Entry:
    key: str
    dtype: str              # manifest (torch) dtype name
    shape: Sequence[int]
    data: bytes


class SafetensorsError(ValueError):
    pass


def _check(e: Entry) -> None:
    n = 1
    for d in e.shape:
        if not isinstance(d, int) or d < 0:
            raise SafetensorsError(f"entry '{e.key}': bad dim {d!r} in shape "
                                   f"{list(e.shape)}")
        n *= d
    want = n * itemsize(e.dtype)
    if want != len(e.data):
        raise SafetensorsError(
            f"entry '{e.key}': shape {list(e.shape)} x {e.dtype} is {want} "
            f"bytes but {len(e.data)} bytes were given")


def encode_header(entries: List[Entry],
                  metadata: Optional[Dict[str, str]] = None) -> bytes:
    header = {}
    offset = 0
    for e in sorted(entries, key=lambda e: e.key):
        header[e.key] = {"dtype": safetensors_code(e.dtype),
                         "shape": list(e.shape),
                         "data_offsets": [offset, offset + len(e.data)]}
        offset += len(e.data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, sort_keys=True, separators=(",", ":"))
    raw = text.encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def write_safetensors(path: str, entries: List[Entry],
                      metadata: Optional[Dict[str, str]] = None) -> int:
    """Writes the file (atomically: a temp file renamed into place).
    Returns its size. Keys must be unique and not '__metadata__'."""
    seen = set()
    for e in entries:
        if e.key in seen:
            raise SafetensorsError(f"duplicate key '{e.key}'")
        if e.key == "__metadata__" or not e.key:
            raise SafetensorsError(f"invalid key '{e.key}'")
        seen.add(e.key)
        _check(e)
    head = encode_header(entries, metadata)
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(head)
            for e in sorted(entries, key=lambda e: e.key):
                f.write(e.data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return os.path.getsize(path)
