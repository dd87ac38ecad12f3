"""ABI 1.1 execute_ex from Python: the caller's stream handle,
backend-allocated outputs (DLManagedTensor with a deleter, handed on as
aotrun.Tensor whose __dlpack__ exports capsules that keep it alive) and the
too-small report (OutputTooSmallError with the needed shape)."""

import ctypes
import threading
from ctypes import byref, c_void_p

from . import _dlpack as dl
from . import _lib
from . import _tensor
from . import errors

_DELETER = ctypes.CFUNCTYPE(None, c_void_p)


def stream_handle(stream):
    """The device stream handle (an int) of `stream`: an int (a
    cudaStream_t as an integer), an object with ``__cuda_stream__`` (the
    CUDA stream protocol: a method returning (version, handle)) or with
    ``.cuda_stream`` (torch.cuda.Stream, cupy.cuda.Stream); None for None.
    """
    if stream is None:
        return None
    if isinstance(stream, bool):
        raise TypeError("stream must be a stream handle, not a bool")
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        value = proto() if callable(proto) else proto
        if isinstance(value, tuple) and len(value) == 2:
            return int(value[1])
        raise TypeError("__cuda_stream__ of %s returned %r, not (version, "
                        "handle)" % (type(stream).__name__, value))
    handle = getattr(stream, "cuda_stream", None)
    if handle is not None:
        return int(handle)
    raise TypeError("stream must be an int handle or an object with "
                    "__cuda_stream__ or .cuda_stream (torch.cuda.Stream), "
                    "not %s" % type(stream).__name__)


def backend_can(host, handle, member):
    """Whether the method's current backend table has `member` (and the
    host library can tell: ABI 1.1)."""
    if not host.has("aotrun_backend_table"):
        return False
    backend = host.lib.aotrun_host_method_backend(handle)
    table = host.lib.aotrun_backend_table(backend) if backend else None
    return bool(table) and table.contents.can(member)


def _delete(address):
    mt = dl.DLManagedTensor.from_address(address)
    if mt.deleter:
        _DELETER(mt.deleter)(address)


_live_lock = threading.Lock()
_live = [0]


def live_managed():
    """Number of backend-allocated outputs not yet handed back to their
    deleter (for leak checks in tests)."""
    with _live_lock:
        return _live[0]


class ManagedOwner:
    """Owns one backend-allocated DLManagedTensor and calls its deleter
    once, when this object is collected (the ABI allows any thread, but
    not after the plugin is unloaded: `library` keeps it loaded)."""

    __slots__ = ("_address", "_library", "__weakref__")

    def __init__(self, address, library):
        self._address = address
        # Keeps the plugin (the deleter) loaded: acquire/release counts.
        self._library = library.acquire()
        with _live_lock:
            _live[0] += 1

    def release(self):
        address, self._address = self._address, None
        if address:
            _delete(address)
            with _live_lock:
                _live[0] -= 1
            library, self._library = self._library, None
            library.release()

    def __del__(self):
        self.release()


def release_managed(call):
    """Deletes every backend-allocated output still held by `call`."""
    for i in call.managed_idx:
        if call.managed[i]:
            _delete(ctypes.addressof(call.managed[i].contents))
            call.managed[i] = None


def take_managed(call, i, library):
    """Output i as an aotrun.Tensor owning the backend's tensor; `library`
    is kept referenced until the deleter has run."""
    address = ctypes.addressof(call.managed[i].contents)
    call.managed[i] = None
    owner = ManagedOwner(address, library)
    t = dl.DLManagedTensor.from_address(address).dl_tensor
    shape = [int(t.shape[d]) for d in range(t.ndim)]
    device = (t.device.device_type, t.device.device_id)
    return _tensor.Tensor(None, dl.dtype_name(t.dtype), shape, device,
                          raw=owner, data=(t.data or 0) + t.byte_offset)


def execute_ex(host, handle, call):
    """One aotrun_host_method_execute_ex with `call`'s tensors, stream and
    backend-allocated outputs. OutputTooSmallError carries ``output`` and
    ``needed_shape``."""
    if not host.has("aotrun_host_method_execute_ex"):
        raise errors.NotSupportedError(
            "this host library (%s) has no aotrun_host_method_execute_ex "
            "(ABI 1.1): no stream or backend-allocated outputs" % host.path)
    args = _lib.ExecuteArgs()
    args.struct_size = ctypes.sizeof(args)
    args.inputs = call.inputs
    args.num_inputs = call.num_inputs
    args.outputs = call.outputs
    args.num_outputs = call.num_outputs
    args.stream = call.stream
    if call.managed_idx:
        args.managed_outputs = call.managed
    status = host.lib.aotrun_host_method_execute_ex(handle, byref(args))
    if status == errors.OK:
        return
    err = errors.error_for(status, host.last_error())
    if status == errors.ERR_OUTPUT_TOO_SMALL and args.too_small_output >= 0:
        err.output = int(args.too_small_output)
        err.needed_shape = tuple(int(args.needed_shape[d])
                                 for d in range(args.needed_ndim))
    raise err


def to_host(tensor):
    """A backend-allocated output in device memory copied to the host
    (torch, else CuPy), for a call whose outputs were asked on the CPU;
    the backend's tensor is freed once copied. Without either library the
    device tensor is returned as it is."""
    if tensor._device[0] == dl.kDLCPU:
        return tensor
    torch = _tensor._torch()
    if torch is not None:
        t = torch.from_dlpack(tensor).cpu()
        return _tensor.Tensor(t, tensor.dtype, tensor.shape, (dl.kDLCPU, 0),
                              data=t.data_ptr())
    cp = _tensor._cupy()
    if cp is not None and tensor.dtype != "bfloat16":
        arr = cp.from_dlpack(tensor).get()
        return _tensor.Tensor(arr, tensor.dtype, tensor.shape,
                              (dl.kDLCPU, 0),
                              data=arr.__array_interface__["data"][0])
    return tensor
