#!/usr/bin/env python3
"""Writes the bundled example program that `aotrun demo` runs.

The program is the C fixture model (testing/fixtures/fixture_model.c, copied
as forward.so by the Bazel rule): input x float32 [N, 4]; constants
lin.weight float32 [3, 4], lin.bias float32 [3], scale float64 [1] and a
call counter float32 [1]; outputs y = (x @ lin.weight^T + lin.bias) * scale
float32 [N, 3] and the counter after the call.

With --cuda it writes the CUDA example instead (the fixture built with
-DFIXTURE_CUDA, `aotrun demo`'s GPU part): the same x and y, computed on the
GPU, with lin.weight and lin.bias on device "cuda" (the scale, 2.0, is
compiled into the library, and there is no counter), so the CUDA backend can
capture it in a CUDA graph.

Usage: make_example_program.py [--cuda] OUT_DIR
Writes OUT_DIR/manifest.json and OUT_DIR/weights.safetensors (see
docs/program-format.md). Python 3 standard library only; the output is
byte-for-byte deterministic.
"""

import json
import os
import struct
import sys

# Values exact in binary so the expected outputs are easy to check.
WEIGHT = [[(4 * i + j + 1) / 8.0 for j in range(4)] for i in range(3)]
BIAS = [0.5, -1.0, 0.25]
SCALE = [2.0]  # FIXTURE_CUDA_SCALE in fixture_model.c must stay equal
CALLS = [0.0]

# (internal name, fqn, type, dtype, sizes, values). The fixture is a CPU
# model: every constant lives in host memory ("device": "cpu").
CONSTANTS = [
    ("weight", "lin.weight", "parameter", "float32", [3, 4],
     [v for row in WEIGHT for v in row]),
    ("bias", "lin.bias", "parameter", "float32", [3], BIAS),
    ("scale64", "scale", "buffer", "float64", [1], SCALE),
    ("calls", "calls", "buffer", "float32", [1], CALLS),
]
# The CUDA example keeps the first two, on the GPU.
CUDA_CONSTANTS = CONSTANTS[:2]
OUTPUT_Y = {"name": "y", "dtype": "float32", "shape": ["s0", 3]}
OUTPUT_CALLS = {"name": "calls", "dtype": "float32", "shape": [1]}

DTYPES = {  # manifest name -> (safetensors name, struct code, item size)
    "float32": ("F32", "f", 4),
    "float64": ("F64", "d", 8),
}


def contiguous_strides(sizes):
    strides, step = [], 1
    for size in reversed(sizes):
        strides.insert(0, step)
        step *= size
    return strides


def tensor_bytes(dtype, values):
    _, code, _ = DTYPES[dtype]
    return struct.pack("<%d%s" % (len(values), code), *values)


def manifest(cuda):
    constants = []
    for name, fqn, kind, dtype, sizes, values in (
            CUDA_CONSTANTS if cuda else CONSTANTS):
        constants.append({
            "name": name,
            "fqn": fqn,
            "type": kind,
            "dtype": dtype,
            "device": "cuda" if cuda else "cpu",
            "sizes": sizes,
            "strides": contiguous_strides(sizes),
            "storage_offset": 0,
            "nbytes": len(tensor_bytes(dtype, values)),
        })
    return {
        "format": "aotrun-program",
        "format_version": 1,
        "producer": "testing/example_program/make_example_program.py"
                    + (" --cuda" if cuda else ""),
        "weights": "weights.safetensors",
        "methods": {
            "forward": {
                "library": "forward.so",
                "inputs": [{"name": "x", "dtype": "float32",
                            "shape": ["s0", 4]}],
                "outputs": [OUTPUT_Y] if cuda else [OUTPUT_Y, OUTPUT_CALLS],
                "constants": constants,
            }
        },
    }


def safetensors(cuda):
    # Largest items first so every entry is aligned to its item size and the
    # entries cover the data region without holes (as safetensors requires).
    order = sorted(CUDA_CONSTANTS if cuda else CONSTANTS,
                   key=lambda c: -DTYPES[c[3]][2])
    header, data = {}, b""
    for _, fqn, _, dtype, sizes, values in order:
        raw = tensor_bytes(dtype, values)
        header[fqn] = {"dtype": DTYPES[dtype][0], "shape": sizes,
                       "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"producer": "aotrun example program"}
    text = json.dumps(header, sort_keys=True, separators=(",", ":"))
    text += " " * (-len(text) % 8)  # the data region starts 8-byte aligned
    blob = text.encode("utf-8")
    return struct.pack("<Q", len(blob)) + blob + data


def main(argv):
    cuda = len(argv) == 3 and argv[1] == "--cuda"
    if len(argv) != 2 + cuda or argv[-1].startswith("-"):
        sys.stderr.write("usage: make_example_program.py [--cuda] OUT_DIR\n")
        return 2
    out = argv[-1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest(cuda), f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "weights.safetensors"), "wb") as f:
        f.write(safetensors(cuda))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
