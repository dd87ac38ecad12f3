/*
 * conv.h: aoti_torch_cuda_convolution on cuDNN 9 (legacy convolution API).
 *
 * conv_args.c checks the arguments and plans the call without touching CUDA
 * (so errors show on machines without a GPU): a 1-D convolution runs as a
 * 2-D one with a unit height (ATen's view4d), and the memory format is
 * ATen's cudnn_conv_suggest_memory_format: channels-last (NHWC / NDHWC)
 * when the input or the weight has channels-last strides (never for
 * float64, never for 1-D input), contiguous otherwise. The result gets
 * that format; an input or weight that is not dense in it is copied first.
 *
 * cudnn_loader.c opens libcudnn.so.9 with dlopen at the first convolution
 * (libaotrun_shim.so does not link cuDNN); cudnn_stream.c sets a handle's
 * stream only when it changes. conv_cache.c keeps the algorithm
 * chosen per shape / dtype / layout key. conv_run.c runs it: cuDNN's part
 * on the backend (graph) API (conv_graph.h), falling back to the legacy
 * API per key; AOTRUN_CONV_API=legacy keeps it on the legacy API.
 *
 * CUDA graphs: the first call for a key (outside a capture) benchmarks the
 * algorithms with cudnnFind*AlgorithmEx, which runs kernels and synchronises;
 * later calls only query the cache, so they capture. A key first seen
 * inside a capture uses the heuristic query (cudnnGet*Algorithm_v7, no
 * kernels) and is benchmarked again at its next call outside a capture.
 * Each thread's first convolution on a device creates its cuDNN handle
 * (cudaMalloc inside cuDNN): run it outside a capture.
 */
#ifndef AOTRUN_FALLBACK_CONV_H
#define AOTRUN_FALLBACK_CONV_H

#include <cudnn.h>

#include "shim_lib/fallback/fallback_kernels.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/fallback_tensor.h"

#define AOTRUN_FB_CONV_MAX_RUN_DIMS 5 /* N, C and up to 3 spatial dims */

typedef struct aotrun_fb_conv {
  const char *op;
  int32_t dtype, device;
  size_t elem_size;
  int transposed;
  int64_t groups;
  int nd;            /* spatial dims of the call: 1, 2 or 3 */
  int rd;            /* dims as run by cuDNN: 4 (1-D and 2-D) or 5 */
  int channels_last; /* NHWC / NDHWC */
  /* Input, weight and output as run (rd dims, NCHW order of dims). */
  char *in_data, *w_data;
  int64_t in_sizes[5], in_strides[5];
  int64_t w_sizes[5], w_strides[5];
  int64_t out_sizes[5], out_strides[5];
  /* Spatial parameters as run (rd - 2 values). */
  int64_t stride[3], pad[3], dil[3], out_pad[3];
  int has_bias;
  char *bias_data;
  int64_t bias_stride;
  /* The result as returned (nd + 2 dims). */
  int64_t ret_ndim, ret_sizes[5], ret_strides[5];
  /* What cuDNN computes: its output ("dx" of a transposed convolution;
   * rd dims, dense in the result's format) and its padding. Equal to
   * out_sizes / pad unless `windowed` (conv_transposed.c): then the
   * result is the window of dx at dx_offset, zeros past dx's end. */
  int windowed;
  int64_t dx_sizes[5], dx_strides[5], dx_pad[3], dx_offset[3];
} aotrun_fb_conv;

/* One spatial dim of a transposed convolution as cuDNN runs it
 * (conv_transposed.c). cudnnConvolutionBackwardData takes dx only as the
 * exact forward input of dy: floor((dx + 2 pad - dk) / stride) + 1 must
 * equal `in` (dk = dil * (k - 1) + 1). PyTorch's output size
 * (in - 1) * stride - 2 pad + dk + out_pad meets that only while out_pad
 * < stride (ATen leaves cuDNN otherwise: is_output_padding_big). A larger
 * out_pad (allowed when it is below the dilation) runs with padding 0 on
 * the full dx, (in - 1) * stride + dk, and the result is its window at
 * offset `pad`, zeros past the end of dx. */
typedef struct aotrun_fb_conv_tdim {
  int64_t out;    /* the result's size (PyTorch's formula) */
  int64_t dx;     /* dx's size as given to cuDNN */
  int64_t pad;    /* cuDNN's padding */
  int64_t offset; /* result[j] = dx[j + offset]; 0 where j + offset >= dx */
} aotrun_fb_conv_tdim;

