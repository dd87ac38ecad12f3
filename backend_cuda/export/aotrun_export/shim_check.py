"""Checks that a compiled model imports only aoti_torch_* functions the
aotrun shim library exports.

The exports come from the shim library itself (its defined dynamic symbols,
read with our ELF reader) or from text files with one name per line
(`#` starts a comment), e.g. testing/shim/exports.txt.
"""

import os
from typing import Iterable, List, Sequence, Set

from .elf_symbols import ElfError, read_dynamic

SHIM_PREFIX = "aoti_torch_"


class MissingShimFunctions(RuntimeError):
    """The model needs shim functions that libaotrun_shim.so lacks."""

    def __init__(self, library: str, missing: Sequence[str], method: str = ""):
        self.library = library
        self.missing = list(missing)
        self.method = method
        who = f"method '{method}' ({library})" if method else library
        lines = "\n".join(f"  {name}" for name in self.missing)
        super().__init__(
            f"{who} imports {len(self.missing)} aoti_torch_* function(s) the "
            f"aotrun shim library does not export:\n{lines}\n"
            "Implement them in shim_lib/ (or change the model / compile "
            "options so Inductor generates the code itself).")


def model_imports(library: str) -> List[str]:
    """Sorted aoti_torch_* names the model library leaves undefined."""
    return sorted({s.name for s in read_dynamic(library).undefined()
                   if s.name.startswith(SHIM_PREFIX)})


def _names_from_text(path: str) -> Set[str]:
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                names.add(line.split()[0])
    return names


def load_shim_exports(sources: Iterable[str]) -> Set[str]:
    """Union of the names exported by each source: an ELF shared library
    (by content, whatever its name) or a text file of names."""
    names: Set[str] = set()
    for src in sources:
        if not os.path.isfile(src):
            raise FileNotFoundError(f"shim exports: no such file '{src}'")
        with open(src, "rb") as f:
            is_elf = f.read(4) == b"\x7fELF"
        if is_elf:
            try:
                names.update(s.name for s in read_dynamic(src).exported())
            except ElfError as e:
                raise ValueError(f"shim exports: {e}") from e
        else:
            names.update(_names_from_text(src))
    return names


def missing_shim_functions(library: str, exports: Set[str]) -> List[str]:
    return [n for n in model_imports(library) if n not in exports]


def check_shim_coverage(library: str, exports: Set[str],
                        method: str = "") -> List[str]:
    """Returns the model's aoti_torch_* imports; raises MissingShimFunctions
    listing every one the shim lacks."""
    missing = missing_shim_functions(library, exports)
    if missing:
        raise MissingShimFunctions(library, missing, method)
    return model_imports(library)


PROXY_EXECUTOR = "aoti_torch_proxy_executor_call_function"


class ProxyExecutorCalls(RuntimeError):
    """The model calls ops through libtorch's proxy executor, which aotrun
    does not have (the shim's stub refuses every call)."""

    def __init__(self, library: str, ops: Sequence[str], method: str = ""):
        self.library = library
        self.ops = list(ops)
        self.method = method
        who = f"method '{method}' ({library})" if method else library
        lines = "\n".join(f"  {op}" for op in self.ops) or "  (unnamed)"
        super().__init__(
            f"{who} calls {len(self.ops)} op(s) through libtorch's proxy "
            f"executor ({PROXY_EXECUTOR}), which aotrun does not have:\n"
            f"{lines}\nThese ops have no AOTInductor C shim and no lowering; "
            "decompose them before compiling (see docs/exporter-passes.md) "
            "or change the model.")


def check_proxy_executor(imports: Sequence[str], ops: Sequence[str],
                         library: str, method: str = "") -> None:
    """Raises ProxyExecutorCalls when the library imports the proxy
    executor entry point (ops: its extern nodes, for the message)."""
    if PROXY_EXECUTOR in imports:
        raise ProxyExecutorCalls(library, ops, method)
