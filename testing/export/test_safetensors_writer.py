"""The minimal safetensors writer, read back with an independent reader."""

import struct

import pytest

from aotrun_export.safetensors_writer import (Entry, SafetensorsError,
                                              write_safetensors)
from conftest import read_safetensors


def test_round_trip_several_dtypes(tmp_path):
    f64 = struct.pack("<3d", 1.5, -2.0, 1e300)
    bf16 = bytes([0x80, 0x3F, 0x00, 0xC0])          # 1.0, -2.0
    entries = [Entry("l2.weight", "float32", [2, 2], struct.pack("<4f", 1, 2, 3, 4)),
               Entry("buf.b", "float64", [3], f64),
               Entry("emb", "bfloat16", [2], bf16),
               Entry("flag", "bool", [], b"\x01"),
               Entry("empty", "int64", [0, 4], b"")]
    p = tmp_path / "w.safetensors"
    size = write_safetensors(str(p), entries, {"format": "pt"})
    assert size == p.stat().st_size
    header, meta, data = read_safetensors(str(p))
    assert meta == {"format": "pt"}
    assert header["buf.b"] == {"dtype": "F64", "shape": [3],
                               "data_offsets": header["buf.b"]["data_offsets"]}
    assert header["emb"]["dtype"] == "BF16" and header["flag"]["dtype"] == "BOOL"
    assert header["flag"]["shape"] == []
    assert header["empty"]["data_offsets"][0] == header["empty"]["data_offsets"][1]
    assert data["buf.b"] == f64 and data["emb"] == bf16
    assert data["l2.weight"] == struct.pack("<4f", 1, 2, 3, 4)
    # Data laid out in sorted key order, back to back, ending at the file end.
    spans = sorted(v["data_offsets"] for v in header.values())
    assert spans[0][0] == 0
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert len(raw) == 8 + n + spans[-1][1]
    text = raw[8:8 + n].decode()
    assert text.rstrip(" ") == text.rstrip(" ")  # padding only spaces
    assert text.index('"buf.b"') < text.index('"emb"') < text.index('"l2.weight"')


def test_header_padding_is_spaces_to_8(tmp_path):
    for key in ("a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg"):
        p = tmp_path / f"{key}.st"
        write_safetensors(str(p), [Entry(key, "uint8", [1], b"\x07")])
        raw = p.read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        assert n % 8 == 0
        head = raw[8:8 + n].decode()
        assert head == head.rstrip(" ") + " " * (len(head) - len(head.rstrip(" ")))
        assert raw[8 + n:] == b"\x07"


@pytest.mark.parametrize("entries,needle", [
    ([Entry("w", "float32", [3], b"\0" * 8)], "is 12 bytes but 8 bytes"),
    ([Entry("w", "float32", [1], b"\0" * 4)] * 2, "duplicate key 'w'"),
    ([Entry("__metadata__", "uint8", [1], b"\0")], "invalid key"),
    ([Entry("w", "float32", [-1], b"")], "bad dim -1"),
    ([Entry("w", "complex128", [1], b"\0" * 16)], "not supported"),
])
def test_bad_entries_fail_and_leave_no_file(tmp_path, entries, needle):
    p = tmp_path / "w.safetensors"
    with pytest.raises(ValueError, match=needle):
        write_safetensors(str(p), entries)
    assert list(tmp_path.iterdir()) == []


def test_tensor_bytes_are_exact(tmp_path, torch):
    from aotrun_export.program_meta import storage_bytes
    t = torch.tensor([1.0, -0.0, float("nan"), 3.25], dtype=torch.bfloat16)
    d = torch.tensor([[1.0, 2.0], [3.0, 1e-310]], dtype=torch.float64)
    ents = [Entry("t", "bfloat16", [4], storage_bytes(t)),
            Entry("d", "float64", [2, 2], storage_bytes(d))]
    p = tmp_path / "w.safetensors"
    write_safetensors(str(p), ents)
    _, _, data = read_safetensors(str(p))
    assert data["t"] == t.contiguous().view(torch.uint8).numpy().tobytes()
    back = torch.frombuffer(bytearray(data["d"]), dtype=torch.float64)
    assert torch.equal(back.view(2, 2), d)