AOTRUN_FB_HIDDEN void aotrun_fb_conv_transposed_dim(
    int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dil,
    int64_t out_pad, aotrun_fb_conv_tdim *d);

/* Elements of the result taken from dx in spatial dim i of a windowed
 * plan: min(out, dx - offset), at least 0. */
AOTRUN_FB_HIDDEN int64_t aotrun_fb_conv_window_extent(const aotrun_fb_conv *c,
                                                      int i);

AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_conv_args(
    const char *op, AtenTensorHandle input, AtenTensorHandle weight,
    AtenTensorHandle *bias, const int64_t *stride, int64_t stride_len,
    const int64_t *padding, int64_t padding_len, const int64_t *dilation,
    int64_t dilation_len, int32_t transposed, const int64_t *output_padding,
    int64_t output_padding_len, int64_t groups, aotrun_fb_conv *c);

/* ATen's is_channels_last_strides_2d (4 dims) / _3d (5 dims). */
AOTRUN_FB_HIDDEN int aotrun_fb_is_channels_last_strides(const int64_t *sizes,
                                                        const int64_t *strides,
                                                        int64_t ndim);
/* Dense strides of a 4-D / 5-D shape, channels-last or contiguous. */
AOTRUN_FB_HIDDEN void aotrun_fb_format_strides(const int64_t *sizes,
                                               int64_t ndim, int channels_last,
                                               int64_t *strides);

/* Windowed plan: result y <- the window of dx (zeros past dx's end) on
 * stream. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_conv_window_copy(
    const aotrun_fb_conv *c, const aotrun_fb_temps *temps, const void *dx,
    void *y, cudaStream_t stream);

/* The problem in words for messages ("2d float16, input [...], weight
 * [...], output [...], groups 1"), written at its first use: a call that
 * prints nothing formats nothing (conv_run.c). */
typedef struct aotrun_fb_conv_what {
  const aotrun_fb_conv *c;
  char text[400];
} aotrun_fb_conv_what;
AOTRUN_FB_HIDDEN const char *aotrun_fb_conv_what_text(aotrun_fb_conv_what *w);

/* Runs the planned convolution; *ret is the new result. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_conv_run(const aotrun_fb_conv *c,
                                                   AtenTensorHandle *ret);

/* ---- algorithm cache (conv_cache.c), thread safe ---- */

/* Everything the algorithm choice depends on; all int64 (no padding), so
 * keys compare with memcmp. */
typedef struct aotrun_fb_conv_key {
  int64_t device, dtype, transposed, channels_last, rd, groups, alignment;
  int64_t tf32; /* AOTRUN_CONV_TF32 for float32: another choice */
  int64_t in[5], w[5], out[5];
  int64_t stride[3], pad[3], dil[3];
} aotrun_fb_conv_key;

typedef struct aotrun_fb_conv_algo {
  int algo;          /* cudnnConvolutionFwdAlgo_t or ...BwdDataAlgo_t */
  int math_type;     /* cudnnMathType_t to set on the descriptor */
  size_t workspace;  /* bytes */
  int from_heuristic; /* chosen in a capture: benchmark at the next call */
} aotrun_fb_conv_algo;

#define AOTRUN_FB_CONV_CACHE_CAPACITY 1024

/* alignment: the smallest alignment (bytes, at most 16) of the input,
 * weight and output pointers. */
AOTRUN_FB_HIDDEN void aotrun_fb_conv_key_of(const aotrun_fb_conv *c,
                                            int64_t alignment,
                                            aotrun_fb_conv_key *key);
/* 1 and *algo when the key is cached, else 0. */
AOTRUN_FB_HIDDEN int aotrun_fb_conv_cache_lookup(const aotrun_fb_conv_key *key,
                                                 aotrun_fb_conv_algo *algo);
/* Inserts or replaces; when full, replaces the oldest insertion. */
AOTRUN_FB_HIDDEN void aotrun_fb_conv_cache_store(const aotrun_fb_conv_key *key,
                                                 const aotrun_fb_conv_algo *algo);
AOTRUN_FB_HIDDEN int aotrun_fb_conv_cache_size(void);
AOTRUN_FB_HIDDEN void aotrun_fb_conv_cache_clear(void);
/* Destroys the cuDNN handles of every thread and clears the algorithm
 * cache (aotrun_shim_release_process_state): only while no convolution
 * runs or is queued. cuDNN itself stays loaded: it is opened once per
 * process and its own sub-libraries are not known to be unload-safe. */
