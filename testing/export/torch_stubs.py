"""Makes `import torch` work on a CPU-only CI machine with the PyPI CUDA wheel.

PyPI's only Linux x86_64 torch wheel is the CUDA build; its nvidia-* wheels
add gigabytes. The exporter's CPU tests need torch.export and, at most, CPU
AOTInductor, so the wheel is installed with --no-deps and every shared
library its binaries need but this machine lacks (nvshmem, cuSPARSELt,
cuFile, libcuda...) is replaced by an empty stub library that defines the
imported names (with their symbol versions). Nothing calls into a stub: no
CUDA device exists here. The CUDA toolkit's libraries at /usr/local/cuda are
used when present; stubs fill in only what is still missing.

Usage: python3 torch_stubs.py SITE_PACKAGES STUB_DIR [EXTRA_LIB_DIR...]
prints the LD_LIBRARY_PATH to use.
"""

import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "backend_cuda", "export"))
from aotrun_export.elf_symbols import ElfError, read_dynamic  # noqa: E402


def _system_libs():
    """soname -> path from the dynamic linker's cache."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True,
                         text=True).stdout
    libs = {}
    for line in out.splitlines()[1:]:
        if "=>" in line and "x86-64" in line:
            name = line.split()[0]
            libs.setdefault(name, line.split("=>")[1].strip())
    return libs


def _find(name, dirs, system):
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return system.get(name)


def plan_stubs(binaries, dirs):
    """Returns {missing soname: {symbol: version or None}} for `binaries`."""
    system = _system_libs()
    missing, found, seen = {}, {}, set()
    todo = list(binaries)
    while todo:  # the closure of found libraries, to know what they define
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            info = read_dynamic(path)
        except ElfError:
            continue
        found[path] = info
        for need in info.needed:
            p = _find(need, dirs + [os.path.dirname(path)], system)
            if p is None:
                missing.setdefault(need, {})
            else:
                todo.append(os.path.realpath(p))
    defined = set()
    for info in found.values():
        defined.update(s.name for s in info.exported())
    for info in found.values():
        for s in info.undefined():
            if s.binding == "weak":
                continue
            if s.version_file in missing:
                missing[s.version_file][s.name] = s.version
            elif s.version_file is None and s.name not in defined:
                for syms in missing.values():  # owner unknown: stub everywhere
                    syms.setdefault(s.name, None)
    return missing


def build_stub(soname, symbols, stub_dir):
    src = os.path.join(stub_dir, soname + ".c")
    with open(src, "w") as f:
        f.write("/* generated stub: no device here; returns an error code (999) if ever called */\n")
        for name in sorted(symbols):
            f.write(f"int {name}(void) {{ return 999; }}\n")
    cmd = ["gcc", "-shared", "-fPIC", "-w", "-o",
           os.path.join(stub_dir, soname), src, f"-Wl,-soname,{soname}"]
    versions = sorted({v for v in symbols.values() if v})
    if versions:
        vs = os.path.join(stub_dir, soname + ".map")
        with open(vs, "w") as f:
            for i, v in enumerate(versions):
                names = [n for n, ver in symbols.items()
                         if ver == v or (ver is None and i == 0)]
                f.write(f"{v} {{ global: {'; '.join(sorted(names))}; }};\n")
        cmd.append(f"-Wl,--version-script={vs}")
    subprocess.run(cmd, check=True)


def main(argv):
    site, stub_dir, extra = argv[1], argv[2], argv[3:]
    torch_lib = os.path.join(site, "torch", "lib")
    nvidia = sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))
    dirs = [torch_lib] + nvidia + [d for d in extra if os.path.isdir(d)]
    binaries = sorted(glob.glob(os.path.join(torch_lib, "*.so*")) +
                      glob.glob(os.path.join(site, "torch", "_C*.so")))
    os.makedirs(stub_dir, exist_ok=True)
    for soname, syms in sorted(plan_stubs(binaries, dirs).items()):
        build_stub(soname, syms, stub_dir)
        print(f"stub {soname}: {len(syms)} symbols", file=sys.stderr)
    print(":".join([d for d in extra if os.path.isdir(d)] + [stub_dir]))


if __name__ == "__main__":
    main(sys.argv)
