// copy_kernels.cu: the CUDA strided copy behind aoti_torch_copy_, clone and
// zero_ (any strides, optional dtype conversion, zero fill).
#include <cuda_runtime.h>

#include "shim_lib/copy_kernels.h"
#include "shim_lib/dtype.h"
#include "shim_lib/scalar_convert.h"

namespace {

struct Bytes16 {
  unsigned long long a, b;
};

// Element offsets of linear index i on each side.
__device__ inline void offsets(const aotrun_copy_plan &p, int64_t i,
                               int64_t *dst_off, int64_t *src_off) {
  int64_t d = 0, s = 0;
  for (int k = p.ndim - 1; k >= 0; k--) {
    int64_t idx = i % p.sizes[k];
    i /= p.sizes[k];
    d += idx * p.dst_strides[k];
    s += idx * p.src_strides[k];
  }
  *dst_off = d;
  *src_off = s;
}

// Same dtype: move T-sized elements (src NULL: zeros).
template <typename T>
__global__ void copy_same(T *dst, const T *src, aotrun_copy_plan p) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < p.numel;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t d, s;
    offsets(p, i, &d, &s);
    if (src) {
      dst[d] = src[s];
    } else {
      T zero;
      memset(&zero, 0, sizeof zero);
      dst[d] = zero;
    }
  }
}

// Real dtypes: load, convert, store (the same code as the host's).
__global__ void copy_convert(char *dst, int32_t dst_dtype, size_t dst_item,
                             const char *src, int32_t src_dtype,
                             size_t src_item, aotrun_copy_plan p) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < p.numel;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t d, s;
    offsets(p, i, &d, &s);
    aotrun_value v = aotrun_load(src + s * (int64_t)src_item, src_dtype);
    aotrun_store(dst + d * (int64_t)dst_item, dst_dtype, v);
  }
}

__host__ __device__ size_t item_size(int32_t dtype) {
  switch (dtype) {
    case AOTRUN_DT_BOOL: case AOTRUN_DT_UINT8: case AOTRUN_DT_INT8:
    case AOTRUN_DT_FLOAT8_E5M2: case AOTRUN_DT_FLOAT8_E4M3FN:
    case AOTRUN_DT_FLOAT8_E5M2FNUZ: case AOTRUN_DT_FLOAT8_E4M3FNUZ:
      return 1;
    case AOTRUN_DT_INT16: case AOTRUN_DT_UINT16: case AOTRUN_DT_FLOAT16:
    case AOTRUN_DT_BFLOAT16:
      return 2;
    case AOTRUN_DT_INT32: case AOTRUN_DT_UINT32: case AOTRUN_DT_FLOAT32:
    case AOTRUN_DT_COMPLEX32:
      return 4;
    case AOTRUN_DT_INT64: case AOTRUN_DT_UINT64: case AOTRUN_DT_FLOAT64:
    case AOTRUN_DT_COMPLEX64:
      return 8;
    case AOTRUN_DT_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

template <typename T>
cudaError_t launch_same(void *dst, const void *src,
                        const aotrun_copy_plan &p, unsigned blocks,
                        cudaStream_t stream) {
  copy_same<T><<<blocks, 256, 0, stream>>>(static_cast<T *>(dst),
                                           static_cast<const T *>(src), p);
  return cudaGetLastError();
}

}  // namespace

extern "C" int aotrun_cuda_strided_copy(void *dst, int32_t dst_dtype,
                                        const void *src, int32_t src_dtype,
                                        const aotrun_copy_plan *plan,
                                        void *stream_ptr) {
  if (plan->numel == 0) return cudaSuccess;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  int64_t want = (plan->numel + 255) / 256;
  unsigned blocks = want > 65536 ? 65536u : static_cast<unsigned>(want);
  if (src == nullptr || dst_dtype == src_dtype) {
    switch (item_size(dst_dtype)) {
      case 1: return launch_same<unsigned char>(dst, src, *plan, blocks, stream);
      case 2: return launch_same<unsigned short>(dst, src, *plan, blocks, stream);
      case 4: return launch_same<unsigned int>(dst, src, *plan, blocks, stream);
      case 8: return launch_same<unsigned long long>(dst, src, *plan, blocks, stream);
      case 16: return launch_same<Bytes16>(dst, src, *plan, blocks, stream);
      default: return cudaErrorInvalidValue;
    }
  }
  copy_convert<<<blocks, 256, 0, stream>>>(
      static_cast<char *>(dst), dst_dtype, item_size(dst_dtype),
      static_cast<const char *>(src), src_dtype, item_size(src_dtype), *plan);
  return cudaGetLastError();
}
