"""The host library (libaotrun_host.so) through ctypes: where it is found,
the C structs of aotrun_plugin.h / aotrun_host.h and every prototype."""

import ctypes
import os
import threading
from ctypes import (POINTER, Structure, c_char_p, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_void_p)

from . import errors
from ._dlpack import DLDataType, DLManagedTensor, DLTensor

LIBRARY_NAME = "libaotrun_host.so"
ENV_LIBRARY = "AOTRUN_HOST_LIBRARY"

ABI_VERSION_MAJOR = 1
ABI_VERSION_MINOR = 1  # the aotrun_plugin.h this binding mirrors
ABI_VERSION = (ABI_VERSION_MAJOR << 16) | ABI_VERSION_MINOR
MAX_DIMS = 16
DYNAMIC_DIM = -1
IO_INPUT, IO_OUTPUT = 0, 1
OPTION_BOOL, OPTION_INT, OPTION_STRING = 1, 2, 3
LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR = 0, 1, 2, 3
EXECUTE_ASYNC = 1


class KeyValue(Structure):
    _fields_ = [("key", c_char_p), ("value", c_char_p)]


class Option(Structure):
    _fields_ = [
        ("key", c_char_p),
        ("type", c_int32),
        ("bool_value", c_int32),
        ("int_value", c_int64),
        ("string_value", c_char_p),
    ]


class IoInfo(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("ndim", c_int32),
        ("name", c_char_p),
        ("dtype", DLDataType),
        ("shape", c_int64 * MAX_DIMS),
    ]


class ExecuteArgs(Structure):
    """aotrun_execute_args (ABI 1.1)."""
    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("inputs", POINTER(DLTensor)),
        ("num_inputs", c_size_t),
        ("outputs", POINTER(DLTensor)),
        ("num_outputs", c_size_t),
        ("stream", c_void_p),
        ("managed_outputs", POINTER(POINTER(DLManagedTensor))),
        ("too_small_output", c_int64),
        ("needed_ndim", c_int32),
        ("reserved_", c_int32),
        ("needed_shape", c_int64 * MAX_DIMS),
    ]


# aotrun_backend_api through ABI 1.1, every function pointer as void*: the
# binding only reads struct_size and whether a member is set (it calls the
# plugin through the host library). Members of 1.0 first, then of 1.1.
BACKEND_API_MEMBERS_1_0 = (
    "get_name", "is_available", "init", "execute", "destroy", "set_option",
    "get_option", "get_num_io", "get_io_info", "last_error")
BACKEND_API_MEMBERS_1_1 = (
    "get_extension", "backend_data", "is_available_ex", "init_ex",
    "set_backend_option", "get_backend_option", "get_info",
    "get_device_count", "get_device_info", "can_run", "execute_ex",
    "synchronize", "deinit")


class BackendApi(Structure):
    _fields_ = [("abi_version", c_uint32), ("struct_size", c_uint32)] + [
        (name, c_void_p)
        for name in BACKEND_API_MEMBERS_1_0 + BACKEND_API_MEMBERS_1_1]

    def can(self, member):
        """AOTRUN_TABLE_CAN: struct_size covers the member's last byte and
        it is set."""
        field = getattr(BackendApi, member)
        return (field.offset + field.size <= self.struct_size and
                getattr(self, member) is not None)


GET_NAMED_DATA = ctypes.CFUNCTYPE(c_int32, c_void_p, c_char_p,
                                  POINTER(c_void_p), POINTER(c_size_t),
                                  POINTER(c_void_p))
RELEASE_NAMED_DATA = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)


class HostApi(Structure):
    _fields_ = [
        ("abi_version", c_uint32),
        ("struct_size", c_uint32),
        ("ctx", c_void_p),
        ("log", c_void_p),
        ("get_named_data", GET_NAMED_DATA),
        ("release_named_data", RELEASE_NAMED_DATA),
        ("alloc", c_void_p),
        ("free", c_void_p),
    ]


_P = c_void_p  # opaque handles
_S = c_int32   # aotrun_status

