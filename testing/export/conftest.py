"""pytest setup for the exporter tests: the package from backend_cuda/export,
tiny helper libraries built with gcc, an independent safetensors reader."""

import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "backend_cuda", "export"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: compiles a model with AOTInductor on the CPU (~30 s)")


@pytest.fixture
def build_so(tmp_path):
    """build_so(name, c_source, *gcc_args) -> path of a shared library."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed: cannot build a test shared library")

    def build(name, source, *args):
        src = tmp_path / f"{name}.c"
        src.write_text(source)
        out = tmp_path / name
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src),
                        *args], check=True)
        return str(out)
    return build


def read_safetensors(path):
    """An independent reader: (header dict without __metadata__, metadata,
    {key: bytes}). Checks the layout rules as it goes."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert 8 + n <= len(data)
    head_raw = data[8:8 + n]
    assert n % 8 == 0, "header not padded to 8 bytes"
    header = json.loads(head_raw.decode("utf-8"))
    meta = header.pop("__metadata__", None)
    body = data[8 + n:]
    out, spans = {}, []
    for k, v in header.items():
        b, e = v["data_offsets"]
        assert 0 <= b <= e <= len(body)
        spans.append((b, e))
        out[k] = body[b:e]
    spans.sort()
    for (b0, e0), (b1, _) in zip(spans, spans[1:]):
        assert e0 <= b1, "overlapping entries"
    return header, meta, out


@pytest.fixture
def torch():
    # ImportError too: a wheel whose native libraries cannot load (run
    # through run_pytest.sh, which provides them) skips with the reason.
    return pytest.importorskip("torch", exc_type=ImportError)
