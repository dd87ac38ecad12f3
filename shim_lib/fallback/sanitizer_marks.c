/* sanitizer_marks.c: a GEMM result's bytes marked initialised for
 * compute-sanitizer's initcheck (sanitizer_marks.h). */
#include "shim_lib/fallback/sanitizer_marks.h"

#include <pthread.h>
#include <stdlib.h>

/* NVTX v3 is header-only: it finds a tool's injection library at the first
 * call, else every call stays a no-op. */
#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExtMemCudaRt.h>

size_t aotrun_fb_result_ranges(const char *data, int64_t batch, int64_t rows,
                               int64_t cols, int64_t ld, int64_t batch_stride,
                               size_t elem_size, size_t first,
                               aotrun_fb_range *out, size_t cap) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return 0;
  int rows_packed = rows == 1 || ld == cols;
  int matrices_packed = rows_packed && (batch == 1 || batch_stride == rows * cols);
  size_t total, per_range_elems;
  if (matrices_packed) {
    total = 1;
    per_range_elems = (size_t)(batch * rows * cols);
  } else if (rows_packed) {
    total = (size_t)batch;
    per_range_elems = (size_t)(rows * cols);
  } else {
    total = (size_t)(batch * rows);
    per_range_elems = (size_t)cols;
  }
  for (size_t i = first; i < total && i - first < cap; i++) {
    /* Range i's first element: matrix i (or i / rows), row 0 (or i % rows). */
    int64_t b = rows_packed ? (int64_t)i : (int64_t)i / rows;
    int64_t r = rows_packed ? 0 : (int64_t)i % rows;
    out[i - first].ptr = data + (size_t)(b * batch_stride + r * ld) * elem_size;
    out[i - first].bytes = per_range_elems * elem_size;
  }
  return total;
}

static nvtxDomainHandle_t g_domain;
static int g_tool; /* a tool listens to NVTX: marks are worth making */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* A tool attaches to NVTX through NVTX_INJECTION64_PATH, as NVTX itself
 * looks it up; without one a mark is skipped before any work (a strided
 * result of many rows would otherwise cost ~3 ns a row per GEMM). */
static void find_tool(void) {
  const char *path = getenv("NVTX_INJECTION64_PATH");
  g_tool = path != NULL && *path != '\0';
  if (g_tool) g_domain = nvtxDomainCreateA("aotrun");
}

int aotrun_fb_nvtx_tool_attached(void) {
  pthread_once(&g_once, find_tool);
  return g_tool;
}

void aotrun_fb_mark_written(cudaStream_t stream, const char *data,
                            int64_t batch, int64_t rows, int64_t cols,
                            int64_t ld, int64_t batch_stride,
                            size_t elem_size) {
  enum { CHUNK = 32 };
  if (!aotrun_fb_nvtx_tool_attached()) return;
  aotrun_fb_range ranges[CHUNK];
  nvtxMemVirtualRangeDesc_t descs[CHUNK];
  size_t total = 1;
  for (size_t first = 0; first < total; first += CHUNK) {
    total = aotrun_fb_result_ranges(data, batch, rows, cols, ld, batch_stride,
                                    elem_size, first, ranges, CHUNK);
    size_t n = total - first < CHUNK ? total - first : CHUNK;
    for (size_t i = 0; i < n; i++)
      descs[i] = (nvtxMemVirtualRangeDesc_t){.size = ranges[i].bytes,
                                             .ptr = ranges[i].ptr};
    nvtxMemMarkInitializedBatch_t batch_desc = {
        .extCompatID = NVTX_EXT_COMPATID_MEM,
        .structSize = sizeof batch_desc,
        .regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
        .regionDescCount = n,
        .regionDescElementSize = sizeof descs[0],
        .regionDescElements = descs};
    if (n != 0) nvtxMemCudaMarkInitialized(g_domain, stream, 0, &batch_desc);
  }
}
