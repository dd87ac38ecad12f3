"""aotrun.Program and aotrun.Method over the host library's C API."""

import ctypes
import json
import os
import sys
import threading
import time
import warnings
from ctypes import byref, c_int32, c_size_t, c_void_p

from . import _dlpack as dl
from . import _execute
from . import _lib
from . import _tensor
from . import errors
from ._dlpack import DLTensor, kDLCPU, kDLCUDA, kDLCUDAManaged

MANIFEST_KEY = "manifest.json"
SHIM_LIBRARY = "libaotrun_shim.so"


def _b(text):
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)


def _s(raw):
    return raw.decode("utf-8", "replace") if raw is not None else None


class TensorInfo:
    """What a method declares for one input or output: ``name``, ``dtype``
    (torch name such as "float32"), ``shape`` (ints for static dims, the
    manifest's symbol such as "s0" for dynamic ones, None when a dynamic dim
    has no symbol) and ``index``."""

    __slots__ = ("index", "name", "dtype", "shape")

    def __init__(self, index, name, dtype, shape):
        self.index, self.name, self.dtype = index, name, dtype
        self.shape = tuple(shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def is_dynamic(self):
        return any(not isinstance(d, int) for d in self.shape)

    def __eq__(self, other):
        return isinstance(other, TensorInfo) and (
            self.index, self.name, self.dtype, self.shape) == (
            other.index, other.name, other.dtype, other.shape)

    def __repr__(self):
        return "TensorInfo(%r, %s, %s)" % (self.name, self.dtype,
                                           list(self.shape))


class BenchResult:
    """Timings of Method.bench in seconds: ``times`` (one per iteration),
    ``mean``, ``median``, ``min``, ``max``, ``p90``; ``*_us`` properties in
    microseconds."""

    def __init__(self, method, times, warmup):
        self.method = method
        self.times = list(times)
        self.warmup = warmup
        s = sorted(self.times)
        self.iterations = len(s)
        # (statistics' answers, without importing it: `import aotrun`
        # stays quick.)
        self.mean = sum(s) / len(s)
        half = len(s) // 2
        self.median = s[half] if len(s) % 2 else (s[half - 1] + s[half]) / 2
        self.min, self.max = s[0], s[-1]
        self.p90 = s[min(len(s) - 1, int(0.9 * len(s)))]

    mean_us = property(lambda self: self.mean * 1e6)
    median_us = property(lambda self: self.median * 1e6)
    min_us = property(lambda self: self.min * 1e6)
    p90_us = property(lambda self: self.p90 * 1e6)

    def __repr__(self):
        return ("BenchResult(%s: %d iterations, median %.1f us, mean %.1f us, "
                "min %.1f us, p90 %.1f us)" % (
                    self.method, self.iterations, self.median_us,
                    self.mean_us, self.min_us, self.p90_us))


# ---- symbolic dims ----------------------------------------------------------

def _eval_dim(expr, bound):
    """Value of a manifest dim: an int, a bound symbol, or an arithmetic
    expression of bound symbols ("2*s0"); None when unknown."""
    if isinstance(expr, int):
        return expr
    if not isinstance(expr, str):
        return None
    if expr in bound:
        return bound[expr]
    import ast  # only for expressions ("2*s0"), planned once per shape
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
           ast.Mod: lambda a, b: a % b}

    def ev(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in bound:
                raise KeyError(n.id)
            return bound[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            return ops[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        raise KeyError(ast.dump(n))

    try:
        return int(ev(node))
    except (KeyError, ZeroDivisionError):
        return None


# ---- stream ordering with the producers' libraries --------------------------

def _sync_devices(devices):
    """Waits for the work queued on the current torch / CuPy stream of each
    CUDA device used, so the backend (on its own stream) reads finished
    inputs and writes outputs nothing else still uses. Only libraries that
    are already imported are asked."""
    torch = sys.modules.get("torch")
    cupy = sys.modules.get("cupy")
    for index in devices:
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.current_stream(index).synchronize()
        if cupy is not None:
            with cupy.cuda.Device(index):
                cupy.cuda.get_current_stream().synchronize()


class _Call:
    """The C arguments of one execute, and everything keeping them alive."""

    __slots__ = ("keep", "inputs", "outputs", "num_inputs", "num_outputs",
                 "shapes", "capacity", "backings", "out_infos", "devices",
                 "stream", "use_ex", "managed_idx", "managed", "device",
                 "from_out")

    def __init__(self):
        self.keep = []          # imported capsules, allocated outputs
        self.inputs = None      # DLTensor array
        self.outputs = None
        self.num_inputs = self.num_outputs = 0
        self.shapes = []        # c_int64 arrays the backend writes into
        self.capacity = []      # allocated shapes
        self.backings = []      # per output: (obj, raw, data address)
        self.out_infos = []
        self.devices = set()    # CUDA device ids used
        self.stream = None      # the caller's stream handle (int) or None
        self.use_ex = False     # through execute_ex (ABI 1.1)
        self.managed_idx = []   # outputs the backend allocates
        self.managed = None     # their DLManagedTensor* array
        self.device = None      # where the binding allocates outputs
        self.from_out = False   # outputs are the caller's out= tensors

    def reset_shapes(self):
        for arr, cap in zip(self.shapes, self.capacity):
            for d, s in enumerate(cap):
                arr[d] = s


class Method:
    """One method of a Program, initialised on the program's backend.

    ``run(*inputs, out=None, device=None)`` (also ``method(*inputs)``) takes
    torch / CuPy / NumPy tensors (anything with ``__dlpack__``; host or
    device memory) without copying them and returns a tuple of
    aotrun.Tensor. Calls on one Method are serialised with a lock (the
    plugin ABI's rule); different methods may run concurrently."""

    def __init__(self, program, name, handle, manifest_entry):
        self._program = program
        self._host = program._host
        self.name = name
        self._handle = handle
        self._lock = threading.Lock()
        self._manifest = manifest_entry or {}
        self.inputs = self._io_infos(_lib.IO_INPUT)
        self.outputs = self._io_infos(_lib.IO_OUTPUT)
        # What a call reads from the manifest, read once: per input the
        # (dim, symbol) pairs it binds, per output its declared shape.
        self._in_syms = tuple(
            tuple((d, sym) for d, sym in enumerate(self._declared_shape(
                "inputs", i)) if isinstance(sym, str))
            for i in range(len(self._manifest.get("inputs") or [])))
        self._out_shapes = tuple(self._declared_shape("outputs", i)
                                 for i in range(len(self.outputs)))
        self._out_dtypes = tuple(dl.make_dtype(info.dtype)
                                 for info in self.outputs)
        # Per-call work kept between calls: whether the backend has
        # execute_ex (None: not asked yet; a swap asks again) and the
        # output shapes last planned for each set of input shapes.
        self._has_ex = None
        self._plans = {}

    # -- introspection --

    def _declared(self, kind, i):
        """The manifest's entry of input/output i ({} if none)."""
        declared = self._manifest.get(kind) or []
        return declared[i] if i < len(declared) and \
            isinstance(declared[i], dict) else {}

    def _declared_shape(self, kind, i):
        """The manifest's shape list of input/output i ([] if none)."""
        m = self._declared(kind, i)
        return m.get("shape") if isinstance(m.get("shape"), list) else []

    def _io_infos(self, kind):
        h = self._host
        n = c_size_t(0)
        h.check(h.lib.aotrun_host_method_num_io(self._handle, kind, byref(n)))
        key = "inputs" if kind == _lib.IO_INPUT else "outputs"
        out = []
        for i in range(n.value):
            info = _lib.IoInfo()
            h.check(h.lib.aotrun_host_method_io_info(self._handle, kind, i,
                                                     byref(info)))
            m = self._declared(key, i)
            mshape = self._declared_shape(key, i)
            shape = []
            for d in range(info.ndim):
                v = info.shape[d]
                if v >= 0:
                    shape.append(int(v))
                else:
                    sym = mshape[d] if d < len(mshape) else None
                    shape.append(sym if isinstance(sym, str) else None)
            out.append(TensorInfo(i, _s(info.name) or m.get("name") or "?",
                                  dl.dtype_name(info.dtype), shape))
        return tuple(out)

    @property
    def backend(self):
        """Name of the backend currently running the method."""
        self._check_open()
        b = self._host.lib.aotrun_host_method_backend(self._handle)
        return _s(self._host.lib.aotrun_backend_name(b))

    @property
    def closed(self):
        return self._handle is None

    def _check_open(self):
        if self._handle is None:
            raise errors.ClosedError("method '%s' of %s is closed"
                                     % (self.name, self._program.path))

    # -- options --

    def set_option(self, key, value):
        """Sets an option on this method handle (bool, int or str value)."""
        opt, keep = _make_option(key, value)
        with self._lock:
            self._check_open()
            self._host.check(self._host.lib.aotrun_host_method_set_option(
                self._handle, byref(opt)))
        del keep

    def get_option(self, key):
        """Reads an option of this method handle (bool, int or str)."""
        if not self._host.has("aotrun_host_method_get_option"):
            raise errors.NotSupportedError(
                "this host library (%s) has no aotrun_host_method_get_option"
                % self._host.path)
        opt = _lib.Option()
        with self._lock:
            self._check_open()
            self._host.check(self._host.lib.aotrun_host_method_get_option(
                self._handle, _b(key), byref(opt)))
            return _option_value(opt, key)

    # -- running --

    def _bind(self, shapes):
        """Symbol sizes bound by the inputs' `shapes` (from the manifest's
        shapes), and the largest input's element count (the capacity of
        data-dependent dims, as the CLI does)."""
        bound, max_numel = {}, 0
        syms = self._in_syms
        for i, shape in enumerate(shapes):
            numel = 1
            for s in shape:
                numel *= s
            max_numel = max(max_numel, numel)
            if i < len(syms):
                for d, sym in syms[i]:
                    if d < len(shape):
                        bound.setdefault(sym, int(shape[d]))
        return bound, max_numel

    def _output_shape(self, i, info, bound, max_numel, lenient=False,
                      backend_sized=False):
        """The shape to allocate for output i; with `backend_sized`, None
        when a dim is data-dependent (the backend allocates it)."""
        mshape = self._out_shapes[i]
        shape = []
        for d, dim in enumerate(info.shape):
            v = dim if isinstance(dim, int) else None
            if v is None and d < len(mshape):
                v = _eval_dim(mshape[d], bound)
            if (v is None or v < 0) and backend_sized:
                return None
            if v is None or v < 0:
                v = max_numel if max_numel > 0 else None
            if v is None and lenient:
                v = 0  # a wrong input count: the backend's message says so
            if v is None:
                raise errors.InvalidArgumentError(
                    "output %d (%s) dim %d is dynamic (symbol '%s') and no "
                    "input binds it: cannot size the output; pass out=[...]"
                    % (i, info.name, d, dim if dim is not None else "?"))
            shape.append(v)
        return shape

    def _prepare(self, inputs, out, device, stream=None):
        call = _Call()
        call.stream = _execute.stream_handle(stream)
        # execute_ex when the backend has it (ABI 1.1: backend-allocated
        # outputs, the needed shape of a too-small output) or a stream
        # asks for it (the host library refuses what a 1.0 execute cannot).
        if self._has_ex is None:
            self._has_ex = _execute.backend_can(self._host, self._handle,
                                                "execute_ex")
        call.use_ex = call.stream is not None or self._has_ex
        n_in, n_out = len(self.inputs), len(self.outputs)
        imported = []
        for i, x in enumerate(inputs):
            name = self.inputs[i].name if i < n_in else "?"
            if not hasattr(x, "__dlpack__"):
                np = _tensor._numpy()
                if np is None:
                    raise TypeError("input %d (%s): %s has no __dlpack__"
                                    % (i, name, type(x).__name__))
                x = np.ascontiguousarray(x)  # Python scalars and lists
            try:
                imp = dl.import_tensor(x)
            except (TypeError, ValueError, BufferError, RuntimeError) as e:
                raise errors.InvalidArgumentError(
                    "input %d (%s): cannot be passed through DLPack: %s"
                    % (i, name, e)) from e
            imported.append(imp)
            if imp.tensor.device.device_type in (kDLCUDA, kDLCUDAManaged):
                call.devices.add(imp.tensor.device.device_id)
        call.keep.extend(imported)
        call.num_inputs = len(imported)
        call.inputs = (DLTensor * max(len(imported), 1))()
        for i, imp in enumerate(imported):
            call.inputs[i] = imp.tensor
        # Outputs: the caller's, or allocated on `device` (default: the
        # first input's device, else the CPU).
        call.num_outputs = n_out
        call.outputs = (DLTensor * max(n_out, 1))()
        call.out_infos = self.outputs
        if out is not None:
            out = list(out)
            call.from_out = True
            if len(out) != n_out:
                raise errors.InvalidArgumentError(
                    "method '%s' has %d output(s), out= has %d"
                    % (self.name, n_out, len(out)))
            for i, o in enumerate(out):
                info = self.outputs[i]
                try:
                    imp = dl.import_tensor(o)
                except (TypeError, ValueError, BufferError,
                        RuntimeError) as e:
                    raise errors.InvalidArgumentError(
                        "out[%d] (%s): cannot be passed through DLPack: %s"
                        % (i, info.name, e)) from e
                if imp.readonly:
                    raise errors.InvalidArgumentError(
                        "out[%d] (%s) is read-only" % (i, info.name))
                t = imp.tensor
                if not dl.is_compact(t):
                    raise errors.InvalidArgumentError(
                        "out[%d] (%s) must be contiguous" % (i, info.name))
                call.keep.append(imp)
                cap = [int(t.shape[d]) for d in range(t.ndim)]
                shape_arr = (ctypes.c_int64 * max(t.ndim, 1))(*cap)
                t.shape = shape_arr
                t.strides = None
                call.outputs[i] = t
                call.shapes.append(shape_arr)
                call.capacity.append(cap)
                call.backings.append((o, None, None))
                if t.device.device_type in (kDLCUDA, kDLCUDAManaged):
                    call.devices.add(t.device.device_id)
            return call
        if device is not None:
            dev = dl.parse_device(device)
        elif imported:
            d = imported[0].tensor.device
            dev = (d.device_type, d.device_id)
            if dev[0] == dl.kDLCUDAHost:
                dev = (kDLCPU, 0)
        else:
            dev = (kDLCPU, 0)
        call.device = dev
        for i, cap in enumerate(self._plan_outputs(imported, call.use_ex)):
            if cap is None:
                self._managed_output(call, i, self.outputs[i])
            else:
                self._allocate_output(call, i, self.outputs[i], cap)
        if call.managed_idx:
            call.managed = (ctypes.POINTER(dl.DLManagedTensor) *
                            max(n_out, 1))()
        if dev[0] in (kDLCUDA, kDLCUDAManaged):
            call.devices.add(dev[1])
        return call

    _PLANS_KEPT = 64

    def _plan_outputs(self, imported, use_ex):
        """The shape to allocate for each output (None: the backend
        allocates it, data-dependent with execute_ex), planned once per
        set of input shapes and kept (the steady call asks again with the
        same shapes)."""
        shapes = tuple(tuple(imp.tensor.shape[:imp.tensor.ndim])
                       for imp in imported)
        key = (use_ex, shapes)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        bound, max_numel = self._bind(shapes)
        lenient = len(imported) != len(self.inputs)
        # A backend with execute_ex allocates data-dependent outputs.
        plan = tuple(
            None if cap is None else tuple(cap)
            for cap in (self._output_shape(i, info, bound, max_numel,
                                           lenient=lenient,
                                           backend_sized=use_ex)
                        for i, info in enumerate(self.outputs)))
        if len(self._plans) >= self._PLANS_KEPT:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    @staticmethod
    def _set_output(call, i, t, shape_arr, cap, backing):
        """Output i's DLTensor, shape array, capacity and backing."""
        call.outputs[i] = t
        for lst, value in ((call.shapes, shape_arr), (call.capacity, cap),
                           (call.backings, backing)):
            if i < len(lst):
                lst[i] = value
            else:
                lst.append(value)

    def _allocate_output(self, call, i, info, cap):
        """Output i allocated by the binding with shape `cap`."""
        dev = call.device
        try:
            obj, data = _tensor.allocate(info.dtype, cap, dev)
        except (RuntimeError, ValueError, TypeError) as e:
            raise errors.InvalidArgumentError(
                "output %d (%s): %s" % (i, info.name, e)) from e
        shape_arr = (ctypes.c_int64 * max(len(cap), 1))(*cap)
        # Compact (strides NULL), no byte offset.
        t = DLTensor(data, dl.DLDevice(*dev), len(cap), self._out_dtypes[i],
                     shape_arr, None, 0)
        raw = obj if isinstance(obj, _tensor._Raw) else None
        self._set_output(call, i, t, shape_arr, list(cap),
                         (None if raw else obj, raw, data))

    def _managed_output(self, call, i, info):
        """Output i left to the backend (data NULL): a data-dependent
        size that execute_ex allocates."""
        shape_arr = (ctypes.c_int64 * max(info.ndim, 1))()
        t = DLTensor()
        t.device = dl.DLDevice(*call.device)
        t.ndim = info.ndim
        t.dtype = self._out_dtypes[i]
        t.shape = shape_arr
        self._set_output(call, i, t, shape_arr, [0] * info.ndim,
                         (None, None, None))
        call.managed_idx.append(i)

    def _execute(self, call):
        # Called with self._lock held.
        self._check_open()
        call.reset_shapes()
        if call.devices and call.stream is None:
            # (A caller stream orders the work itself.)
            _sync_devices(sorted(call.devices))
        if not call.use_ex:
            status = self._host.lib.aotrun_host_method_execute(
                self._handle, call.inputs, call.num_inputs, call.outputs,
                call.num_outputs)
            self._host.check(status)
            return
        try:
            _execute.execute_ex(self._host, self._handle, call)
        except errors.OutputTooSmallError as e:
            # An output the binding allocated gets the shape the backend
            # needs, and the call runs once more; out= tensors are the
            # caller's to resize.
            i = e.output
            if i is None or call.from_out or i in call.managed_idx:
                raise
            self._allocate_output(call, i, call.out_infos[i],
                                  list(e.needed_shape))
            call.reset_shapes()
            _execute.execute_ex(self._host, self._handle, call)

    def _results(self, call):
        results = []
        for i in range(call.num_outputs):
            if i in call.managed_idx:
                t = _execute.take_managed(call, i, self._program._keeper)
                if call.device[0] == kDLCPU:  # outputs asked on the host
                    t = _execute.to_host(t)
                results.append(t)
                continue
            t = call.outputs[i]
            shape = call.shapes[i][:t.ndim]
            obj, raw, data = call.backings[i]
            dev = (t.device.device_type, t.device.device_id)
            # The binding allocated it with the declared dtype; an out=
            # tensor has its own.
            dtype = dl.dtype_name(t.dtype) if call.from_out \
                else call.out_infos[i].dtype
            if obj is not None:
                obj = _tensor.view(obj, shape, call.capacity[i])
            results.append(_tensor.Tensor(obj, dtype, shape, dev, raw=raw,
                                          data=data))
        return tuple(results)

    def run(self, *inputs, out=None, device=None, stream=None):
        """Runs the method once on `inputs` (DLPack tensors, no copies) and
        returns a tuple with one aotrun.Tensor per output. An output of
        data-dependent size (a manifest symbol no input binds) is allocated
        by a backend with execute_ex (ABI 1.1): its Tensor owns the
        backend's memory and hands it on through DLPack; the backend's
        deleter runs when the Tensor and every consumer are gone.

        out: optional list of preallocated, writable, contiguous output
          tensors (one per output, declared dtype and rank; dynamic dims at
          least as large as needed); the results are views of them.
        device: where outputs are allocated when out is None: "cpu",
          "cuda", "cuda:N" (default: the first input's device).
        stream: the device stream to run on (ABI 1.1 execute_ex): an int
          handle (cudaStream_t), or an object with ``__cuda_stream__`` or
          ``.cuda_stream`` (torch.cuda.Stream). The work is ordered after
          what was queued on it before the call; the binding then does not
          synchronise the inputs' devices. A backend that cannot take a
          stream raises NotSupportedError.
        """
        self._check_open()
        call = self._prepare(inputs, out, device, stream)
        with self._lock:
            try:
                self._execute(call)
            except BaseException:
                _execute.release_managed(call)
                raise
            return self._results(call)

    __call__ = run

    def bench(self, *inputs, iterations=100, warmup=10, out=None,
              device=None, stream=None):
        """Times `iterations` calls after `warmup` untimed ones, with the
        inputs imported and the outputs allocated once. Returns a
        BenchResult (seconds per call, wall clock, each call complete)."""
        if iterations < 1 or warmup < 0:
            raise errors.InvalidArgumentError(
                "bench: iterations must be >= 1 and warmup >= 0")
        self._check_open()
        call = self._prepare(inputs, out, device, stream)
        times = []
        clock = time.perf_counter
        with self._lock:
            try:
                for _ in range(warmup):
                    self._execute(call)
                    _execute.release_managed(call)
                for _ in range(iterations):
                    t0 = clock()
                    self._execute(call)
                    times.append(clock() - t0)
                    _execute.release_managed(call)  # not timed
            finally:
                _execute.release_managed(call)
        return BenchResult(self.name, times, warmup)

    def swap_backend(self, backend):
        """Moves the method to another loaded backend (re-initialised with
        the same program bytes; on failure it stays on the old one)."""
        with self._lock:
            self._check_open()
            self._host.check(self._host.lib.aotrun_host_method_swap_backend(
                self._handle, _b(backend)))
            self._has_ex = None  # the new backend's table is asked again

    def close(self):
        """Destroys the method handle. Safe to call more than once."""
        with self._lock:
            if self._handle is not None:
                self._host.lib.aotrun_host_method_close(self._handle)
                self._handle = None

    def __repr__(self):
        state = "closed" if self._handle is None else "open"
        return "<aotrun.Method %s (%s) inputs=%s outputs=%s>" % (
            self.name, state, list(self.inputs), list(self.outputs))


def _make_option(key, value):
    opt = _lib.Option()
    kb = _b(key)
    opt.key = kb
    keep = [kb]
    if isinstance(value, bool):
        opt.type, opt.bool_value = _lib.OPTION_BOOL, int(value)
    elif isinstance(value, int):
        opt.type, opt.int_value = _lib.OPTION_INT, value
    elif isinstance(value, str):
        vb = _b(value)
        keep.append(vb)
        opt.type, opt.string_value = _lib.OPTION_STRING, vb
    else:
        raise TypeError("option %r: value must be bool, int or str, not %s"
                        % (key, type(value).__name__))
    return opt, keep


def _option_value(opt, key):
    if opt.type == _lib.OPTION_BOOL:
        return bool(opt.bool_value)
    if opt.type == _lib.OPTION_INT:
        return int(opt.int_value)
    if opt.type == _lib.OPTION_STRING:
        return _s(opt.string_value) if opt.string_value is not None else ""
    raise errors.InternalError("option '%s' has unknown type %d"
                               % (key, opt.type))


def _plugin_dirs(host):
    """Directories searched for libaotrun_<backend>.so: $AOTRUN_PLUGIN_PATH,
    the host library's directory, the package's lib/ directory."""
    dirs = [p for p in os.environ.get("AOTRUN_PLUGIN_PATH", "").split(":")
            if p]
    if os.sep in host.path:
        dirs.append(os.path.dirname(os.path.abspath(host.path)))
    dirs.append(_lib.package_lib_dir())
    return dirs


def _bazel_plugin_dirs():
    return [os.path.join(d, sub) for d in _lib.bazel_bin_dirs()
            for sub in ("backend_cuda", "testing/plugins")]


def _is_plugin_name(name):
    return (name.startswith("libaotrun_") and name.endswith(".so")
            and len(name) > 13 and name != SHIM_LIBRARY
            and name != _lib.LIBRARY_NAME)


def find_plugin(backend, host_library=None):
    """Path of libaotrun_<backend>.so in $AOTRUN_PLUGIN_PATH, next to the
    host library, in the package's lib/ or in the Bazel output; None when
    there is none."""
    host = _lib.load(host_library)
    fname = "libaotrun_%s.so" % backend
    for d in _plugin_dirs(host) + _bazel_plugin_dirs():
        if os.path.isfile(d) and os.path.basename(d) == fname:
            return d
        p = os.path.join(d, fname)
        if os.path.isfile(p):
            return p
    return None


class _RegistryKeeper:
    """Destroys the registry (unloading the plugins) once the Program is
    closed AND every backend-allocated output is freed: their deleters are
    plugin code. Counted explicitly, because the garbage collector may
    finalise the objects of a cycle in any order."""

    def __init__(self, host, registry):
        self._host, self._registry = host, registry
        self._lock = threading.Lock()
        self._users = 0        # live backend-allocated outputs
        self._closed = False

    def acquire(self):
        with self._lock:
            self._users += 1
        return self

    def release(self):
        with self._lock:
            self._users -= 1
        self._destroy_if_unused()

    def close(self):
        with self._lock:
            self._closed = True
        self._destroy_if_unused()

    def _destroy_if_unused(self):
        with self._lock:
            if not self._closed or self._users or self._registry is None:
                return
            registry, self._registry = self._registry, None
        self._host.lib.aotrun_registry_destroy(registry)


class Program:
    """An aotrun program directory opened on one backend.

        with aotrun.Program("prog", backend="cpu_ref") as prog:
            y, calls = prog.run("forward", x)

    path: the program directory (manifest.json, METHOD.so, weights).
    plugin: a plugin library path, or a list of them, to load.
    backend: the backend name to run on. Without `plugin`, its library
      libaotrun_<backend>.so is looked up in $AOTRUN_PLUGIN_PATH, next to the
      host library, in aotrun/lib/ and in the Bazel output. With neither,
      every libaotrun_*.so of $AOTRUN_PLUGIN_PATH, the host library's
      directory and aotrun/lib/ is loaded and the first available backend
      is used (like the aotrun CLI).
    options: backend-wide options {key: bool|int|str}, set before any method
      is initialised (like `aotrun run --option KEY=VALUE`). Backend-wide
      values live in the plugin, which a process loads once: they also apply
      to later Programs on the same backend.
    specs: extra compile specs for init (e.g. {"device": "cuda:1"}); "method"
      is set per method.
    methods: names to initialise now (default: every method of the
      manifest); others are initialised on first use.
    log_level: "debug" | "info" | "warning" | "error" for messages the
      backend logs (default $AOTRUN_LOG_LEVEL, else "warning").
    host_library: path of libaotrun_host.so (default $AOTRUN_HOST_LIBRARY,
      then next to the package, then the Bazel output, then the loader's
      search path).
    """

    def __init__(self, path, plugin=None, backend=None, options=None,
                 specs=None, methods=None, log_level=None,
                 host_library=None):
        self.path = os.fspath(path)
        self._host = _lib.load(host_library)
        self._registry = None
        self._keeper = None
        self._dir = None
        self._backend = None
        self._methods = {}
        self._lock = threading.RLock()
        self._specs = dict(specs or {})
        self._manifest_bytes = None
        self.manifest = {}
        try:
            self._open(plugin, backend, options or {}, log_level)
            names = self.method_names if methods is None else list(methods)
            for name in names:
                self.method(name)
        except BaseException:
            self.close()
            raise

    # -- opening --

    def _open(self, plugin, backend, options, log_level):
        h = self._host
        reg = c_void_p()
        h.check(h.lib.aotrun_registry_create(byref(reg)))
        self._registry = reg
        self._keeper = _RegistryKeeper(h, reg)
        paths = [plugin] if isinstance(plugin, (str, os.PathLike)) else \
            list(plugin or [])
        if not paths and backend:
            found = find_plugin(backend, h.path)
            if found is None:
                dirs = _plugin_dirs(h) + _bazel_plugin_dirs()
                raise errors.NotFoundError(
                    "no plugin for backend '%s': libaotrun_%s.so is not in "
                    "%s (pass plugin=PATH or set $AOTRUN_PLUGIN_PATH)"
                    % (backend, backend, ", ".join(dirs) or "(none)"))
            paths = [found]
        explicit = bool(paths)
        if not paths:
            seen = set()
            for d in _plugin_dirs(h):
                if os.path.isfile(d):
                    cands = [d]
                elif os.path.isdir(d):
                    cands = [os.path.join(d, n) for n in sorted(os.listdir(d))
                             if _is_plugin_name(n)]
                else:
                    cands = []
                for c in cands:
                    if os.path.realpath(c) not in seen:
                        seen.add(os.path.realpath(c))
                        paths.append(c)
        for p in paths:
            status = h.lib.aotrun_registry_load(reg, _b(os.fspath(p)), None)
            if status != errors.OK:
                if explicit:
                    h.check(status)
                warnings.warn("aotrun: skipping plugin: %s" % h.last_error())
        self._backend = self._pick_backend(backend)
        for key, value in options.items():
            self.set_option(key, value)
        d = c_void_p()
        h.check(h.lib.aotrun_program_dir_open(_b(self.path), byref(d)))
        self._dir = d
        level = log_level or os.environ.get("AOTRUN_LOG_LEVEL")
        if level:
            lv = c_int32(_lib.LOG_WARNING)
            h.check(h.lib.aotrun_log_level_parse(_b(level), byref(lv)))
            h.lib.aotrun_program_dir_set_log_level(d, lv.value)
        self._manifest_bytes = self._named_data(MANIFEST_KEY)
        try:
            parsed = json.loads(self._manifest_bytes.decode("utf-8"))
            self.manifest = parsed if isinstance(parsed, dict) else {}
        except (UnicodeDecodeError, ValueError):
            self.manifest = {}  # the backend says what is wrong at init

    def _pick_backend(self, name):
        h = self._host
        reason = ctypes.create_string_buffer(256)
        if name:
            b = c_void_p()
            h.check(h.lib.aotrun_registry_find(self._registry, _b(name),
                                               byref(b)))
            if not h.lib.aotrun_backend_is_available(b, reason, 256):
                raise errors.NotSupportedError(
                    "backend '%s' is not available: %s"
                    % (name, _s(reason.value)))
            return b
        n = h.lib.aotrun_registry_count(self._registry)
        why = []
        for i in range(n):
            b = h.lib.aotrun_registry_at(self._registry, i)
            if h.lib.aotrun_backend_is_available(b, reason, 256):
                return c_void_p(b)
            why.append("%s (%s): %s" % (
                _s(h.lib.aotrun_backend_name(b)),
                _s(h.lib.aotrun_backend_path(b)), _s(reason.value)))
        if n == 0:
            raise errors.NotFoundError(
                "no plugin found (pass plugin=PATH or backend=NAME, or set "
                "$AOTRUN_PLUGIN_PATH)")
        raise errors.NotSupportedError(
            "no available backend among %d plugin(s): %s" % (n, "; ".join(why)))

    def _named_data(self, key):
        """The bytes of PROGRAM/<key> through the host's named-data service
        (the same checks and messages as the CLI)."""
        h = self._host
        api = h.lib.aotrun_program_dir_host_api(self._dir).contents
        data, size, token = c_void_p(), c_size_t(), c_void_p()
        h.check(api.get_named_data(api.ctx, _b(key), byref(data),
                                   byref(size), byref(token)))
        try:
            return ctypes.string_at(data, size.value) if size.value else b""
        finally:
            api.release_named_data(api.ctx, token)

    # -- properties --

    @property
    def closed(self):
        return self._registry is None

    def _check_open(self):
        if self._registry is None:
            raise errors.ClosedError("program %s is closed" % self.path)

    @property
    def backend(self):
        """Name of the backend the program runs on."""
        self._check_open()
        return _s(self._host.lib.aotrun_backend_name(self._backend))

    @property
    def plugin_path(self):
        self._check_open()
        return _s(self._host.lib.aotrun_backend_path(self._backend))

    @property
    def backends(self):
        """Names of every loaded backend."""
        self._check_open()
        lib = self._host.lib
        return [_s(lib.aotrun_backend_name(lib.aotrun_registry_at(
            self._registry, i)))
            for i in range(lib.aotrun_registry_count(self._registry))]

    @property
    def method_names(self):
        """Method names from the manifest, in its order."""
        m = self.manifest.get("methods")
        return list(m.keys()) if isinstance(m, dict) else ["forward"]

    @property
    def methods(self):
        """{name: Method} for every method of the manifest (initialising
        those not yet initialised)."""
        return {n: self.method(n) for n in self.method_names}

    def method(self, name="forward"):
        """The Method `name`, initialised on first use."""
        with self._lock:
            self._check_open()
            m = self._methods.get(name)
            if m is not None:
                return m
            h = self._host
            spec_items = [(k, v) for k, v in self._specs.items()
                          if k != "method"] + [("method", name)]
            keep = [(_b(k), _b(str(v))) for k, v in spec_items]
            specs = (_lib.KeyValue * len(keep))(*[_lib.KeyValue(k, v)
                                                  for k, v in keep])
            data = self._manifest_bytes
            handle = c_void_p()
            h.check(h.lib.aotrun_host_method_open(
                self._registry, h.lib.aotrun_backend_name(self._backend),
                h.lib.aotrun_program_dir_host_api(self._dir), data,
                len(data), specs, len(keep), byref(handle)))
            entry = (self.manifest.get("methods") or {}).get(name) \
                if isinstance(self.manifest.get("methods"), dict) else None
            try:
                m = Method(self, name, handle, entry)
            except BaseException:
                h.lib.aotrun_host_method_close(handle)
                raise
            self._methods[name] = m
            return m

    __getitem__ = method

    def inputs(self, method="forward"):
        return self.method(method).inputs

    def outputs(self, method="forward"):
        return self.method(method).outputs

    def run(self, method, *inputs, out=None, device=None, stream=None):
        """Method(method).run(*inputs, out=out, device=device,
        stream=stream)."""
        return self.method(method).run(*inputs, out=out, device=device,
                                       stream=stream)

    def bench(self, method, *inputs, iterations=100, warmup=10, out=None,
              device=None, stream=None):
        """Method(method).bench(...): a BenchResult."""
        return self.method(method).bench(*inputs, iterations=iterations,
                                         warmup=warmup, out=out,
                                         device=device, stream=stream)

    # -- backend-wide options --

    def set_option(self, key, value):
        """Sets a backend-wide option (for methods initialised afterwards)."""
        self._check_open()
        opt, keep = _make_option(key, value)
        self._host.check(self._host.lib.aotrun_backend_set_option(
            self._backend, byref(opt)))
        del keep

    def get_option(self, key):
        """Reads a backend-wide option."""
        self._check_open()
        if not self._host.has("aotrun_backend_get_option"):
            raise errors.NotSupportedError(
                "this host library (%s) has no aotrun_backend_get_option"
                % self._host.path)
        opt = _lib.Option()
        self._host.check(self._host.lib.aotrun_backend_get_option(
            self._backend, _b(key), byref(opt)))
        return _option_value(opt, key)

    # -- closing --

    @property
    def num_mapped(self):
        """Named data currently mapped by the program directory (leak
        checks: 0 after every method closed)."""
        self._check_open()
        return self._host.lib.aotrun_program_dir_num_mapped(self._dir)

    def close(self):
        """Closes every method, the program directory and the plugins, in
        that order. Safe to call more than once."""
        with self._lock:
            for m in list(self._methods.values()):
                m.close()
            self._methods.clear()
            lib = self._host.lib
            if self._dir is not None:
                lib.aotrun_program_dir_close(self._dir)
                self._dir = None
            # The plugins are unloaded now, or when the last output they
            # allocated is freed.
            if self._keeper is not None:
                self._keeper.close()
                self._keeper = None
            self._registry = None
            self._backend = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        if self._registry is None:
            return "<aotrun.Program %s (closed)>" % self.path
        return "<aotrun.Program %s on %s, methods %s>" % (
            self.path, self.backend, self.method_names)
