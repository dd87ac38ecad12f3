"""aotrun-export: the ahead-of-time side of aotrun.

Exports nn.Module methods (or saved torch.export programs) with
torch.export, applies the exporter passes (passes/, docs/exporter-passes.md),
compiles each with AOTInductor into a model library aotrun's shim can serve,
and writes an aotrun program directory (docs/program-format.md). Command
line: python3 -m aotrun_export SOURCE OUT_DIR (__main__.py). The modules that do not need torch
(ELF reader, shim check, safetensors writer, wrapper.cpp parser) import
without it.
"""

__version__ = "0.1"


def export_program(*args, **kwargs):
    """See aotrun_export.exporter.export_program (imports torch lazily)."""
    from .exporter import export_program as _export
    return _export(*args, **kwargs)
