"""libaotrun_shim.so from Python through ctypes, on tensors that torch owns:
the harness of the GPU op tests (testing/gpu/ops) and of the fallback-op
benchmark. Every aotrun op is called exactly as a compiled model calls it,
and its result is compared with eager PyTorch on the same inputs.

    shim = Shim("path/to/libaotrun_shim.so")
    with shim.stream(torch.cuda.Stream()) as s:    # guard + torch stream
        h = shim.handle(x)            # a non-owning handle over x's memory
        r = shim.new_handle()         # an output slot (AtenTensorHandle*)
        shim.call("aoti_torch_cuda_sort", h, 1, 0, r, r2)
        y = shim.take(r)              # copy into a torch tensor, delete handle

The library is linked -Bsymbolic, so its calls between aoti_torch_*
functions stay inside it even in a process that loaded libtorch.
"""

import ctypes
import os
from contextlib import contextmanager

import torch

H = ctypes.c_void_p                      # AtenTensorHandle
PH = ctypes.POINTER(H)                   # AtenTensorHandle* (Tensor?, ret)
PPH = ctypes.POINTER(PH)                 # const AtenTensorHandle** (Tensor?[])
I32, I64, F64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_double
PI32, PI64, PF64 = (ctypes.POINTER(ctypes.c_int32),
                    ctypes.POINTER(ctypes.c_int64),
                    ctypes.POINTER(ctypes.c_double))
CSTR = ctypes.c_char_p

# Argument types of the functions the harness calls (torch 2.11's c_shim
# signatures). Ops add theirs here.
SIGNATURES = {
    "aoti_torch_create_tensor_from_blob": [ctypes.c_void_p, I64, PI64, PI64,
                                           I64, I32, I32, I32, PH],
    "aoti_torch_delete_tensor_object": [H],
    "aoti_torch_copy_": [H, H, I32],
    "aoti_torch_get_dim": [H, PI64],
    "aoti_torch_get_sizes": [H, ctypes.POINTER(PI64)],
    "aoti_torch_get_strides": [H, ctypes.POINTER(PI64)],
    "aoti_torch_get_dtype": [H, PI32],
    "aoti_torch_get_device_type": [H, PI32],
    "aoti_torch_get_device_index": [H, PI32],
    "aoti_torch_create_cuda_stream_guard": [ctypes.c_void_p, I32,
                                            ctypes.POINTER(ctypes.c_void_p)],
    "aoti_torch_delete_cuda_stream_guard": [ctypes.c_void_p],
    "aotrun_shim_take_device_error": [I32, ctypes.c_char_p, ctypes.c_size_t],
    # fallback ops
    "aoti_torch_cuda_mm_out": [H, H, H],
    "aoti_torch_cuda_addmm_out": [H, H, H, H, F64, F64],
    "aoti_torch_cuda_bmm_out": [H, H, H],
    "aoti_torch_cuda_baddbmm_out": [H, H, H, H, F64, F64],
    "aoti_torch_cuda_mm_dtype_out": [H, H, H, I32],
    "aoti_torch_cuda_addmv": [H, H, H, F64, F64, PH],
    "aoti_torch_cuda__addmm_activation": [H, H, H, F64, F64, I32, PH],
    "aoti_torch_cuda_convolution": [H, H, PH, PI64, I64, PI64, I64, PI64, I64,
                                    I32, PI64, I64, I64, PH],
    "aoti_torch_cuda_index_Tensor": [H, PPH, I64, PH],
    "aoti_torch_cuda_index_put": [H, PPH, I64, H, I32, PH],
    "aoti_torch_index_put_out": [H, H, PH, ctypes.c_uint32, H, ctypes.c_bool],
    "aoti_torch_cuda_nonzero": [H, PH],
    "aoti_torch_cuda_masked_select": [H, H, PH],
    "aoti_torch_cuda_masked_scatter": [H, H, H, PH],
    "aoti_torch_cuda_scatter_src_out": [H, H, I64, H, H],
    "aoti_torch_cuda_scatter_value_out": [H, H, I64, H, F64],
    "aoti_torch_cuda_scatter_reduce_two_out": [H, H, I64, H, H, CSTR, I32],
    "aoti_torch_scatter_out": [H, H, I64, H, H],
    "aoti_torch_scatter_reduce_out": [H, H, I64, H, H, CSTR, I32],
    "aoti_torch_cuda_sort": [H, I64, I32, PH, PH],
    "aoti_torch_cuda_sort_stable": [H, PI32, I64, I32, PH, PH],
    "aoti_torch_cuda_topk": [H, I64, I64, I32, I32, PH, PH],
    # random ops (size, size_len, [generator], dtype, layout, device,
    # device_index, pin_memory, ret0); generator is AtenGeneratorHandle*
    "aoti_torch_cuda_rand": [PI64, I64, PI32, PI32, PI32, I32, PI32, PH],
    "aoti_torch_cuda_rand_generator": [PI64, I64, PH, PI32, PI32, PI32, I32,
                                       PI32, PH],
    "aoti_torch_cuda_randn": [PI64, I64, PI32, PI32, PI32, I32, PI32, PH],
    "aoti_torch_cuda_randn_generator": [PI64, I64, PH, PI32, PI32, PI32, I32,
                                        PI32, PH],
    "aoti_torch_cuda_randint": [I64, PI64, I64, PI32, PI32, PI32, I32, PI32,
                                PH],
    "aoti_torch_cuda_randint_generator": [I64, PI64, I64, PH, PI32, PI32,
                                          PI32, I32, PI32, PH],
    "aoti_torch_cuda_randint_low": [I64, I64, PI64, I64, PI32, PI32, PI32,
                                    I32, PI32, PH],
    "aoti_torch_cuda_randint_low_out": [H, I64, I64, PI64, I64],
    "aoti_torch_cuda_randperm": [I64, PI32, PI32, PI32, I32, PI32, PH],
    "aoti_torch_cuda_uniform": [H, F64, F64, PH, PH],
    "aoti_torch_cuda_normal_functional": [H, F64, F64, PH, PH],
    "aoti_torch_cuda_bernoulli__float": [H, F64, PH],
    "aoti_torch_cuda_bernoulli__Tensor": [H, H, PH],
    # fused attention
    "aoti_torch_cuda__scaled_dot_product_flash_attention": [
        H, H, H, F64, I32, I32, PF64, PH, PH, PH, PH, PI64, PI64, PH, PH, PH],
    "aoti_torch_cuda__scaled_dot_product_efficient_attention": [
        H, H, H, PH, I32, F64, I32, PF64, PH, PH, PH, PH],
    "aoti_torch_cuda__flash_attention_forward": [
        H, H, H, PH, PH, I64, I64, F64, I32, I32, PF64, PI64, PI64, PH, PH,
        PH, PH, PH, PH, PH],
    "aoti_torch_cuda__efficient_attention_forward": [
        H, H, H, PH, PH, PH, PI64, PI64, F64, I64, I32, PF64, PH, PI64, PH,
        PH, PH, PH, PI64, PI64],
    "aotrun_shim_random_set_seed": [ctypes.c_uint64],
    "aotrun_shim_random_fail_next_seed": [I32],
}

