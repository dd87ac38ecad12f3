/* scatter_run.c: runs a checked scatter plan on the current stream:
 * out = self, then the kernels of the plan's kind:
 *   value            fill (every writer of a target writes the same bits)
 *   src              per-line winners in shared memory when dim is index's
 *                    fastest dim and self.size(dim) fits, else the sort
 *                    engine with "last value wins"
 *   amax, amin       compare-and-swap under a total order (after an
 *                    identity fill of the named targets without self)
 *   sum, prod, mean  the sort engine (scatter_engine.c)
 * Nothing synchronises, so a call can be captured into a CUDA graph (the
 * device error slot must exist already: call once outside the capture). */
#include <stdio.h>
#include <string.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/scatter_math.h"
#include "shim_lib/fallback/scatter_plan.h"

static const char kIndexArg[] = "index";

static int64_t ne_size(const aotrun_fb_tensor *t, int64_t d) {
  return t->ndim > 0 ? t->sizes[d] : 1;
}

static int64_t ne_stride(const aotrun_fb_tensor *t, int64_t d) {
  return t->ndim > 0 ? t->strides[d] : 1;
}

void aotrun_fb_scatter_items_build(const aotrun_fb_scatter_plan *p,
                                   aotrun_fb_scatter_items *it) {
  memset(it, 0, sizeof *it);
  it->index = p->index.data;
  it->src = p->has_src ? p->src.data : NULL;
  it->out = p->out.data;
  it->index_is_int32 = p->index.dtype == AOTRUN_FB_INT32;
  const int64_t nd = p->index.ndim > 0 ? p->index.ndim : 1;
  int32_t k = 0;
  for (int64_t d = 0; d < nd; d++) {
    int64_t size = ne_size(&p->index, d);
    if (d != p->dim && size == 1) continue; /* adds nothing to offsets */
    if (d == p->dim) it->dim = k;
    it->sizes[k] = size;
    it->index_strides[k] = ne_stride(&p->index, d);
    it->src_strides[k] = p->has_src ? ne_stride(&p->src, d) : 0;
    it->out_strides[k] = ne_stride(&p->out, d);
    k++;
  }
  it->ndim = k;
  it->numel = p->index_numel;
  it->dim_size = ne_size(&p->self, p->dim);
  it->narrow = p->index_numel < ((int64_t)1 << 31);
}

/* Same sizes and strides and dense: one memcpy of numel elements. */
static int same_dense_layout(const aotrun_fb_tensor *a,
                             const aotrun_fb_tensor *b, int64_t numel) {
  uint64_t last = 0;
  for (int64_t d = 0; d < a->ndim; d++) {
    if (a->sizes[d] < 2) continue;
    if (a->strides[d] != b->strides[d]) return 0;
    last += (uint64_t)(a->sizes[d] - 1) * (uint64_t)a->strides[d];
  }
  return last + 1 == (uint64_t)numel; /* out is non-overlapping: a bijection */
}

AOTITorchError aotrun_fb_scatter_copy_self(const aotrun_fb_scatter_plan *p,
                                           aotrun_fb_temps *temps,
                                           cudaStream_t stream) {
  int overflow = 0;
  int64_t numel = aotrun_fb_numel(p->out.sizes, p->out.ndim, &overflow);
  if (p->in_place || numel == 0) return AOTI_TORCH_SUCCESS;
  if (same_dense_layout(&p->out, &p->self, numel)) {
    cudaError_t e = cudaMemcpyAsync(p->out.data, p->self.data,
                                    (size_t)numel * p->self.elem_size,
                                    cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess)
      return aotrun_shim_fail("%s: copying 'self' into 'out' failed: %s",
                              p->op, cudaGetErrorString(e));
    return AOTI_TORCH_SUCCESS;
  }
  return aotrun_fb_copy(temps, "'self' into 'out'", p->out.data,
                        p->out.strides, p->self.data, p->self.strides,
                        p->self.sizes, p->self.ndim, p->self.elem_size, stream);
}

/* Per-line winners read index coalesced only when dim is its fastest dim;
 * one block per line also wants enough lines (or short ones). */
