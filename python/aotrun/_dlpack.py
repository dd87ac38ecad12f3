"""DLPack with ctypes: the C structs, dtypes, importing a producer's capsule
into a DLTensor (no copy) and exporting memory as a capsule of our own.

Imported capsules are never renamed to "used_dltensor": the caller keeps the
capsule alive for the C call, and when it is released the producer's own
capsule destructor calls the deleter (the protocol's rule for a capsule that
was not consumed). So the producer keeps owning the memory throughout.
"""

import ctypes
import threading
from ctypes import (POINTER, Structure, c_char_p, c_int, c_int32, c_int64,
                    c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)

# DLDeviceType
kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLCUDAManaged = 13

DEVICE_NAMES = {kDLCPU: "cpu", kDLCUDA: "cuda", kDLCUDAHost: "cuda_host",
                kDLCUDAManaged: "cuda_managed"}

# DLDataTypeCode
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 4, 5, 6

# Versioned tensors' flags.
DLPACK_FLAG_BITMASK_READ_ONLY = 1


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
    ]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


# ---- dtypes (torch names, as in manifest.json) -----------------------------

DTYPES = {
    "bool": (kDLBool, 8),
    "int8": (kDLInt, 8),
    "int16": (kDLInt, 16),
    "int32": (kDLInt, 32),
    "int64": (kDLInt, 64),
    "uint8": (kDLUInt, 8),
    "uint16": (kDLUInt, 16),
    "uint32": (kDLUInt, 32),
    "uint64": (kDLUInt, 64),
    "float16": (kDLFloat, 16),
    "float32": (kDLFloat, 32),
    "float64": (kDLFloat, 64),
    "bfloat16": (kDLBfloat, 16),
    "complex64": (kDLComplex, 64),
    "complex128": (kDLComplex, 128),
}
_BY_CODE = {v: k for k, v in DTYPES.items()}


def dtype_name(dt):
    """'float32' for a DLDataType (or code/bits/lanes text if unknown)."""
    name = _BY_CODE.get((dt.code, dt.bits)) if dt.lanes == 1 else None
    return name or "dtype(code=%d, bits=%d, lanes=%d)" % (dt.code, dt.bits,
                                                         dt.lanes)


def make_dtype(name):
    code, bits = DTYPES[name]
    return DLDataType(code, bits, 1)


def itemsize(name):
    return DTYPES[name][1] // 8


def device_str(device_type, device_id):
    name = DEVICE_NAMES.get(device_type, "device%d" % device_type)
    return name if device_type == kDLCPU else "%s:%d" % (name, device_id)


def parse_device(device):
    """'cpu', 'cuda', 'cuda:1', a (type, id) pair or an object with
    .type/.index (torch.device) -> (device_type, device_id)."""
    if isinstance(device, tuple) and len(device) == 2:
        return int(device[0]), int(device[1])
    if hasattr(device, "type") and hasattr(device, "index"):  # torch.device
        device = "%s:%d" % (device.type, device.index or 0)
    text = str(device)
    kind, _, index = text.partition(":")
    types = {v: k for k, v in DEVICE_NAMES.items()}
    if kind not in types or (index and not index.isdigit()):
        raise ValueError("unknown device %r (use 'cpu', 'cuda' or 'cuda:N')"
                         % (device,))
    return types[kind], int(index or 0)


# ---- Python C API through ctypes (private prototypes: we never change the
# argtypes of ctypes.pythonapi's shared function objects) --------------------

_api = ctypes.pythonapi
_GetName = ctypes.PYFUNCTYPE(c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", _api))
_GetPointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, c_char_p)(
    ("PyCapsule_GetPointer", _api))
_IsValidRaw = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(
    ("PyCapsule_IsValid", _api))
_GetPointerRaw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(
    ("PyCapsule_GetPointer", _api))
_New = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_char_p, c_void_p)(
    ("PyCapsule_New", _api))

_DLTENSOR = b"dltensor"
_VERSIONED = b"dltensor_versioned"


class Imported:
    """A producer's tensor seen as a DLTensor. Keep this object alive for as
    long as the C side may touch `tensor` (it holds the capsule)."""

    __slots__ = ("capsule", "tensor", "readonly", "source")

    def __init__(self, capsule, tensor, readonly, source):
        self.capsule = capsule
        self.tensor = tensor
        self.readonly = readonly
        self.source = source


