/* index_masks.c: the boolean masks of an index list on the device: dense
 * flags, True counts (read back to the host) and True positions, with one
 * scratch allocation per phase however many masks there are. */
#include "shim_lib/fallback/index_tensor.h"
#include "shim_lib/fallback/mask_positions.h"

/* Flags of mask k as contiguous bytes (bool and uint8 are 1 byte). */
static AOTITorchError dense_flags(aotrun_fb_temps *temps,
                                  const aotrun_fb_index_plan *p,
                                  cudaStream_t stream,
                                  aotrun_fb_index_masks *m) {
  size_t bytes[AOTRUN_FB_MAX_DIMS];
  void *blocks[AOTRUN_FB_MAX_DIMS];
  const aotrun_fb_tensor *t[AOTRUN_FB_MAX_DIMS];
  int overflow = 0;
  m->n = 0;
  for (int i = 0; i < p->n; i++) {
    if (!p->e[i].is_mask) continue;
    t[m->n] = &p->e[i].t;
    m->numel[m->n] = aotrun_fb_numel(t[m->n]->sizes, t[m->n]->ndim, &overflow);
    bytes[m->n] = aotrun_fb_is_contiguous(t[m->n]->sizes, t[m->n]->strides,
                                          t[m->n]->ndim)
                      ? 0
                      : (size_t)m->numel[m->n];
    m->n++;
  }
  AOTITorchError err = aotrun_fb_temp_blocks(temps, m->n, bytes, blocks);
  for (int k = 0; k < m->n && !err; k++)
    err = aotrun_fb_dense_or_copy(temps, t[k]->name, t[k]->data, t[k]->sizes,
                                  t[k]->strides, t[k]->ndim, 1, blocks[k],
                                  stream, &m->flags[k]);
  return err;
}

/* Runs `kind` for every non-empty mask with one shared CUB scratch. */
static AOTITorchError run_all(aotrun_fb_temps *temps,
                              const aotrun_fb_index_plan *p, int kind,
                              aotrun_fb_mask_args *args, cudaStream_t stream) {
  size_t most = 0;
  for (int k = 0; k < p->num_masks; k++) {
    if (args[k].n == 0) continue;
    size_t b = 0;
    AOTITorchError err =
        aotrun_fb_mask_op_bytes(temps, "a mask", kind, &args[k], stream, &b);
    if (err) return err;
    if (b > most) most = b;
  }
  void *scratch = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(temps, most, &scratch);
  for (int k = 0; k < p->num_masks && !err; k++)
    if (args[k].n > 0)
      err = aotrun_fb_mask_op_run(temps, "a mask", kind, &args[k], scratch,
                                  most, stream);
  return err;
}

static void base_args(const aotrun_fb_index_masks *m, int k,
                      int64_t *d_counts, aotrun_fb_mask_args *a) {
  a->data = m->flags[k];
  a->flags = (const uint8_t *)m->flags[k];
  a->elem_size = 1;
  a->rank_bytes = 8;
  a->nz_bits = 0xff;
  a->n = m->numel[k];
  a->out = NULL;
  a->count = d_counts + k;
}

AOTITorchError aotrun_fb_index_mask_counts(aotrun_fb_temps *temps,
                                           const aotrun_fb_index_plan *p,
                                           cudaStream_t stream,
                                           aotrun_fb_index_masks *m) {
  AOTITorchError err = dense_flags(temps, p, stream, m);
  int64_t *d_counts = NULL;
  int64_t n = m->n;
  if (!err)
    err = aotrun_fb_temp_alloc(temps, AOTRUN_FB_INT64, 1, &n,
                               (void **)&d_counts);
  if (err) return err;
  aotrun_fb_mask_args args[AOTRUN_FB_MAX_DIMS];
  for (int k = 0; k < m->n; k++) base_args(m, k, d_counts, &args[k]);
  err = run_all(temps, p, AOTRUN_FB_MASK_COUNT, args, stream);
  if (err) return err;
  err = aotrun_fb_read_counts(p->op, d_counts, m->n, m->counts, stream);
  for (int k = 0; k < m->n; k++)
    if (args[k].n == 0) m->counts[k] = 0; /* no kernel wrote it */
  return err;
}

AOTITorchError aotrun_fb_index_mask_positions(aotrun_fb_temps *temps,
                                              const aotrun_fb_index_plan *p,
                                              cudaStream_t stream,
                                              aotrun_fb_index_masks *m) {
  size_t bytes[AOTRUN_FB_MAX_DIMS + 1];
  void *blocks[AOTRUN_FB_MAX_DIMS + 1];
  for (int k = 0; k < m->n; k++) bytes[k] = sizeof(int64_t) * (size_t)m->counts[k];
  bytes[m->n] = sizeof(int64_t) * (size_t)m->n; /* counts, written again */
  AOTITorchError err = aotrun_fb_temp_blocks(temps, m->n + 1, bytes, blocks);
  if (err) return err;
  aotrun_fb_mask_args args[AOTRUN_FB_MAX_DIMS];
  for (int k = 0; k < m->n; k++) {
    base_args(m, k, (int64_t *)blocks[m->n], &args[k]);
    args[k].out = blocks[k];
    if (m->counts[k] == 0) args[k].n = 0; /* nothing to select */
    m->positions[k] = (const int64_t *)blocks[k];
  }
  return run_all(temps, p, AOTRUN_FB_MASK_POSITIONS, args, stream);
}

AOTITorchError aotrun_fb_error_slot(const char *op, int32_t device,
                                    aotrun_device_error **slot) {
  void *s = NULL;
  if (aotrun_shim_device_error_slot(device, &s) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: no device error slot for cuda:%d: %s", op,
                            (int)device, aotrun_shim_last_error());
  *slot = (aotrun_device_error *)s;
  return AOTI_TORCH_SUCCESS;
}
