"""Output tensors: allocation (NumPy / torch / CuPy / raw memory) and the
aotrun.Tensor wrapper that hands them on through DLPack without a copy."""

import ctypes
import sys

from . import _dlpack as dl
from ._dlpack import kDLCPU, kDLCUDA


def _numpy():
    try:
        import numpy
        return numpy
    except ImportError:
        return None


def _torch(load=True):
    """torch when it is importable (imported only when `load`, since the
    import is slow: CPU outputs use NumPy first)."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    if not load:
        return None
    try:
        import torch
        return torch
    except ImportError:
        return None


def _cupy():
    try:
        import cupy
        return cupy
    except ImportError:
        return None


class _Raw:
    """Host memory without an array library (or for a dtype NumPy lacks,
    such as bfloat16, when torch is absent)."""

    def __init__(self, nbytes):
        # 64 spare bytes so the data can start 64-byte aligned.
        self.buf = ctypes.create_string_buffer(max(nbytes, 1) + 64)
        base = ctypes.addressof(self.buf)
        self.data = base + (-base % 64)


def allocate(dtype, shape, device):
    """Contiguous storage for one output: (backing object, data address).
    The backing object is a NumPy array, torch tensor or CuPy array of
    `dtype` and `shape` when one can hold it, else a _Raw buffer."""
    kind, index = device
    numel = 1
    for s in shape:
        numel *= s
    if kind == kDLCPU:
        np = _numpy()
        if np is not None and dtype != "bfloat16":
            arr = np.empty(shape, dtype=dtype)
            return arr, arr.__array_interface__["data"][0]
        torch = _torch(load=dtype == "bfloat16")
        if torch is not None:
            t = torch.empty(shape, dtype=getattr(torch, dtype))
            return t, t.data_ptr()
        raw = _Raw(numel * dl.itemsize(dtype))
        return raw, raw.data
    if kind == kDLCUDA:
        torch = _torch()
        if torch is not None and torch.cuda.is_available():
            t = torch.empty(shape, dtype=getattr(torch, dtype),
                            device="cuda:%d" % index)
            return t, t.data_ptr()
        cp = _cupy()
        if cp is not None and dtype != "bfloat16":
            with cp.cuda.Device(index):
                arr = cp.empty(shape, dtype=dtype)
            return arr, arr.data.ptr
        raise RuntimeError(
            "cannot allocate a %s output on %s: neither torch (with CUDA) nor "
            "CuPy is importable; pass out=[...] tensors" %
            (dtype, dl.device_str(kind, index)))
    raise ValueError("outputs cannot be allocated on %s; pass out=[...]"
                     % dl.device_str(kind, index))


def view(backing, shape, capacity):
    """`backing` (allocated with `capacity`) seen with the real `shape` the
    backend wrote (smaller for data-dependent dims): its leading elements.
    No copy for NumPy, torch and CuPy."""
    if list(shape) == list(capacity) or isinstance(backing, _Raw):
        return backing
    numel = 1
    for s in shape:
        numel *= s
    return backing.reshape(-1)[:numel].reshape(tuple(shape))


class Tensor:
    """One output of a method call (or any tensor aotrun hands back).

    Zero-copy hand-off: ``torch.from_dlpack(t)``, ``numpy.from_dlpack(t)``,
    ``cupy.from_dlpack(t)`` (``__dlpack__`` / ``__dlpack_device__``). The
    memory is owned by the array object aotrun allocated it with (NumPy on
    the CPU, torch or CuPy on a GPU, or the ``out=`` tensor you passed); it
    lives as long as this wrapper or any consumer of it. ``.array`` is that
    object itself (None for raw memory)."""

    __slots__ = ("_obj", "_raw", "_data", "dtype", "shape", "_device",
                 "__weakref__")

    def __init__(self, obj, dtype, shape, device, raw=None, data=None):
        self._obj = obj
        self._raw = raw
        self._data = data
        self.dtype = dtype
        self.shape = tuple(int(s) for s in shape)
        self._device = device

    @property
    def array(self):
        """The array-library object holding the data (NumPy array, torch
        tensor, CuPy array), or None when aotrun holds raw memory."""
        return self._obj

    @property
    def device(self):
        return dl.device_str(*self._device)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self):
        return self.size * dl.itemsize(self.dtype)

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None,
                   copy=None):
        if dl_device is not None and tuple(dl_device) != tuple(self._device):
            raise BufferError("aotrun.Tensor on %s cannot be exported to "
                              "device %r" % (self.device, dl_device))
        if copy:
            raise BufferError("aotrun.Tensor exports without copies only")
        if self._obj is None:
            versioned = max_version is not None and \
                tuple(max_version)[0] >= 1
            return dl.export_capsule(self._raw, self._data, self._device,
                                     self.dtype, self.shape, versioned)
        kwargs = {}
        if stream is not None:
            kwargs["stream"] = stream
        if max_version is not None:
            kwargs["max_version"] = max_version
        try:
            return self._obj.__dlpack__(**kwargs)
        except TypeError:
            if "max_version" not in kwargs:
                raise
            del kwargs["max_version"]  # an older producer (NumPy < 2)
            return self._obj.__dlpack__(**kwargs)

    def numpy(self):
        """A NumPy array over the same memory (host tensors only)."""
        import numpy
        if self._obj is not None and type(self._obj).__module__ == "numpy":
            return self._obj
        return numpy.from_dlpack(self)

    def torch(self):
        """A torch tensor over the same memory (any device, bfloat16
        included)."""
        import torch
        if self._obj is not None and isinstance(self._obj, torch.Tensor):
            return self._obj
        return torch.utils.dlpack.from_dlpack(self)

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        return "aotrun.Tensor(%s, shape=%s, device=%s)" % (
            self.dtype, list(self.shape), self.device)
