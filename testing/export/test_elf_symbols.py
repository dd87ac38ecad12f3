"""The pure-Python ELF reader against libraries built here with gcc."""

import pytest

from aotrun_export.elf_symbols import (ElfError, exported_symbol_names,
                                       read_dynamic, undefined_symbol_names)

LIB = r"""
#include <stdlib.h>
extern int aoti_torch_needed_one(int);
extern int aoti_torch_needed_two(void);
extern int weak_optional(void) __attribute__((weak));
static int helper(int x) { return x + 1; }
int exported_function(int x) {
  return helper(aoti_torch_needed_one(x)) + aoti_torch_needed_two() +
         (getenv("AOTRUN_TEST") != NULL) +
         (weak_optional ? weak_optional() : 0);
}
int exported_data = 7;
__attribute__((visibility("hidden"))) int hidden_function(void) { return 3; }
"""


def test_undefined_and_defined_symbols(build_so):
    so = build_so("libt.so", LIB, "-Wl,-soname,libt.so.1")
    und = undefined_symbol_names(so)
    assert "aoti_torch_needed_one" in und
    assert "aoti_torch_needed_two" in und
    assert "getenv" in und
    assert "weak_optional" in und
    exp = exported_symbol_names(so)
    assert "exported_function" in exp and "exported_data" in exp
    assert "helper" not in exp and "hidden_function" not in exp
    assert "aoti_torch_needed_one" not in exp


def test_details_soname_needed_versions_binding(build_so):
    so = build_so("libt.so", LIB, "-Wl,-soname,libt.so.1")
    info = read_dynamic(so)
    assert info.soname == "libt.so.1"
    assert "libc.so.6" in info.needed
    by_name = {s.name: s for s in info.symbols}
    assert by_name["weak_optional"].binding == "weak"
    assert by_name["exported_function"].kind == "func"
    assert by_name["exported_data"].kind == "object"
    assert by_name["aoti_torch_needed_one"].version is None
    # A libc import carries its GLIBC version and the file it comes from.
    getenv = next(s for s in info.undefined() if s.name == "getenv")
    assert getenv.version_file == "libc.so.6"
    assert getenv.version.startswith("GLIBC_")
    assert "libc.so.6" in info.version_needs


def test_defined_versions(build_so, tmp_path):
    vs = tmp_path / "v.map"
    vs.write_text("MYLIB_1 { global: exported_function; local: *; };\n")
    so = build_so("libv.so", LIB, f"-Wl,--version-script={vs}")
    info = read_dynamic(so)
    assert info.version_defs == ("MYLIB_1",)
    f = next(s for s in info.symbols if s.name == "exported_function")
    assert f.defined and f.version == "MYLIB_1"
    assert "exported_data" not in exported_symbol_names(so)  # local: *


def test_system_library_matches_expectations():
    import os
    path = "/lib/x86_64-linux-gnu/libc.so.6"
    if not os.path.exists(path):
        pytest.skip("no x86_64 libc at the Debian path")
    exp = exported_symbol_names(path)
    assert "malloc" in exp and "printf" in exp


@pytest.mark.parametrize("content,needle", [
    (b"", "empty file"),
    (b"not an elf file at all", "bad magic"),
    (b"\x7fELF\x03\x01" + b"\0" * 10, "unknown ELF class 3"),
    (b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\0" * 8, "truncated ELF header"),
])
def test_bad_files_raise_clear_errors(tmp_path, content, needle):
    p = tmp_path / "bad.so"
    p.write_bytes(content)
    with pytest.raises(ElfError, match=needle) as e:
        read_dynamic(str(p))
    assert str(p) in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(ElfError, match="cannot read"):
        read_dynamic(str(tmp_path / "nope.so"))


def test_truncated_library(build_so, tmp_path):
    so = build_so("libt.so", LIB)
    data = open(so, "rb").read()
    cut = tmp_path / "cut.so"
    cut.write_bytes(data[: len(data) // 3])  # section headers are at the end
    with pytest.raises(ElfError) as e:
        read_dynamic(str(cut))
    assert "cut.so" in str(e.value)
