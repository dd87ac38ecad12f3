"""aotrun from Python: run aotrun programs (PyTorch models compiled ahead of
time by AOTInductor) through the aotrun host library's C API, with ctypes.

    import aotrun, numpy as np
    with aotrun.Program("bazel-bin/testing/example_program",
                        backend="cpu_ref") as prog:
        print(prog.method("forward").inputs)
        y, calls = prog.run("forward", np.ones((2, 4), np.float32))
        print(np.from_dlpack(y))

Tensors cross as DLPack: torch, CuPy and NumPy inputs are passed without a
copy (device tensors stay on the device), outputs are aotrun.Tensor objects
for torch.from_dlpack / numpy.from_dlpack. Errors are aotrun.Error
subclasses carrying the host's message. See docs/python.md.
"""

from ._dlpack import live_exports
from ._lib import ABI_VERSION, ENV_LIBRARY, library_candidates
from ._program import BenchResult, Method, Program, TensorInfo, find_plugin
from ._tensor import Tensor
from .errors import (AccessFailedError, ClosedError, Error, InternalError,
                     InvalidArgumentError, NotFoundError, NotSupportedError,
                     OutOfMemoryError, OutputTooSmallError,
                     VersionMismatchError)

__version__ = "0.1.0"


def host_library(path=None):
    """Path of the host library this process uses (loading it if needed)."""
    from . import _lib
    return _lib.load(path).path


def open(path, **kwargs):  # noqa: A001  (like io.open: a Program)
    """aotrun.Program(path, **kwargs)."""
    return Program(path, **kwargs)


__all__ = [
    "ABI_VERSION", "AccessFailedError", "BenchResult", "ClosedError",
    "ENV_LIBRARY", "Error", "InternalError", "InvalidArgumentError",
    "Method", "NotFoundError", "NotSupportedError", "OutOfMemoryError",
    "OutputTooSmallError",
    "Program", "Tensor", "TensorInfo", "VersionMismatchError",
    "find_plugin", "host_library", "library_candidates", "live_exports",
    "open",
]
