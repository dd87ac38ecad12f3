/* index_put.c: aoti_torch_cuda_index_put and aoti_torch_index_put_out (see
 * index_put.h), and the integer-index path: keys -> stable radix sort ->
 * write the last item of each target, or sum each target's items in index
 * order. */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/index_put.h"
#include "shim_lib/fallback/mask_positions.h"
#include "shim_lib/fallback/radix_sort.h"
#include "shim_lib/fallback/tensor_layout.h"

static const char kOpPut[] = "aoti_torch_cuda_index_put";
static const char kOpOut[] = "aoti_torch_index_put_out";

static AOTITorchError cuda_fail(const char *op, const char *what,
                                cudaError_t e) {
  return aotrun_shim_fail("%s: %s failed: %s", op, what,
                          cudaGetErrorString(e));
}

/* Sorted (key, item) pairs of the items: keys_out / items_out. */
typedef struct sorted_items {
  void *keys, *items;
  int key_bytes;
  uint64_t invalid;
} sorted_items;

static AOTITorchError sort_items(aotrun_fb_put_call *c,
                                 const aotrun_fb_ix_items *it,
                                 int64_t key_range, aotrun_fb_temps *temps,
                                 cudaStream_t stream, sorted_items *s) {
  const char *op = c->op;
  aotrun_device_error *slot = NULL;
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (c->plan.n > c->plan.num_masks)
    err = aotrun_fb_error_slot(op, c->self.device_index, &slot);
  if (err) return err;
  s->invalid = (uint64_t)key_range; /* keys are in [0, key_range) */
  s->key_bytes = s->invalid <= UINT32_MAX &&
                         (uint64_t)it->b_numel <= (uint64_t)UINT32_MAX
                     ? 4
                     : 8;
  size_t bytes = (size_t)it->b_numel * (size_t)s->key_bytes;
  size_t sizes[4] = {bytes, bytes, bytes, bytes};
  void *b[4];
  err = aotrun_fb_temp_blocks(temps, 4, sizes, b);
  if (err) return err;
  cudaError_t e = aotrun_fb_index_keys(b[0], b[1], s->key_bytes, s->invalid,
                                       it, slot, stream);
  if (e != cudaSuccess) return cuda_fail(op, "the index key kernel", e);
  aotrun_fb_sort_pairs_args a = {0};
  a.keys_in = b[0];
  a.vals_in = b[1];
  a.keys_out = b[2];
  a.vals_out = b[3];
  a.key_bytes = a.val_bytes = s->key_bytes;
  a.n = it->b_numel;
  a.end_bit = aotrun_fb_key_bits(s->invalid);
  s->keys = b[2];
  s->items = b[3];
  return aotrun_fb_sort(temps, "the index keys", &a, stream);
}

static AOTITorchError write_rows(aotrun_fb_put_call *c,
                                 const aotrun_fb_put_dest *dest,
                                 const aotrun_fb_ix_items *it,
                                 const aotrun_fb_ix_cols *cols,
                                 const sorted_items *s, aotrun_fb_temps *temps,
                                 cudaStream_t stream) {
  aotrun_fb_put_rows_args a = {0};
  a.out = dest->data;
  a.values = c->values.data;
  a.elem_size = c->self.elem_size;
  a.keys = s->keys;
  a.items = s->items;
  a.key_bytes = s->key_bytes;
  a.n = it->b_numel;
  a.invalid = s->invalid;
  a.accumulate = c->accumulate;
  a.acc_kind = c->acc_kind;
  if (c->accumulate) {
    int64_t chunks = (a.n + AOTRUN_FB_ACC_CHUNK - 1) / AOTRUN_FB_ACC_CHUNK;
    size_t part = (size_t)chunks * (size_t)cols->numel *
                  aotrun_fb_acc_bytes(c->acc_kind);
    size_t sizes[2] = {chunks > 1 ? part : 0, chunks > 1 ? part : 0};
    void *b[2];
    AOTITorchError err = aotrun_fb_temp_blocks(temps, 2, sizes, b);
    if (err) return err;
    a.partial_head = b[0];
    a.partial_tail = b[1];
  }
  cudaError_t e = aotrun_fb_index_put_rows(&a, it, cols, stream);
  return e == cudaSuccess ? AOTI_TORCH_SUCCESS
                          : cuda_fail(c->op, "the index_put kernel", e);
}