_PROTOTYPES = {
    "aotrun_host_last_error": (c_char_p, []),
    "aotrun_registry_create": (_S, [POINTER(_P)]),
    "aotrun_registry_destroy": (_S, [_P]),
    "aotrun_registry_load": (_S, [_P, c_char_p, POINTER(_P)]),
    "aotrun_registry_count": (c_size_t, [_P]),
    "aotrun_registry_at": (_P, [_P, c_size_t]),
    "aotrun_registry_find": (_S, [_P, c_char_p, POINTER(_P)]),
    "aotrun_backend_name": (c_char_p, [_P]),
    "aotrun_backend_path": (c_char_p, [_P]),
    "aotrun_backend_abi_version": (c_uint32, [_P]),
    "aotrun_backend_is_available": (c_int, [_P, c_char_p, c_size_t]),
    "aotrun_backend_set_option": (_S, [_P, POINTER(Option)]),
    "aotrun_host_method_open": (_S, [_P, c_char_p, _P, c_void_p, c_size_t,
                                     POINTER(KeyValue), c_size_t,
                                     POINTER(_P)]),
    "aotrun_host_method_close": (None, [_P]),
    "aotrun_host_method_execute": (_S, [_P, POINTER(DLTensor), c_size_t,
                                        POINTER(DLTensor), c_size_t]),
    "aotrun_host_method_num_io": (_S, [_P, c_int32, POINTER(c_size_t)]),
    "aotrun_host_method_io_info": (_S, [_P, c_int32, c_size_t,
                                        POINTER(IoInfo)]),
    "aotrun_host_method_set_option": (_S, [_P, POINTER(Option)]),
    "aotrun_host_method_swap_backend": (_S, [_P, c_char_p]),
    "aotrun_host_method_backend": (_P, [_P]),
    "aotrun_log_level_parse": (_S, [c_char_p, POINTER(c_int32)]),
    "aotrun_program_dir_open": (_S, [c_char_p, POINTER(_P)]),
    "aotrun_program_dir_close": (None, [_P]),
    "aotrun_program_dir_host_api": (POINTER(HostApi), [_P]),
    "aotrun_program_dir_path": (c_char_p, [_P]),
    "aotrun_program_dir_set_log_level": (None, [_P, c_int32]),
    "aotrun_program_dir_num_mapped": (c_size_t, [_P]),
}
# Newer than the first host library: used only when present.
_OPTIONAL = {
    "aotrun_backend_table": (POINTER(BackendApi), [_P]),
    "aotrun_host_method_execute_ex": (_S, [_P, POINTER(ExecuteArgs)]),
    "aotrun_host_method_synchronize": (_S, [_P]),
    "aotrun_backend_get_option": (_S, [_P, c_char_p, POINTER(Option)]),
    "aotrun_host_method_get_option": (_S, [_P, c_char_p, POINTER(Option)]),
}


def _checkout_root():
    """The repository root when this package runs from a source checkout
    (python/aotrun/ inside it), else None."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(root, "plugin_api", "aotrun_host.h")):
        return root
    return None


def bazel_bin_dirs():
    """Bazel output directories that may hold the built libraries: the
    checkout's and the current directory's (.bazel-links/bin is the
    project's --symlink_prefix, bazel-bin the default), $AOTRUN_BAZEL_BIN
    first."""
    dirs = []
    if os.environ.get("AOTRUN_BAZEL_BIN"):
        dirs.append(os.environ["AOTRUN_BAZEL_BIN"])
    for root in (_checkout_root(), os.getcwd()):
        if root:
            for link in (".bazel-links/bin", "bazel-bin"):
                dirs.append(os.path.join(root, link))
    seen, out = set(), []
    for d in dirs:
        key = os.path.realpath(d)
        if key not in seen and os.path.isdir(d):
            seen.add(key)
            out.append(d)
    return out


def package_lib_dir():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def library_candidates(path=None):
    """Where the host library is looked for, in order: the argument,
    $AOTRUN_HOST_LIBRARY, next to the package (aotrun/lib/), the Bazel
    output (install/libaotrun_host.so), then the dynamic loader's search
    path (an installed libaotrun_host.so)."""
    if path:
        return [path]
    if os.environ.get(ENV_LIBRARY):
        return [os.environ[ENV_LIBRARY]]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(package_lib_dir(), LIBRARY_NAME),
           os.path.join(here, LIBRARY_NAME)]
    out += [os.path.join(d, "install", LIBRARY_NAME)
            for d in bazel_bin_dirs()]
    out.append(LIBRARY_NAME)  # LD_LIBRARY_PATH, ld.so.cache
    return out


class Host:
    """The loaded host library with its prototypes set."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        self.path = path
        for name, (res, args) in _PROTOTYPES.items():
            fn = getattr(self.lib, name)
            fn.restype, fn.argtypes = res, args
        for name, (res, args) in _OPTIONAL.items():
            fn = getattr(self.lib, name, None)
            if fn is not None:
                fn.restype, fn.argtypes = res, args

    def has(self, name):
        return getattr(self.lib, name, None) is not None

    def last_error(self):
        msg = self.lib.aotrun_host_last_error()
        return msg.decode("utf-8", "replace") if msg else ""

    def check(self, status):
        """Raises the aotrun.Error subclass of a failed status with the
        host's message (read at once, on this thread)."""
        if status != errors.OK:
            raise errors.error_for(status, self.last_error())


_hosts = {}
_hosts_lock = threading.Lock()


def load(path=None):
    """The host library (loaded once per resolved path)."""
    tried = []
    for cand in library_candidates(path):
        explicit = bool(path) or bool(os.environ.get(ENV_LIBRARY))
        bare = os.sep not in cand
        if not bare and not os.path.exists(cand):
            tried.append(cand + " (no such file)")
            if explicit:
                break
            continue
        key = cand if bare else os.path.realpath(cand)
        with _hosts_lock:
            if key in _hosts:
                return _hosts[key]
            try:
                host = Host(cand)
            except OSError as e:
                tried.append("%s (%s)" % (cand, e))
                if explicit:
                    break
                continue
            _hosts[key] = host
            return host
    raise errors.AccessFailedError(
        "cannot load the aotrun host library %s; tried: %s. Build it with "
        "`bazel build //install:libaotrun_host.so`, or set $%s or pass "
        "host_library=PATH" % (LIBRARY_NAME, "; ".join(tried), ENV_LIBRARY))