AOTRUN_FB_HIDDEN void aotrun_fb_conv_release_all(void);

/* ---- cuDNN, opened at run time (cudnn_loader.c) ---- */

#define AOTRUN_FB_CUDNN_FN(name) __typeof__(name) *name
typedef struct aotrun_fb_cudnn_api {
  size_t version; /* cudnnGetVersion() */
  AOTRUN_FB_CUDNN_FN(cudnnGetVersion);
  AOTRUN_FB_CUDNN_FN(cudnnGetErrorString);
  AOTRUN_FB_CUDNN_FN(cudnnCreate);
  AOTRUN_FB_CUDNN_FN(cudnnDestroy);
  AOTRUN_FB_CUDNN_FN(cudnnSetStream);
  AOTRUN_FB_CUDNN_FN(cudnnCreateTensorDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnDestroyTensorDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnSetTensorNdDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnCreateFilterDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnDestroyFilterDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnSetFilterNdDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnCreateConvolutionDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnDestroyConvolutionDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnSetConvolutionNdDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnSetConvolutionGroupCount);
  AOTRUN_FB_CUDNN_FN(cudnnSetConvolutionMathType);
  AOTRUN_FB_CUDNN_FN(cudnnGetConvolutionForwardAlgorithmMaxCount);
  AOTRUN_FB_CUDNN_FN(cudnnGetConvolutionForwardAlgorithm_v7);
  AOTRUN_FB_CUDNN_FN(cudnnFindConvolutionForwardAlgorithmEx);
  AOTRUN_FB_CUDNN_FN(cudnnGetConvolutionForwardWorkspaceSize);
  AOTRUN_FB_CUDNN_FN(cudnnConvolutionForward);
  AOTRUN_FB_CUDNN_FN(cudnnGetConvolutionBackwardDataAlgorithmMaxCount);
  AOTRUN_FB_CUDNN_FN(cudnnGetConvolutionBackwardDataAlgorithm_v7);
  AOTRUN_FB_CUDNN_FN(cudnnFindConvolutionBackwardDataAlgorithmEx);
  AOTRUN_FB_CUDNN_FN(cudnnGetConvolutionBackwardDataWorkspaceSize);
  AOTRUN_FB_CUDNN_FN(cudnnConvolutionBackwardData);
  /* The backend (graph) API (conv_graph_*.c): in libcudnn_graph.so.9,
   * re-exported by libcudnn.so.9. */
  AOTRUN_FB_CUDNN_FN(cudnnBackendCreateDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnBackendDestroyDescriptor);
  AOTRUN_FB_CUDNN_FN(cudnnBackendSetAttribute);
  AOTRUN_FB_CUDNN_FN(cudnnBackendGetAttribute);
  AOTRUN_FB_CUDNN_FN(cudnnBackendFinalize);
  AOTRUN_FB_CUDNN_FN(cudnnBackendExecute);
} aotrun_fb_cudnn_api;
#undef AOTRUN_FB_CUDNN_FN

/* A cuDNN handle and the stream it was last given (cudnn_stream.c).
 * Setting the stream costs microseconds a call (cuDNN's "Framework
 * integration performance" guide), so it is set only when it changes.
 * All zero: no handle, no stream set. */
typedef struct aotrun_fb_cudnn_handle {
  cudnnHandle_t handle;
  cudaStream_t stream;
  int stream_set;
} aotrun_fb_cudnn_handle;
/* h->handle on `stream`: cudnnSetStream unless it already is. */
AOTRUN_FB_HIDDEN cudnnStatus_t aotrun_fb_cudnn_use_stream(
    const aotrun_fb_cudnn_api *api, aotrun_fb_cudnn_handle *h,
    cudaStream_t stream);

/* The default library name; the environment variable AOTRUN_CUDNN_LIBRARY
 * (a name or a path) overrides it. */
#define AOTRUN_FB_CUDNN_LIBRARY "libcudnn.so.9"

/* Opens cuDNN once (later calls return the same table); on failure the
 * error names op, the library and dlerror()'s text, and the next call
 * tries again. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_cudnn_load(
    const char *op, const aotrun_fb_cudnn_api **api);
/* Test seam: the library to open instead of the default / environment
 * (NULL restores them). Takes effect only while cuDNN is not loaded yet;
 * returns 0 then, -1 once it is loaded. */
AOTRUN_FB_HIDDEN int aotrun_fb_cudnn_set_library(const char *name);

#endif /* AOTRUN_FALLBACK_CONV_H */