def import_capsule(capsule, source=None):
    """DLTensor (a copy of the struct; the data, shape and strides stay the
    producer's) from a "dltensor" or "dltensor_versioned" capsule."""
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError("__dlpack__() returned %s, not a PyCapsule"
                        % type(capsule).__name__)
    name = _GetName(capsule)
    t = DLTensor()
    if name == _DLTENSOR:
        ptr = _GetPointer(capsule, _DLTENSOR)
        ctypes.memmove(ctypes.addressof(t), ptr, ctypes.sizeof(DLTensor))
        readonly = False
    elif name == _VERSIONED:
        ptr = _GetPointer(capsule, _VERSIONED)
        mt = DLManagedTensorVersioned.from_address(ptr)
        ctypes.memmove(ctypes.addressof(t),
                       ptr + DLManagedTensorVersioned.dl_tensor.offset,
                       ctypes.sizeof(DLTensor))
        readonly = bool(mt.flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    else:
        raise ValueError("DLPack capsule named %r (already consumed?)"
                         % (name,))
    return Imported(capsule, t, readonly, source)


def _array_interface_tensor(arr):
    """DLTensor over a NumPy array through __array_interface__ (used for
    read-only arrays, whose __dlpack__ NumPy < 2 refuses); no copy."""
    name = arr.dtype.name
    if name not in DTYPES or arr.dtype.byteorder == ">":
        raise TypeError("NumPy dtype %s has no DLPack equivalent" % arr.dtype)
    t = DLTensor()
    t.data = arr.__array_interface__["data"][0]
    t.device = DLDevice(kDLCPU, 0)
    t.ndim = arr.ndim
    t.dtype = make_dtype(name)
    shape = (c_int64 * max(arr.ndim, 1))(*arr.shape)
    strides = (c_int64 * max(arr.ndim, 1))()
    for d, s in enumerate(arr.strides):
        if s % arr.itemsize:
            raise ValueError("stride %d of a NumPy array is not a multiple "
                             "of its item size" % d)
        strides[d] = s // arr.itemsize
    t.shape = shape
    t.strides = strides
    t.byte_offset = 0
    return Imported((arr, shape, strides), t, True, arr)


def import_tensor(obj):
    """Imports any object with __dlpack__ (torch, CuPy, NumPy, JAX,
    aotrun.Tensor) without copying. Read-only NumPy arrays are seen through
    __array_interface__ (also without a copy)."""
    if hasattr(obj, "__dlpack__"):
        try:
            capsule = obj.__dlpack__()
        except BufferError:
            if type(obj).__module__ == "numpy" and \
                    not obj.flags.writeable:
                return _array_interface_tensor(obj)
            raise
        return import_capsule(capsule, obj)
    raise TypeError("%s does not support DLPack (__dlpack__)"
                    % type(obj).__name__)


def is_compact(t):
    """True when t is C-contiguous (strides NULL or the compact ones)."""
    if not t.strides:
        return True
    step = 1
    for d in range(t.ndim - 1, -1, -1):
        if t.shape[d] != 1 and t.strides[d] != step:
            return False
        step *= t.shape[d]
    return True


# ---- exporting memory we own as a capsule ----------------------------------

_lock = threading.Lock()
_live = {}  # address of a DLManagedTensor -> what keeps it and its data alive


def _release(address):
    with _lock:
        _live.pop(address, None)


@ctypes.CFUNCTYPE(None, c_void_p)
def _deleter(address):  # called by the consumer when it is done
    _release(address)


@ctypes.CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):  # a capsule nobody consumed
    for name in (_DLTENSOR, _VERSIONED):
        if _IsValidRaw(capsule, name):
            _release(_GetPointerRaw(capsule, name))


_DELETER_ADDRESS = ctypes.cast(_deleter, c_void_p).value
_DESTRUCTOR_ADDRESS = ctypes.cast(_capsule_destructor, c_void_p).value


def export_capsule(owner, data, device, dtype, shape, versioned=False):
    """A capsule over `data` (an address) of a contiguous tensor: "dltensor"
    (DLManagedTensor), or with `versioned` "dltensor_versioned"
    (DLManagedTensorVersioned, DLPack 1.0, writable). `owner` (e.g. the
    buffer) stays referenced until the consumer calls the deleter, or the
    capsule is released unconsumed."""
    ndim = len(shape)
    mt = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    shape_arr = (c_int64 * max(ndim, 1))(*shape)
    t = mt.dl_tensor
    t.data = data
    t.device = DLDevice(*device)
    t.ndim = ndim
    t.dtype = make_dtype(dtype)
    t.shape = shape_arr
    t.strides = None
    t.byte_offset = 0
    mt.manager_ctx = None
    mt.deleter = _DELETER_ADDRESS
    if versioned:
        mt.version = DLPackVersion(1, 0)
        mt.flags = 0
    address = ctypes.addressof(mt)
    with _lock:
        _live[address] = (mt, shape_arr, owner)
    return _New(address, _VERSIONED if versioned else _DLTENSOR,
                _DESTRUCTOR_ADDRESS)


def live_exports():
    """Number of exported capsules whose memory is still referenced (for
    leak checks in tests)."""
    with _lock:
        return len(_live)
