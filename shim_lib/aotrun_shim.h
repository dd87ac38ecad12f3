/*
 * aotrun_shim.h: the aoti_torch_* C ABI that AOTInductor-compiled model
 * libraries call, as implemented by libaotrun_shim.so, plus the few aotrun_shim_*
 * functions the rest of aotrun uses (error text, allocator hooks).
 *
 * Declarations are our own, written to match the ABI of torch 2.11's
 * torch/csrc/inductor/aoti_torch/c/shim.h (codes in ../shared/DESIGN.md §2.3).
 */
#ifndef AOTRUN_SHIM_H
#define AOTRUN_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define AOTRUN_SHIM_API __attribute__((visibility("default")))
#else
#define AOTRUN_SHIM_API
#endif

typedef int32_t AOTITorchError;
#define AOTI_TORCH_SUCCESS 0
#define AOTI_TORCH_FAILURE 1

/* A handle is one reference to a tensor (see DESIGN.md §2.4). */
struct AtenTensorOpaque;
typedef struct AtenTensorOpaque *AtenTensorHandle;

struct CUDAStreamGuardOpaque;
typedef struct CUDAStreamGuardOpaque *CUDAStreamGuardHandle;

/* ---- aotrun_shim_*: used by aotrun's own code, not by models ---- */

/* The calling thread's current CUDA stream (a cudaStream_t; NULL is the
 * legacy default stream) and device, as set by the stream/device guards. */
AOTRUN_SHIM_API void *aotrun_shim_current_stream(void);
AOTRUN_SHIM_API int32_t aotrun_shim_current_device(void);

/* Records a printf-style thread-local error message and returns
 * AOTI_TORCH_FAILURE; every aoti_torch_* function that fails calls it. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* The calling thread's last shim error message ("" when none). */
AOTRUN_SHIM_API const char *aotrun_shim_last_error(void);
AOTRUN_SHIM_API void aotrun_shim_clear_error(void);

/* Returns AOTI_TORCH_SUCCESS when the current stream is not capturing a CUDA
 * graph; otherwise records "<what> cannot run inside a CUDA graph capture"
 * and returns AOTI_TORCH_FAILURE. Shims that read device data on the host
 * (item_*, mask index, nonzero) call it first. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_refuse_if_capturing(
    const char *what);

/* Device allocator hook: where CUDA tensors created by the shims get memory.
 * The default is cudaMallocAsync/cudaFreeAsync on the current stream. The
 * CUDA backend installs a per-graph pool while capturing. Both functions get
 * the current stream. alloc returns NULL on failure. */
typedef struct aotrun_shim_allocator {
  void *ctx;
  void *(*alloc)(void *ctx, size_t bytes, void *stream);
  void (*free)(void *ctx, void *ptr, void *stream);
} aotrun_shim_allocator;

/* Frees are stream-ordered on the stream that is current (for the tensor's
 * device) on the thread that drops the last reference, at that moment:
 * delete tensors inside the stream guard of the work that uses them, or
 * synchronize first. Zero-byte tensors never call the allocator.
 *
 * Installs *a for the calling thread (copied); NULL (or a NULL alloc/free)
 * restores the default.
 * Memory is freed through the allocator that allocated it (the tensor's
 * storage remembers it), so switching while tensors live is safe. */
AOTRUN_SHIM_API void aotrun_shim_set_thread_allocator(
    const aotrun_shim_allocator *a);

/* The default allocator keeps freed device blocks for reuse on the stream
 * that freed them (shim_lib/block_cache.h; at most AOTRUN_ALLOC_CACHE_BYTES,
 * default 2 GiB; 0 turns it off). This hands cuda:<device>'s cached blocks
 * (device -1: every device) back to CUDA and trims the device's memory pool;
 * it synchronises the device. Returns the bytes released. */
AOTRUN_SHIM_API size_t aotrun_shim_release_cached_memory(int32_t device);

/* Reads again which implementation the fallback ops run where two exist
 * (AOTRUN_ATTN_TC=narrow, AOTRUN_ATTN_F32=simt, AOTRUN_CONV_API=legacy pick
 * the older kernels; docs/fallback-ops.md). The shim reads them once, at
 * the first op that asks; a process that changes them later (a benchmark
 * timing both kernels) calls this after setenv. Not while another thread
 * calls setenv. */
