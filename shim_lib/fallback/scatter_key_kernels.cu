// scatter_key_kernels.cu: the inputs of the sort engine's radix sort: one
// (key, value) pair per item in index order (the stable sort keeps that
// order within a target), and the column offsets of row mode.
#include <cuda_runtime.h>

#include "shim_lib/fallback/scatter_device.cuh"

namespace aotrun_scatter {
namespace {

__device__ __forceinline__ void put(void *a, int wide, int64_t i,
                                    uint64_t v) {
  if (wide)
    static_cast<unsigned long long *>(a)[i] = v;
  else
    static_cast<unsigned int *>(a)[i] = (unsigned int)v;
}

__device__ __forceinline__ uint64_t element_bits(const char *p, int elem) {
  switch (elem) {
    case 1: return *reinterpret_cast<const unsigned char *>(p);
    case 2: return *reinterpret_cast<const unsigned short *>(p);
    case 4: return *reinterpret_cast<const unsigned int *>(p);
    default: return *reinterpret_cast<const unsigned long long *>(p);
  }
}

// key: the target's element offset in out (sentinel for a bad index);
// value: the src element's bits (carried) or its element offset.
__global__ void item_keys_kernel(aotrun_fb_scatter_items it, int elem,
                                 uint64_t sentinel, int carried, void *keys,
                                 int key64, void *vals, int val64,
                                 aotrun_fb_scatter_report r) {
  const int64_t step = it.out_strides[it.dim];
  for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
       p < it.numel; p += (int64_t)gridDim.x * blockDim.x) {
    ItemOffsets o = item_offsets(it, p);
    int64_t v = read_index(it, o.index);
    uint64_t key = sentinel, val = 0;
    if (index_ok(it, r, v)) {
      key = (uint64_t)(o.out + v * step);
      val = carried ? element_bits(it.src + o.src * elem, elem)
                    : (uint64_t)o.src;
    }
    put(keys, key64, p, key);
    put(vals, val64, p, val);
  }
}

// Row mode: key = index value along dim (dim_size when bad), value = e.
__global__ void row_keys_kernel(aotrun_fb_scatter_items it, void *keys,
                                int key64, void *vals, int val64,
                                aotrun_fb_scatter_report r) {
  const int64_t len = it.sizes[it.dim];
  const int64_t step = it.index_strides[it.dim];
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < len;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t v = read_index(it, e * step);
    put(keys, key64, e, index_ok(it, r, v) ? (uint64_t)v
                                           : (uint64_t)it.dim_size);
    put(vals, val64, e, (uint64_t)e);
  }
}

__global__ void columns_kernel(aotrun_fb_scatter_items it, int64_t cols,
                               int64_t *src_off, int64_t *out_off) {
  for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < cols;
       q += (int64_t)gridDim.x * blockDim.x) {
    ItemOffsets b = line_base(it, q);
    src_off[q] = b.src;
    out_off[q] = b.out;
  }
}

}  // namespace
}  // namespace aotrun_scatter

using namespace aotrun_scatter;

extern "C" cudaError_t aotrun_fb_scatter_item_keys(
    const aotrun_fb_scatter_items *it, size_t elem_size, uint64_t sentinel,
    int carried, void *keys, int key64, void *vals, int val64,
    const aotrun_fb_scatter_report *r, cudaStream_t stream) {
  if (it->numel <= 0) return cudaSuccess;
  if (carried && elem_size != 1 && elem_size != 2 && elem_size != 4 &&
      elem_size != 8)
    return cudaErrorInvalidValue;
  item_keys_kernel<<<grid_for(it->numel, 256), 256, 0, stream>>>(
      *it, (int)elem_size, sentinel, carried, keys, key64, vals, val64, *r);
  return cudaGetLastError();
}

extern "C" cudaError_t aotrun_fb_scatter_row_keys(
    const aotrun_fb_scatter_items *it, void *keys, int key64, void *vals,
    int val64, const aotrun_fb_scatter_report *r, cudaStream_t stream) {
  const int64_t len = it->sizes[it->dim];
  if (len <= 0) return cudaSuccess;
  row_keys_kernel<<<grid_for(len, 256), 256, 0, stream>>>(*it, keys, key64,
                                                          vals, val64, *r);
  return cudaGetLastError();
}

extern "C" cudaError_t aotrun_fb_scatter_columns(
    const aotrun_fb_scatter_items *it, int64_t *src_off, int64_t *out_off,
    cudaStream_t stream) {
  if (it->numel <= 0) return cudaSuccess;
  const int64_t cols = it->numel / it->sizes[it->dim];
  columns_kernel<<<grid_for(cols, 256), 256, 0, stream>>>(*it, cols, src_off,
                                                          out_off);
  return cudaGetLastError();
}
