/* cudnn_stream.c: a cuDNN handle's stream set only when it changes (see
 * conv.h). No CUDA runtime call: tested on the CPU against the fake cuDNN. */
#include "shim_lib/fallback/conv.h"

cudnnStatus_t aotrun_fb_cudnn_use_stream(const aotrun_fb_cudnn_api *api,
                                         aotrun_fb_cudnn_handle *h,
                                         cudaStream_t stream) {
  if (h->stream_set && h->stream == stream) return CUDNN_STATUS_SUCCESS;
  cudnnStatus_t st = api->cudnnSetStream(h->handle, stream);
  /* After a failure the next call sets it again. */
  h->stream_set = st == CUDNN_STATUS_SUCCESS;
  h->stream = stream;
  return st;
}