AOTRUN_SHIM_API void aotrun_shim_read_kernel_options(void);

/* Frees what the shim keeps for the whole process: the cuBLAS / cuBLASLt
 * and cuDNN handles of every thread, the per-stream cuBLAS workspaces, the
 * GEMM and convolution algorithm caches, the random generators' device
 * states, every cached block of the default allocator (the block cache is
 * emptied, its device memory pools trimmed) and the device-error slots.
 * The next shim call makes what it needs again, as in a new process (a
 * seed fixed with aotrun_shim_random_set_seed is kept). The CUDA
 * backend's deinit calls it before the backend is unloaded.
 * Only while no shim call runs or is queued in any thread and no captured
 * graph that used the shim can be replayed; synchronises every device.
 * Live tensors stay valid. The code of the shim, libcudart and cuDNN stay
 * loaded (the shim is linked -z nodelete: shim_lib/BUILD says why). */
AOTRUN_SHIM_API void aotrun_shim_release_process_state(void);

/* 1 when h's memory was allocated by the shim and is freed with the
 * tensor's last reference through an allocator that does not go away with
 * a method (host, pinned, or device memory of the default allocator); 0
 * for borrowed memory (create_tensor_from_blob: a caller's data, a
 * program's constants), memory of a thread allocator such as a CUDA
 * graph's pool, an undefined tensor or NULL. The CUDA backend hands such a
 * tensor to its caller instead of copying it (backend-allocated outputs). */
AOTRUN_SHIM_API int aotrun_shim_tensor_owns_memory(AtenTensorHandle h);

/* Output lending (aot_loader/output_placement.c): a runner lends the
 * caller's output buffers to one call's allocations, so the model writes
 * each output where the caller reads it and no copy follows.
 *
 * Between begin and end this thread's aoti_torch_empty_strided calls are
 * numbered from 0 (the session's allocation ordinals). The allocation
 * numbered entries[i].seq gets entries[i].data instead of new memory when
 * its request matches the entry (dtype, device, dense row-major strides,
 * and the bytes of the entry's sizes, in any shape: generated wrappers
 * reuse an allocation of another shape for an output, through
 * reinterpret_tensor; not pinned) and lent is set; the shim never frees
 * that memory.
 * Entries are sorted by seq (strictly increasing) and borrowed until end.
 * While memory so lent is referenced, *live (owned by the caller, updated
 * atomically, may be NULL) counts it: after the call's tensors are gone a
 * count above 0 means something kept the caller's memory. Calls do not
 * nest; end without begin does nothing. */
typedef struct aotrun_shim_lend {
  int64_t seq;
  int32_t dtype;
  int32_t device_type;
  int32_t device_index;
  int32_t ndim;
  const int64_t *sizes;
  void *data;
  int lent; /* out */
} aotrun_shim_lend;
AOTRUN_SHIM_API void aotrun_shim_lend_begin(aotrun_shim_lend *entries,
                                            size_t n, int64_t *live);
AOTRUN_SHIM_API void aotrun_shim_lend_end(void);

/* What made h's memory, for the runner's check after a call. */
typedef struct aotrun_shim_alloc_info {
  int64_t seq; /* its ordinal in this thread's last session, else -1 */
  int lent;    /* the memory is a lent entry's */
  int sole;    /* h is its impl's only handle, the impl its storage's only */
  int whole;   /* offset 0, row-major, numel > 0, exactly the storage's bytes */
} aotrun_shim_alloc_info;
/* Fills *out (all -1/0 for NULL or an undefined tensor). */
AOTRUN_SHIM_API void aotrun_shim_tensor_alloc_info(AtenTensorHandle h,
                                                   aotrun_shim_alloc_info *out);

/* Bad data found on the device (an index out of range in a fallback op) is
 * reported without a host synchronisation: kernels write a per-device slot
 * in mapped host memory (shim_lib/device_error.h) and the host reads it
 * after its next synchronisation.
 *
 * The device address of cuda:<device>'s slot (allocated on first use). */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_device_error_slot(int32_t device,
                                                             void **slot);
