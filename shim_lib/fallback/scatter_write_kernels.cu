// scatter_write_kernels.cu: the scatter kernels that only write: a fill with
// one value (scatter.value, the identity fill of scatter_reduce without
// self) and scatter src with per-line winners in shared memory.
#include <cuda_runtime.h>

#include <cstring>

#include "shim_lib/fallback/scatter_device.cuh"

namespace aotrun_scatter {
namespace {

template <typename T>
__global__ void fill_kernel(aotrun_fb_scatter_items it, T value,
                            aotrun_fb_scatter_report r) {
  T *out = reinterpret_cast<T *>(it.out);
  const int64_t step = it.out_strides[it.dim];
  for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
       p < it.numel; p += (int64_t)gridDim.x * blockDim.x) {
    ItemOffsets o = item_offsets(it, p);
    int64_t v = read_index(it, o.index);
    if (index_ok(it, r, v)) out[o.out + v * step] = value;
  }
}

template <typename T>
cudaError_t launch_fill(const aotrun_fb_scatter_items &it, const void *value,
                        const aotrun_fb_scatter_report &r,
                        cudaStream_t stream) {
  T v;
  memcpy(&v, value, sizeof v);
  fill_kernel<T><<<grid_for(it.numel, 256), 256, 0, stream>>>(it, v, r);
  return cudaGetLastError();
}

// One block per line. win[t] = 1 + the largest position along dim that
// names target t of the line (0: none); that item's write is the last one
// in index order, so it alone writes.
template <typename T>
__global__ void lines_kernel(aotrun_fb_scatter_items it, int64_t lines,
                             aotrun_fb_scatter_report r) {
  extern __shared__ unsigned int win[];
  T *out = reinterpret_cast<T *>(it.out);
  const T *src = reinterpret_cast<const T *>(it.src);
  const int64_t len = it.sizes[it.dim];
  const int64_t istep = it.index_strides[it.dim];
  const int64_t sstep = it.src_strides[it.dim];
  const int64_t ostep = it.out_strides[it.dim];
  const int targets = (int)it.dim_size;
  for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
    ItemOffsets b = line_base(it, l);
    for (int t = threadIdx.x; t < targets; t += blockDim.x) win[t] = 0;
    __syncthreads();
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      int64_t v = read_index(it, b.index + k * istep);
      if (index_ok(it, r, v)) atomicMax(&win[v], (unsigned int)(k + 1));
    }
    __syncthreads();
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      int64_t v = read_index(it, b.index + k * istep);
      if (v >= 0 && v < targets && win[v] == (unsigned int)(k + 1))
        out[b.out + v * ostep] = src[b.src + k * sstep];
    }
    __syncthreads();  // win is reset for the next line
  }
}

template <typename T>
cudaError_t launch_lines(const aotrun_fb_scatter_items &it,
                         const aotrun_fb_scatter_report &r,
                         cudaStream_t stream) {
  const int64_t lines = it.numel / it.sizes[it.dim];
  int64_t blocks = lines < 65535 * 16 ? lines : 65535 * 16;
  size_t smem = (size_t)it.dim_size * sizeof(unsigned int);
  lines_kernel<T><<<(unsigned)blocks, 256, smem, stream>>>(it, lines, r);
  return cudaGetLastError();
}

}  // namespace
}  // namespace aotrun_scatter

using namespace aotrun_scatter;

extern "C" cudaError_t aotrun_fb_scatter_fill(const aotrun_fb_scatter_items *it,
                                              const void *value,
                                              size_t elem_size,
                                              const aotrun_fb_scatter_report *r,
                                              cudaStream_t stream) {
  if (it->numel <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return launch_fill<unsigned char>(*it, value, *r, stream);
    case 2: return launch_fill<unsigned short>(*it, value, *r, stream);
    case 4: return launch_fill<unsigned int>(*it, value, *r, stream);
    case 8: return launch_fill<unsigned long long>(*it, value, *r, stream);
    case 16: return launch_fill<Bytes16>(*it, value, *r, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t aotrun_fb_scatter_lines(const aotrun_fb_scatter_items *it,
                                               size_t elem_size,
                                               const aotrun_fb_scatter_report *r,
                                               cudaStream_t stream) {
  if (it->numel <= 0) return cudaSuccess;
  if (it->dim_size < 1 || it->dim_size > AOTRUN_FB_SCATTER_LINE_MAX ||
      it->sizes[it->dim] >= 0xffffffffLL)
    return cudaErrorInvalidValue;
  switch (elem_size) {
    case 1: return launch_lines<unsigned char>(*it, *r, stream);
    case 2: return launch_lines<unsigned short>(*it, *r, stream);
    case 4: return launch_lines<unsigned int>(*it, *r, stream);
    case 8: return launch_lines<unsigned long long>(*it, *r, stream);
    case 16: return launch_lines<Bytes16>(*it, *r, stream);
    default: return cudaErrorInvalidValue;
  }
}