# ScalarType codes (DESIGN.md §2.3).
DTYPES = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3,
    torch.int64: 4, torch.float16: 5, torch.float32: 6, torch.float64: 7,
    torch.complex64: 9, torch.complex128: 10, torch.bool: 11,
    torch.bfloat16: 15, torch.uint16: 27, torch.uint32: 28, torch.uint64: 29,
}
CODES = {v: k for k, v in DTYPES.items()}


class ShimError(RuntimeError):
    """An aoti_torch_* call returned non-zero; the message is the shim's."""


class Shim:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.lib = ctypes.CDLL(self.path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        self.lib.aotrun_shim_last_error.restype = ctypes.c_char_p
        self._fns = {}

    def fn(self, name):
        f = self._fns.get(name)
        if f is None:
            f = getattr(self.lib, name)
            if name not in SIGNATURES:
                raise KeyError(f"add {name}'s argument types to SIGNATURES")
            f.argtypes = SIGNATURES[name]
            f.restype = ctypes.c_int32 if not name.startswith("aotrun_shim_take") else ctypes.c_int
            self._fns[name] = f
        return f

    def last_error(self):
        return self.lib.aotrun_shim_last_error().decode("utf-8", "replace")

    @contextmanager
    def kernel_options(self, values):
        """Sets the variables in `values` (None: unset) for the block and
        has the shim read its kernel choice again (it reads AOTRUN_ATTN_TC,
        AOTRUN_ATTN_F32, AOTRUN_CONV_API, AOTRUN_GEMM_LT and
        AOTRUN_BADDBMM_BIAS once, not at
        each call); then restores them and re-reads."""
        old = {k: os.environ.get(k) for k in values}

        def apply(vals):
            for k, v in vals.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            self.lib.aotrun_shim_read_kernel_options()

        apply(values)
        try:
            yield
        finally:
            apply(old)

    def call(self, name, *args):
        """Calls an AOTITorchError function; raises ShimError on failure."""
        self.lib.aotrun_shim_clear_error()
        rc = self.fn(name)(*args)
        if rc != 0:
            raise ShimError(f"{name} failed: {self.last_error()}")

    def take_device_error(self, device=0):
        """The device error report since the last call (after a sync), or
        None."""
        torch.cuda.synchronize()
        buf = ctypes.create_string_buffer(1024)
        if self.fn("aotrun_shim_take_device_error")(device, buf, len(buf)):
            return buf.value.decode("utf-8", "replace")
        return None

    # ---- tensors ----
    def handle(self, t):
        """A handle over torch tensor t's memory (never owning it; keep t
        alive while the handle is used). Delete it with delete()."""
        if t.dtype not in DTYPES:
            raise TypeError(f"dtype {t.dtype} has no ABI code here")
        n = t.dim()
        sizes = (ctypes.c_int64 * max(n, 1))(*t.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*t.stride())
        base = t.untyped_storage().data_ptr()
        dev = (1, t.device.index or 0) if t.is_cuda else (0, 0)
        h = H()
        self.call("aoti_torch_create_tensor_from_blob", base, n, sizes,
                  strides, t.storage_offset(), DTYPES[t.dtype], dev[0], dev[1],
                  ctypes.byref(h))
        return h

    def delete(self, h):
        if h:
            self.fn("aoti_torch_delete_tensor_object")(h)

    @staticmethod
    def new_handle():
        """An empty output slot; pass it where the op takes AtenTensorHandle*."""
        return ctypes.pointer(H())

    @staticmethod
    def opt(h):
        """Tensor? argument: a pointer to the handle, or None."""
        return None if h is None else ctypes.pointer(H(h.value if isinstance(h, H) else h))

    @staticmethod
    def opt_list(handles):
        """Tensor?[] argument: array of pointers to handles (None entries)."""
        arr = (PH * max(len(handles), 1))()
        keep = []
        for i, h in enumerate(handles):
            if h is not None:
                p = ctypes.pointer(H(h.value if isinstance(h, H) else h))
                keep.append(p)
                arr[i] = p
        arr._keep = keep
        return ctypes.cast(arr, PPH)

    @staticmethod
    def ints(values):
        """const int64_t* argument: (array, length)."""
        values = list(values)
        return (ctypes.c_int64 * max(len(values), 1))(*values), len(values)

    @staticmethod
    def handle_list(handles):
        """const AtenTensorHandle* argument (NULL entries for None)."""
        arr = (H * max(len(handles), 1))()
        for i, h in enumerate(handles):
            arr[i] = None if h is None else (h.value if isinstance(h, H) else h)
        return ctypes.cast(arr, PH)

    def describe(self, h):
        """(sizes, strides, dtype, device_type) of a handle."""
        nd = ctypes.c_int64()
        self.call("aoti_torch_get_dim", h, ctypes.byref(nd))
        ps, pt = PI64(), PI64()
        self.call("aoti_torch_get_sizes", h, ctypes.byref(ps))
        self.call("aoti_torch_get_strides", h, ctypes.byref(pt))
        dt, dv = ctypes.c_int32(), ctypes.c_int32()
        self.call("aoti_torch_get_dtype", h, ctypes.byref(dt))
        self.call("aoti_torch_get_device_type", h, ctypes.byref(dv))
        n = nd.value
        return ([ps[i] for i in range(n)], [pt[i] for i in range(n)],
                CODES[dt.value], dv.value)

    def to_torch(self, h, device="cuda"):
        """A torch copy of the handle's tensor with the same sizes and
        strides (stride-0 or overlapping layouts become contiguous)."""
        sizes, strides, dtype, _ = self.describe(h)
        try:
            out = torch.empty_strided(sizes, strides, dtype=dtype, device=device)
        except RuntimeError:
            out = torch.empty(sizes, dtype=dtype, device=device)
        dst = self.handle(out)
        try:
            self.call("aoti_torch_copy_", dst, h, 0)
        finally:
            self.delete(dst)
        return out

    def take(self, slot):
        """to_torch() of an output slot's handle, then deletes the handle."""
        h = slot.contents if isinstance(slot, ctypes._Pointer) else slot
        try:
            return self.to_torch(h)
        finally:
            self.delete(h)

    @contextmanager
    def stream(self, s=None, device=0):
        """Makes s (a torch.cuda.Stream; a new one by default) the current
        stream of both torch and the shim for the block."""
        s = s or torch.cuda.Stream(device=device)
        g = ctypes.c_void_p()
        self.call("aoti_torch_create_cuda_stream_guard", s.cuda_stream, device,
                  ctypes.byref(g))
        try:
            with torch.cuda.stream(s):
                yield s
        finally:
            self.fn("aoti_torch_delete_cuda_stream_guard")(g)