/* After a synchronisation: 1 and the report's message in msg (cap bytes),
 * clearing the slot, when a kernel on cuda:<device> reported bad data since
 * the last call; else 0. A report names the op, the argument, the index,
 * the dim and its size. */
AOTRUN_SHIM_API int aotrun_shim_take_device_error(int32_t device, char *msg,
                                                  size_t cap);

/* Random ops (shim_lib/fallback/random_*.c, docs/random.md): one Philox
 * generator per CUDA device, seeded on first use from
 * aotrun_shim_random_set_seed's value, else AOTRUN_SEED=<u64>, else
 * getrandom(2); its offset lives in device memory and is advanced by the
 * kernels, so replayed CUDA graphs draw new numbers.
 *
 * Fixes the seed of every device (for reproducible runs) and resets their
 * offsets to 0; devices not used yet take it when first used. Waits for
 * the devices already seeded (cudaDeviceSynchronize): not inside a
 * capture. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_random_set_seed(uint64_t seed);
/* Test seam: the next seeding of a device fails once, at step 1 (the seed
 * source) or 2 (the copy of the state to the GPU); 0 clears it. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_random_fail_next_seed(
    int32_t step);

/* One-time work of the first call done ahead (shim_lib/fallback/warm_up.c):
 * one tiny float32 call of each chosen family on cuda:<device>, queued on
 * `stream` (a cudaStream_t; NULL: the default stream) and waited for, so a
 * method's first call does not pay the library's initialisation (cuBLAS,
 * cuBLASLt heuristics, cuDNN loading, the allocator's pool). The handles
 * it creates are the calling thread's. Not inside a graph capture. */
#define AOTRUN_SHIM_WARM_ALLOC 1u /* the allocator's pool */
#define AOTRUN_SHIM_WARM_GEMM 2u  /* cuBLAS + cuBLASLt (mm, addmm) */
#define AOTRUN_SHIM_WARM_CONV 4u  /* cuDNN (a 1x1 convolution) */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_warm_up(int32_t device,
                                                   void *stream,
                                                   uint32_t what);

/* The rest of the ABI (every aoti_torch_* function) is declared below. */

/* ---- aoti_torch_*: the ABI generated model code calls ----
 * Every function returning AOTITorchError records a message through
 * aotrun_shim_fail on failure. "returns new reference" outputs are handles
 * the caller deletes with aoti_torch_delete_tensor_object. */

/* C and C++ (.cu files include this header too). */
#ifdef __cplusplus
#define AOTRUN_SHIM_BOOL bool
#define AOTRUN_SHIM_ALIGNAS(n) alignas(n)
#else
#define AOTRUN_SHIM_BOOL _Bool
#define AOTRUN_SHIM_ALIGNAS(n) _Alignas(n)
#endif

struct CUDAGuardOpaque;
typedef struct CUDAGuardOpaque *CUDAGuardHandle;
struct DeviceGuardOpaque;
typedef struct DeviceGuardOpaque *DeviceGuardHandle;
struct StreamOpaque;
typedef struct StreamOpaque *StreamHandle;
struct AOTIProxyExecutorOpaque;
typedef struct AOTIProxyExecutorOpaque *AOTIProxyExecutorHandle;

/* c10::complex<float> / <double>: same size, alignment and by-value calling
 * convention (SSE registers) as the C++ types. */
typedef struct aotrun_complex64 {
  AOTRUN_SHIM_ALIGNAS(8) float real;
  float imag;
} aotrun_complex64;
typedef struct aotrun_complex128 {
  AOTRUN_SHIM_ALIGNAS(16) double real;
  double imag;
} aotrun_complex128;
/* c10::Half and c10::BFloat16 are 16-bit patterns. */
typedef uint16_t aotrun_half_bits;
typedef uint16_t aotrun_bfloat16_bits;

