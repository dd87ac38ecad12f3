// index_kernels.cu: the gather of aoti_torch_cuda_index_Tensor (and of
// masked_select): every (item, column) of the result reads one element of
// self. Index values are read, normalised and bounds-checked inline, so an
// integer index needs no extra pass and no host synchronisation.
#include <cuda_runtime.h>

#include "shim_lib/fallback/index_device.cuh"
#include "shim_lib/fallback/index_kernels.h"

namespace {

using aotrun_fb::Units;

template <typename T>
__global__ void gather_kernel(T *out, const T *self, aotrun_fb_ix_items it,
                              aotrun_fb_ix_cols cols, Units u,
                              aotrun_device_error *err) {
  const int64_t g = int64_t(1) << u.lg;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t lane = tid & (g - 1);
  const int64_t groups = (int64_t(gridDim.x) * blockDim.x) >> u.lg;
  for (int64_t unit = tid >> u.lg; unit < u.n_units; unit += groups) {
    int64_t b = u.nchunks == 1 ? unit : unit / u.nchunks;
    int64_t c = unit - b * u.nchunks;
    int64_t ob = 0;
    bool bad;
    int64_t pick = aotrun_fb::item_pick(it, b, cols.item_dst, &ob, err, &bad);
    int64_t q_end = (c + 1) * u.chunk;
    if (q_end > cols.numel) q_end = cols.numel;
    for (int64_t q = c * u.chunk + lane; q < q_end; q += g) {
      int64_t so, oo;
      aotrun_fb::col_offsets(cols, q, &so, &oo);
      out[ob + oo] = self[pick + so];
    }
  }
}

template <typename T>
cudaError_t launch(void *out, const void *self, const aotrun_fb_ix_items &it,
                   const aotrun_fb_ix_cols &cols, aotrun_device_error *err,
                   cudaStream_t stream) {
  Units u = aotrun_fb::plan_units(it.b_numel, cols.numel, 4);
  if (u.n_units == 0) return cudaSuccess;
  gather_kernel<T><<<aotrun_fb::grid_for_units(u), aotrun_fb::kThreads, 0,
                     stream>>>(static_cast<T *>(out),
                               static_cast<const T *>(self), it, cols, u, err);
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t aotrun_fb_index_gather(
    void *out, const void *self, size_t elem_size,
    const aotrun_fb_ix_items *items, const aotrun_fb_ix_cols *cols,
    aotrun_device_error *err, cudaStream_t stream) {
  switch (elem_size) {
    case 1: return launch<unsigned char>(out, self, *items, *cols, err, stream);
    case 2: return launch<unsigned short>(out, self, *items, *cols, err, stream);
    case 4: return launch<unsigned int>(out, self, *items, *cols, err, stream);
    case 8: return launch<unsigned long long>(out, self, *items, *cols, err, stream);
    case 16: return launch<aotrun_fb::Bytes16>(out, self, *items, *cols, err, stream);
    default: return cudaErrorInvalidValue;
  }
}