AOTITorchError aotrun_fb_put_run(aotrun_fb_put_call *c,
                                 const aotrun_fb_put_dest *dest,
                                 aotrun_fb_temps *temps, cudaStream_t stream) {
  if (c->mask_path) return aotrun_fb_put_mask_run(c, dest, temps, stream);
  const aotrun_fb_index_plan *p = &c->plan;
  aotrun_fb_index_masks m = {0};
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (p->num_masks > 0) err = aotrun_fb_index_mask_counts(temps, p, stream, &m);
  aotrun_fb_index_geom g;
  int64_t vstrides[AOTRUN_FB_MAX_DIMS];
  if (!err) err = aotrun_fb_index_geom_build(p, m.counts, &g);
  if (!err) err = aotrun_fb_put_values_strides(c, &g, vstrides);
  if (err || g.numel == 0) return err;
  int64_t mul[AOTRUN_FB_MAX_DIMS];
  int64_t key_range = aotrun_fb_index_linear_mul(p, mul);
  if (key_range < 0 || key_range == INT64_MAX)
    return aotrun_shim_fail("%s: the indexed dims of 'self' have too many "
                            "elements", c->op);
  if (p->num_masks > 0) err = aotrun_fb_index_mask_positions(temps, p, stream, &m);
  if (err) return err;
  aotrun_fb_ix_items it;
  aotrun_fb_ix_cols cols;
  aotrun_fb_index_items_fill(p, &g, m.positions, m.counts, mul, &it);
  aotrun_fb_index_put_cols(p, &g, dest->strides, vstrides, &cols);
  sorted_items s = {0};
  err = sort_items(c, &it, key_range, temps, stream, &s);
  if (!err) err = write_rows(c, dest, &it, &cols, &s, temps, stream);
  return err;
}

/* Makes dest hold self (dest is a new tensor or a distinct out). */
static AOTITorchError copy_self(const aotrun_fb_put_call *c,
                                const aotrun_fb_put_dest *dest,
                                const aotrun_fb_temps *temps,
                                cudaStream_t stream) {
  return aotrun_fb_copy(temps, "'self' into the result", dest->data,
                        dest->strides, c->self.data, c->self.strides,
                        c->self.sizes, c->self.ndim, c->self.elem_size,
                        stream);
}

/* Device scope, temps, the copy of self, the run. */
static AOTITorchError execute(aotrun_fb_put_call *c,
                              const aotrun_fb_put_dest *dest) {
  if (c->plan.num_masks > 0 && !c->mask_path) {
    /* The masks' counts are read back: fail cleanly in a capture. */
    char what[96];
    snprintf(what, sizeof what, "%s (boolean mask with other index tensors)",
             c->op);
    AOTITorchError err = aotrun_shim_refuse_if_capturing(what);
    if (err) return err;
  }
  aotrun_fb_device_scope scope;
  AOTITorchError err = aotrun_fb_device_enter(c->op, c->self.device_index,
                                              &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, c->op, c->self.device_index);
  if (!c->in_place && !c->mask_path) err = copy_self(c, dest, &temps, stream);
  if (!err) err = aotrun_fb_put_run(c, dest, &temps, stream);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_index_put(
    AtenTensorHandle self, const AtenTensorHandle **indices,
    int64_t indices_len_, AtenTensorHandle values, int32_t accumulate,
    AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kOpPut);
  *ret0 = NULL;
  if (indices_len_ < 0 || (indices_len_ > 0 && indices == NULL))
    return aotrun_shim_fail("%s: bad index list (%lld entries at %p)", kOpPut,
                            (long long)indices_len_, (const void *)indices);
  AtenTensorHandle list[AOTRUN_FB_MAX_DIMS];
  for (int64_t i = 0; i < indices_len_ && i < AOTRUN_FB_MAX_DIMS; i++)
    list[i] = indices[i] != NULL ? *indices[i] : NULL;
  aotrun_fb_put_call c;
  AOTITorchError err = aotrun_fb_put_args(kOpPut, 0, NULL, self, list,
                                          indices_len_, values, accumulate, &c);
  if (err) return err;
  /* A new tensor laid out as at::empty_like(self). */
  int64_t strides[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_empty_like_strides(c.self.sizes, c.self.strides, c.self.ndim,
                               strides);
  AtenTensorHandle result = NULL;
  if (aoti_torch_empty_strided(c.self.ndim, c.self.sizes, strides,
                               c.self.dtype, AOTRUN_FB_DEVICE_CUDA,
                               c.self.device_index,
                               &result) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the result: %s", kOpPut,
                            aotrun_shim_last_error());
  aotrun_fb_put_dest dest = {NULL, strides};
  void *data = NULL;
  err = aoti_torch_get_data_ptr(result, &data) == AOTI_TORCH_SUCCESS
            ? AOTI_TORCH_SUCCESS
            : aotrun_shim_fail("%s: cannot read the result's data", kOpPut);
  dest.data = data;
  if (!err) err = execute(&c, &dest);
  if (err) {
    aoti_torch_delete_tensor_object(result);
    return err;
  }
  *ret0 = result;
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_index_put_out(
    AtenTensorHandle out, AtenTensorHandle self,
    const AtenTensorHandle *indices, const uint32_t num_indices,
    const AtenTensorHandle values, bool accumulate) {
  aotrun_fb_put_call c;
  AOTITorchError err =
      aotrun_fb_put_args(kOpOut, 1, out, self, indices, (int64_t)num_indices,
                         values, accumulate ? 1 : 0, &c);
  if (err) return err;
  aotrun_fb_put_dest dest = {c.out.data, c.out.strides};
  return execute(&c, &dest);
}
