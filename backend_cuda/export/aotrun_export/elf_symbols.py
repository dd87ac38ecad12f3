"""A small pure-Python reader of an ELF shared library's dynamic symbols.

Why our own: the GPU machine may have no binutils (`nm`), and the exporter must
list the `aoti_torch_*` functions a compiled model imports and compare them
with what the shim library exports. Only what that needs is read: .dynsym and
its string table, symbol versions (.gnu.version, .gnu.version_r,
.gnu.version_d), and the DT_NEEDED / DT_SONAME entries of .dynamic.
"""

import mmap
import struct
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

SHT_DYNAMIC = 6
SHT_DYNSYM = 11
SHT_GNU_VERDEF = 0x6FFFFFFD
SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_GNU_VERSYM = 0x6FFFFFFF
DT_NULL, DT_NEEDED, DT_SONAME = 0, 1, 14
SHN_UNDEF = 0

_BINDINGS = {0: "local", 1: "global", 2: "weak", 10: "unique"}
_KINDS = {0: "notype", 1: "object", 2: "func", 3: "section", 4: "file",
          5: "common", 6: "tls", 10: "ifunc"}


class ElfError(ValueError):
    """The file is not an ELF shared library this reader understands."""


@dataclass(frozen=True)
class DynamicSymbol:
    name: str
    defined: bool
    binding: str          # local, global, weak, unique
    kind: str             # func, object, notype, tls, ifunc, ...
    version: Optional[str] = None       # e.g. "GLIBC_2.2.5", "NVSHMEM"
    version_file: Optional[str] = None  # the library a needed version is from
    hidden_version: bool = False


@dataclass(frozen=True)
class DynamicInfo:
    path: str
    soname: Optional[str]
    needed: Tuple[str, ...]
    symbols: Tuple[DynamicSymbol, ...]
    # library file -> version names this object needs from it
    version_needs: Dict[str, Tuple[str, ...]]
    # version names this object defines (its own, e.g. "NVSHMEM")
    version_defs: Tuple[str, ...]

    def undefined(self) -> List[DynamicSymbol]:
        """Symbols the library imports (weak ones included)."""
        return [s for s in self.symbols if not s.defined and s.name]

    def exported(self) -> List[DynamicSymbol]:
        """Symbols the library defines with global, weak or unique binding."""
        return [s for s in self.symbols
                if s.defined and s.binding != "local" and s.name]


class _Image:
    """Bounds-checked little/big-endian reads from the whole file's bytes."""

    def __init__(self, data: bytes, path: str):
        self.data = data
        self.path = path
        if len(data) < 16 or data[:4] != b"\x7fELF":
            raise ElfError(f"{path}: not an ELF file (bad magic)")
        ei_class, ei_data = data[4], data[5]
        if ei_class not in (1, 2):
            raise ElfError(f"{path}: unknown ELF class {ei_class}")
        if ei_data not in (1, 2):
            raise ElfError(f"{path}: unknown ELF byte order {ei_data}")
        self.is64 = ei_class == 2
        self.endian = "<" if ei_data == 1 else ">"

    def unpack(self, fmt: str, offset: int, what: str):
        fmt = self.endian + fmt
        size = struct.calcsize(fmt)
        if offset < 0 or offset + size > len(self.data):
            raise ElfError(f"{self.path}: truncated {what} at offset {offset}")
        return struct.unpack_from(fmt, self.data, offset)

    def cstring(self, table: Tuple[int, int], index: int, what: str) -> str:
        base, size = table
        if index >= size:
            raise ElfError(f"{self.path}: {what} name index {index} outside "
                           f"its string table ({size} bytes)")
        start = base + index
        end = self.data.find(b"\0", start, base + size)
        if end < 0:
            raise ElfError(f"{self.path}: unterminated {what} name")
        return self.data[start:end].decode("utf-8", "replace")


def _sections(img: _Image) -> List[dict]:
    if img.is64:
        hdr = img.unpack("HHIQQQIHHHHHH", 16, "ELF header")
        shoff, shentsize, shnum = hdr[5], hdr[10], hdr[11]
    else:
        hdr = img.unpack("HHIIIIIHHHHHH", 16, "ELF header")
        shoff, shentsize, shnum = hdr[5], hdr[10], hdr[11]
    if shoff == 0 or shnum == 0:
        raise ElfError(f"{img.path}: no section headers")
    fmt = "IIQQQQIIQQ" if img.is64 else "IIIIIIIIII"
    secs = []
    for i in range(shnum):
        f = img.unpack(fmt, shoff + i * shentsize, f"section header {i}")
        secs.append({"type": f[1], "offset": f[4], "size": f[5],
                     "link": f[6], "info": f[7], "entsize": f[9]})
    for i, s in enumerate(secs):
        if s["type"] != 8 and s["offset"] + s["size"] > len(img.data):  # 8 = NOBITS
            raise ElfError(f"{img.path}: section {i} extends past the end "
                           f"of the file")
    return secs


def _strtab(img: _Image, secs: List[dict], index: int) -> Tuple[int, int]:
    if index >= len(secs):
        raise ElfError(f"{img.path}: string table section {index} missing")
    return secs[index]["offset"], secs[index]["size"]