/* Constants (DESIGN.md §2.3). */
AOTRUN_SHIM_API int32_t aoti_torch_device_type_cpu(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_cuda(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_meta(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_xpu(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_mps(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_privateuse1(void);

AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e5m2(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e4m3fn(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e5m2fnuz(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e4m3fnuz(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_bfloat16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint8(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int8(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_bool(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_complex32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_complex64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_complex128(void);
/* Bytes per element; 0 (and a recorded error) for an unknown dtype. */
AOTRUN_SHIM_API size_t aoti_torch_dtype_element_size(int32_t dtype);

AOTRUN_SHIM_API int32_t aoti_torch_layout_strided(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_coo(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_csr(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_csc(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_bsr(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_bsc(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout__mkldnn(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_jagged(void);

AOTRUN_SHIM_API int32_t aoti_torch_memory_format_contiguous_format(void);
AOTRUN_SHIM_API int32_t aoti_torch_memory_format_channels_last(void);
AOTRUN_SHIM_API int32_t aoti_torch_memory_format_channels_last_3d(void);
AOTRUN_SHIM_API int32_t aoti_torch_memory_format_preserve_format(void);

/* Single-element tensor -> scalar (any device; a CUDA read is a D2H copy
 * ordered after the current stream, refused inside a graph capture). The
 * value is converted from the tensor's dtype; a value that does not fit the
 * requested type is an error. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_float16(AtenTensorHandle t, aotrun_half_bits *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_float32(AtenTensorHandle t, float *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_float64(AtenTensorHandle t, double *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint8(AtenTensorHandle t, uint8_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint16(AtenTensorHandle t, uint16_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint32(AtenTensorHandle t, uint32_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint64(AtenTensorHandle t, uint64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int8(AtenTensorHandle t, int8_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int16(AtenTensorHandle t, int16_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int32(AtenTensorHandle t, int32_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int64(AtenTensorHandle t, int64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_bool(AtenTensorHandle t, AOTRUN_SHIM_BOOL *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_bfloat16(AtenTensorHandle t, aotrun_bfloat16_bits *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_complex64(AtenTensorHandle t, aotrun_complex64 *ret);

/* Scalar -> new 0-d CPU tensor (as libtorch's at::scalar_tensor). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_float32(float v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_float64(double v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint8(uint8_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint16(uint16_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint32(uint32_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint64(uint64_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int8(int8_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int16(int16_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int32(int32_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int64(int64_t v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_bool(AOTRUN_SHIM_BOOL v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_complex64(aotrun_complex64 v, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_complex128(aotrun_complex128 v, AtenTensorHandle *ret);

/* Thread-local grad mode (inference never records; kept for the ABI). */
AOTRUN_SHIM_API AOTRUN_SHIM_BOOL aoti_torch_grad_mode_is_enabled(void);
AOTRUN_SHIM_API void aoti_torch_grad_mode_set_enabled(AOTRUN_SHIM_BOOL enabled);

/* Drops one reference; never fails, accepts NULL (runs in C++ destructors). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle t);

/* Attributes. Pointers returned stay valid while the handle lives. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle t, void **ret);
/* Byte size of the tensor's storage. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle t, int64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_dim(AtenTensorHandle t, int64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_numel(AtenTensorHandle t, int64_t *ret);
/* Storage byte size / element size of the tensor's dtype. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle t, int64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_sizes(AtenTensorHandle t, int64_t **ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_size(AtenTensorHandle t, int64_t d, int64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_strides(AtenTensorHandle t, int64_t **ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_stride(AtenTensorHandle t, int64_t d, int64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_dtype(AtenTensorHandle t, int32_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_device_type(AtenTensorHandle t, int32_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_device_index(AtenTensorHandle t, int32_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_layout(AtenTensorHandle t, int32_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle t, int64_t *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle t, AOTRUN_SHIM_BOOL *ret);
/* *ret = 0 for a handle from new_uninitialized_tensor (NULL is an error). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_is_defined(AtenTensorHandle t, AOTRUN_SHIM_BOOL *ret);

/* Creation. ndim 0 may come with NULL sizes/strides. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig, AtenTensorHandle *ret);
/* A view of self's storage (self: storage offset 0) at offset_bytes. */
AOTRUN_SHIM_API AOTITorchError aoti_torch__alloc_from_pool(
    AtenTensorHandle self, int64_t offset_bytes, int32_t dtype, int64_t ndim,
    const int64_t *sizes, const int64_t *strides, AtenTensorHandle *ret);
/* A view of self's storage; storage_offset is ADDED to self's offset. */
AOTRUN_SHIM_API AOTITorchError aoti_torch__reinterpret_tensor(
    AtenTensorHandle self, int64_t ndim, const int64_t *sizes,
    const int64_t *strides, int64_t storage_offset, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_empty_strided(
    int64_t ndim, const int64_t *sizes, const int64_t *strides, int32_t dtype,
    int32_t device_type, int32_t device_index, AtenTensorHandle *ret);
/* Page-locked host memory (cudaMallocHost); device_type must be cpu. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_empty_strided_pinned(
    int64_t ndim, const int64_t *sizes, const int64_t *strides, int32_t dtype,
    int32_t device_type, int32_t device_index, AtenTensorHandle *ret);
/* self's ndim, self's storage offset. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_as_strided(
    AtenTensorHandle self, const int64_t *sizes, const int64_t *strides,
    AtenTensorHandle *ret);
/* Never owns data (data is the storage base; element 0 is at
 * data + storage_offset * itemsize). data may be NULL only for a tensor
 * with no elements. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_tensor_from_blob(
    void *data, int64_t ndim, const int64_t *sizes, const int64_t *strides,
    int64_t storage_offset, int32_t dtype, int32_t device_type,
    int32_t device_index, AtenTensorHandle *ret);
/* As above; layout must be strided, opaque metadata is ignored. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_tensor_from_blob_v2(
    void *data, int64_t ndim, const int64_t *sizes, const int64_t *strides,
    int64_t storage_offset, int32_t dtype, int32_t device_type,
    int32_t device_index, AtenTensorHandle *ret, int32_t layout,
    const uint8_t *opaque_metadata, int64_t opaque_metadata_size);
AOTRUN_SHIM_API AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle *ret);

/* Copies. copy_ is dst first; src broadcasts to dst; any strides, dtype
 * conversion between real dtypes, CPU<->CUDA in every direction. Copies
 * touching host memory are refused inside a graph capture. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking);
/* Deprecated libtorch spelling: src FIRST. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src, AtenTensorHandle dst);
/* dst becomes an alias of src's tensor (both handles still deleted). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src, AtenTensorHandle dst);
AOTRUN_SHIM_API AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src, AtenTensorHandle *ret_dst);
/* preserve_format: dense tensors keep their strides, others get dense
 * strides in the same dim order (libtorch's clone()). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle *ret);
/* Copies the whole strided span, keeps sizes and strides, offset 0. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self, AtenTensorHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_zero_(AtenTensorHandle self);

/* Diagnostics. */
AOTRUN_SHIM_API void aoti_torch_print_tensor_handle(AtenTensorHandle self, const char *msg);
AOTRUN_SHIM_API void aoti_torch_warn(const char *func, const char *file, uint32_t line, const char *msg);
/* The only shim that aborts: C cannot throw (says so on stderr). */
AOTRUN_SHIM_API void aoti_torch_check(AOTRUN_SHIM_BOOL cond, const char *func, const char *file, uint32_t line, const char *msg);
/* There is no proxy executor: always fails with a message. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_proxy_executor_call_function(
    AOTIProxyExecutorHandle proxy_executor, int extern_node_index,
    int num_ints, int64_t *flatten_int_args, int num_tensors,
    AtenTensorHandle *flatten_tensor_args);

/* Guards and streams. The stream guard sets the thread's current stream for
 * device_index and makes device_index current; delete restores both.
 * Guards nest (delete in reverse order). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_cuda_stream_guard(void *stream, int32_t device_index, CUDAStreamGuardHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard);
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index, CUDAGuardHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle guard);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle guard, int32_t device_index);
/* device_index -1: the current device. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void **ret_stream);
/* Device-generic spellings (CUDA is the only device with guards here). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_device_guard(int32_t device_index, DeviceGuardHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle guard);
AOTRUN_SHIM_API AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle guard, int32_t device_index);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_current_stream(int32_t device_index, StreamHandle *ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_stream(StreamHandle stream);
AOTRUN_SHIM_API AOTITorchError aoti_torch_stream_id(StreamHandle stream, int64_t *ret_stream_id);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_current_device_index(int32_t *ret_device_index);

/* Raw device memory on the current device, stream-ordered on the current
 * stream through the thread's allocator; delete accepts only pointers from
 * raw_alloc (NULL is a no-op). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_caching_allocator_raw_alloc(uint64_t nbytes, void **ret_ptr);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_caching_allocator_raw_delete(void *ptr);


#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_H */
