"""Minimal .safetensors read/write for the GPU suite scripts (numpy only;
bfloat16 travels as its raw 16 bits and reads back widened to float32).
The format: 8-byte little-endian header length, a JSON header
{name: {dtype, shape, data_offsets}}, then the data."""

import json
import struct

import numpy as np

_NP = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
       "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
       "U8": np.uint8, "BOOL": np.bool_}


def save(path, tensors):
    """tensors: {name: torch.Tensor or np.ndarray}, written in order."""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        dt, raw, shape = _raw(t)
        header[name] = {"dtype": dt, "shape": list(shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def _raw(t):
    try:
        import torch
        if isinstance(t, torch.Tensor):
            t = t.detach().cpu().contiguous()
            if t.dtype == torch.bfloat16:
                return "BF16", t.view(torch.int16).numpy().tobytes(), t.shape
            t = t.numpy()
    except ImportError:
        pass
    a = np.ascontiguousarray(t)
    for k, v in _NP.items():
        if a.dtype == v:
            return k, a.tobytes(), a.shape
    raise ValueError(f"st_io: no safetensors dtype for {a.dtype}")


def load(path):
    """{name: (dtype string, np.ndarray)} in data order (aotrun writes its
    outputs in output order); BF16 widened to float32."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base, out = 8 + n, {}
    items = sorted(((k, e) for k, e in header.items() if k != "__metadata__"),
                   key=lambda ke: ke[1]["data_offsets"][0])
    for name, e in items:
        a, b = e["data_offsets"]
        raw = data[base + a:base + b]
        if e["dtype"] == "BF16":
            bits = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
            arr = bits.view(np.float32)
        else:
            arr = np.frombuffer(raw, _NP[e["dtype"]]).copy()
        out[name] = (e["dtype"], arr.reshape(e["shape"]))
    return out