static int lines_fit(const aotrun_fb_scatter_items *it) {
  int64_t len = it->sizes[it->dim];
  if (it->dim_size < 1 || it->dim_size > AOTRUN_FB_SCATTER_LINE_MAX ||
      len >= 0xffffffffLL)
    return 0;
  for (int32_t d = 0; d < it->ndim; d++)
    if (d != it->dim && it->index_strides[d] < it->index_strides[it->dim])
      return 0;
  return it->numel / len >= 64 || len <= 4096;
}

static AOTITorchError launched(const aotrun_fb_scatter_plan *p,
                               const char *what, cudaError_t e) {
  if (e == cudaSuccess) return AOTI_TORCH_SUCCESS;
  return aotrun_shim_fail("%s: launching %s failed: %s", p->op, what,
                          cudaGetErrorString(e));
}

static AOTITorchError run_extreme(const aotrun_fb_scatter_plan *p,
                                  const aotrun_fb_scatter_items *it,
                                  const aotrun_fb_scatter_report *r,
                                  cudaStream_t stream) {
  const int is_min = p->kind == AOTRUN_FB_SCATTER_AMIN;
  const int32_t dt = p->self.dtype;
  if (!p->include_self) { /* named targets start from the identity */
    uint64_t id = aotrun_sm_extreme_identity(dt, is_min);
    AOTITorchError err = launched(
        p, "the identity fill",
        aotrun_fb_scatter_fill(it, &id, p->self.elem_size, r, stream));
    if (err) return err;
  }
  return launched(p, "the amax/amin kernel",
                  aotrun_fb_scatter_extreme(it, dt, is_min, r, stream));
}

static AOTITorchError run_kind(const aotrun_fb_scatter_plan *p,
                               aotrun_fb_temps *temps, cudaStream_t stream) {
  aotrun_fb_scatter_items it;
  aotrun_fb_scatter_items_build(p, &it);
  aotrun_fb_scatter_report r;
  memset(&r, 0, sizeof r);
  if (aotrun_shim_device_error_slot(p->self.device_index, &r.slot)) {
    char why[256]; /* the message buffer is rewritten by the next fail */
    snprintf(why, sizeof why, "%s", aotrun_shim_last_error());
    return aotrun_shim_fail("%s: %s", p->op, why);
  }
  r.op = (uint64_t)(uintptr_t)p->op;
  r.arg = (uint64_t)(uintptr_t)kIndexArg;
  r.dim = (int32_t)p->dim;
  switch (p->kind) {
    case AOTRUN_FB_SCATTER_VALUE:
      return launched(p, "the fill kernel",
                      aotrun_fb_scatter_fill(&it, p->value,
                                             p->self.elem_size, &r, stream));
    case AOTRUN_FB_SCATTER_SRC:
      if (lines_fit(&it))
        return launched(p, "the scatter kernel",
                        aotrun_fb_scatter_lines(&it, p->self.elem_size, &r,
                                                stream));
      return aotrun_fb_scatter_sorted(p, &it, AOTRUN_FB_SEG_ASSIGN, &r, temps,
                                      stream);
    case AOTRUN_FB_SCATTER_AMAX:
    case AOTRUN_FB_SCATTER_AMIN: return run_extreme(p, &it, &r, stream);
    case AOTRUN_FB_SCATTER_SUM:
      return aotrun_fb_scatter_sorted(p, &it, AOTRUN_FB_SEG_SUM, &r, temps,
                                      stream);
    case AOTRUN_FB_SCATTER_PROD:
      return aotrun_fb_scatter_sorted(p, &it, AOTRUN_FB_SEG_PROD, &r, temps,
                                      stream);
    case AOTRUN_FB_SCATTER_MEAN:
      return aotrun_fb_scatter_sorted(p, &it, AOTRUN_FB_SEG_MEAN, &r, temps,
                                      stream);
  }
  return aotrun_shim_fail("%s: internal error: unknown scatter kind %d",
                          p->op, (int)p->kind);
}

AOTITorchError aotrun_fb_scatter_run(const aotrun_fb_scatter_plan *p) {
  if (p->in_place && p->index_numel == 0) return AOTI_TORCH_SUCCESS;
  aotrun_fb_device_scope scope;
  AOTITorchError err =
      aotrun_fb_device_enter(p->op, p->self.device_index, &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, p->op, p->self.device_index);
  err = aotrun_fb_scatter_copy_self(p, &temps, stream);
  if (!err && p->index_numel > 0) err = run_kind(p, &temps, stream);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}