def _version_needs(img, secs, sec) -> Tuple[Dict[int, Tuple[str, str]],
                                             Dict[str, List[str]]]:
    """Version index -> (version name, library file) from .gnu.version_r."""
    strtab = _strtab(img, secs, sec["link"])
    by_index, by_file = {}, {}
    off = sec["offset"]
    for _ in range(sec["info"]):
        _, cnt, file_i, aux, nxt = img.unpack("HHIII", off, "version need")
        lib = img.cstring(strtab, file_i, "version file")
        a = off + aux
        for _ in range(cnt):
            _, _, other, name_i, anext = img.unpack("IHHII", a, "version aux")
            name = img.cstring(strtab, name_i, "version")
            by_index[other & 0x7FFF] = (name, lib)
            by_file.setdefault(lib, []).append(name)
            if anext == 0:
                break
            a += anext
        if nxt == 0:
            break
        off += nxt
    return by_index, by_file


def _version_defs(img, secs, sec) -> Dict[int, str]:
    """Version index -> version name from .gnu.version_d (skips the base)."""
    strtab = _strtab(img, secs, sec["link"])
    out = {}
    off = sec["offset"]
    for _ in range(sec["info"]):
        _, flags, ndx, cnt, _, aux, nxt = img.unpack("HHHHIII", off,
                                                     "version definition")
        if cnt > 0 and not flags & 1:  # VER_FLG_BASE names the file itself
            name_i, _ = img.unpack("II", off + aux, "version definition aux")
            out[ndx & 0x7FFF] = img.cstring(strtab, name_i, "version")
        if nxt == 0:
            break
        off += nxt
    return out


def _dynamic(img, secs) -> Tuple[Optional[str], List[str]]:
    soname, needed = None, []
    for s in secs:
        if s["type"] != SHT_DYNAMIC:
            continue
        strtab = _strtab(img, secs, s["link"])
        fmt, step = ("qQ", 16) if img.is64 else ("iI", 8)
        for off in range(s["offset"], s["offset"] + s["size"], step):
            tag, val = img.unpack(fmt, off, "dynamic entry")
            if tag == DT_NULL:
                break
            if tag == DT_NEEDED:
                needed.append(img.cstring(strtab, val, "needed library"))
            elif tag == DT_SONAME:
                soname = img.cstring(strtab, val, "soname")
    return soname, needed


def read_dynamic(path: str) -> DynamicInfo:
    """Reads the dynamic symbol table of an ELF file; raises ElfError."""
    try:
        with open(path, "rb") as f:
            # mmap: libraries such as cuBLAS are hundreds of MB; only the
            # headers and symbol tables are touched.
            size = f.seek(0, 2)
            if size == 0:
                raise ElfError(f"{path}: empty file, not an ELF library")
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise ElfError(f"{path}: cannot read: {e.strerror}") from e
    try:
        return _read_image(_Image(data, path), path)
    finally:
        data.close()


def _read_image(img: "_Image", path: str) -> DynamicInfo:
    secs = _sections(img)
    dynsym = [s for s in secs if s["type"] == SHT_DYNSYM]
    if not dynsym:
        raise ElfError(f"{path}: no dynamic symbol table (.dynsym); "
                       "not a shared library?")
    sym = dynsym[0]
    need_idx, need_files = {}, {}
    def_idx: Dict[int, str] = {}
    versym = None
    for s in secs:
        if s["type"] == SHT_GNU_VERNEED:
            need_idx, need_files = _version_needs(img, secs, s)
        elif s["type"] == SHT_GNU_VERDEF:
            def_idx = _version_defs(img, secs, s)
        elif s["type"] == SHT_GNU_VERSYM:
            versym = s
    strtab = _strtab(img, secs, sym["link"])
    entsize = sym["entsize"] or (24 if img.is64 else 16)
    count = sym["size"] // entsize
    symbols = []
    for i in range(1, count):  # entry 0 is the null symbol
        off = sym["offset"] + i * entsize
        if img.is64:
            name_i, info, _, shndx, _, _ = img.unpack("IBBHQQ", off, "symbol")
        else:
            name_i, _, _, info, _, shndx = img.unpack("IIIBBH", off, "symbol")
        version, vfile, hidden = None, None, False
        if versym is not None:
            (v,) = img.unpack("H", versym["offset"] + 2 * i, "symbol version")
            hidden = bool(v & 0x8000)
            v &= 0x7FFF
            if v in need_idx:
                version, vfile = need_idx[v]
            elif v in def_idx:
                version = def_idx[v]
        symbols.append(DynamicSymbol(
            name=img.cstring(strtab, name_i, "symbol"),
            defined=shndx != SHN_UNDEF,
            binding=_BINDINGS.get(info >> 4, str(info >> 4)),
            kind=_KINDS.get(info & 0xF, str(info & 0xF)),
            version=version, version_file=vfile, hidden_version=hidden))
    soname, needed = _dynamic(img, secs)
    return DynamicInfo(
        path=path, soname=soname, needed=tuple(needed),
        symbols=tuple(symbols),
        version_needs={k: tuple(v) for k, v in need_files.items()},
        version_defs=tuple(sorted(set(def_idx.values()))))


def undefined_symbol_names(path: str) -> List[str]:
    """Sorted names a library imports (like `nm -D --undefined-only`)."""
    return sorted({s.name for s in read_dynamic(path).undefined()})


def exported_symbol_names(path: str) -> List[str]:
    """Sorted names a library defines for others (like `nm -D --defined-only`)."""
    return sorted({s.name for s in read_dynamic(path).exported()})
