/* random_run.c: queues one random job (random_args.h, random_kernels.h). */
#include "shim_lib/fallback/random_args.h"

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/random_state.h"
#include "shim_lib/fallback/tensor_layout.h"

int32_t aotrun_fb_rand_per_block(const aotrun_fb_rand_job *j) {
  switch (j->kind) {
    case AOTRUN_FB_RAND_UNIFORM:
    case AOTRUN_FB_RAND_NORMAL:
      return j->dtype == AOTRUN_FB_FLOAT64 ? 2 : 4;
    case AOTRUN_FB_RAND_INT:
      return j->range > ((uint64_t)1 << 32) ? 2 : 4;
    case AOTRUN_FB_RAND_PERM_KEYS:
      return j->key_bytes == 8 ? 2 : 4;
    default:
      return 4;
  }
}

AOTITorchError aotrun_fb_rand_run(aotrun_fb_temps *temps,
                                  aotrun_fb_rand_job *j, cudaStream_t stream) {
  j->per_block = aotrun_fb_rand_per_block(j);
  if (j->n == 0) return AOTI_TORCH_SUCCESS;
  if (j->state == NULL)
    return aotrun_shim_fail("%s: internal error: no generator state",
                            temps->op);
  void *ticket = NULL;
  if (aotrun_fb_rand_needs_ticket(j)) {
    AOTITorchError err =
        aotrun_fb_temp_bytes(temps, sizeof(unsigned long long), &ticket);
    if (err) return err;
  }
  cudaError_t e =
      aotrun_fb_rand_launch(j, (unsigned long long *)ticket, stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: the random kernel failed to launch: %s",
                            temps->op, cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_rand_fill_new(const char *op,
                                       const aotrun_fb_rand_factory *f,
                                       aotrun_fb_rand_job *j,
                                       AtenTensorHandle *ret0) {
  *ret0 = NULL;
  j->dtype = f->dtype;
  j->n = f->numel;
  j->ndim = 0; /* a new contiguous tensor: storage order */
  /* Seed before any other CUDA work: a failure leaves nothing behind. */
  if (j->n > 0 && aotrun_fb_random_state(op, f->device, &j->state))
    return AOTI_TORCH_FAILURE;
  aotrun_fb_device_scope scope;
  AOTITorchError err = aotrun_fb_device_enter(op, f->device, &scope);
  if (err) return err;
  AtenTensorHandle out = NULL;
  err = aotrun_fb_rand_new_output(op, f, &out, &j->out);
  if (!err) {
    aotrun_fb_temps temps;
    aotrun_fb_temps_init(&temps, op, f->device);
    err = aotrun_fb_rand_run(&temps, j,
                             (cudaStream_t)aotrun_shim_current_stream());
    aotrun_fb_temps_release(&temps);
  }
  aotrun_fb_device_leave(&scope);
  if (err) {
    aoti_torch_delete_tensor_object(out);
    return err;
  }
  *ret0 = out;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_rand_fill_tensor(const char *op,
                                          const aotrun_fb_tensor *t,
                                          aotrun_fb_rand_job *j) {
  int overflow = 0;
  j->dtype = t->dtype;
  j->out = t->data;
  j->n = aotrun_fb_numel(t->sizes, t->ndim, &overflow);
  j->ndim = 0;
  if (j->n == 0) return AOTI_TORCH_SUCCESS;
  int dense = aotrun_fb_is_non_overlapping_and_dense(t->sizes, t->strides,
                                                     t->ndim);
  if (j->kind == AOTRUN_FB_RAND_BERNOULLI_P || !dense) {
    /* Walk t (and p) in row-major order, size-1 dims dropped and
     * neighbours merged. */
    int32_t nd = (int32_t)t->ndim;
    for (int32_t d = 0; d < nd; d++) {
      j->sizes[d] = t->sizes[d];
      j->strides[d] = t->strides[d];
    }
    int64_t *strides[2] = {j->strides, j->p_strides};
    aotrun_fb_collapse_dims(&nd, j->sizes, strides,
                            j->kind == AOTRUN_FB_RAND_BERNOULLI_P ? 2 : 1);
    j->ndim = nd;
  }
  if (aotrun_fb_random_state(op, t->device_index, &j->state))
    return AOTI_TORCH_FAILURE;
  aotrun_fb_device_scope scope;
  AOTITorchError err = aotrun_fb_device_enter(op, t->device_index, &scope);
  if (err) return err;
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, op, t->device_index);
  err = aotrun_fb_rand_run(&temps, j,
                           (cudaStream_t)aotrun_shim_current_stream());
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}

AOTITorchError aotrun_fb_rand_fill_like(const char *op,
                                        const aotrun_fb_tensor *self,
                                        aotrun_fb_rand_job *j,
                                        AtenTensorHandle *ret0) {
  *ret0 = NULL;
  int64_t strides[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_empty_like_strides(self->sizes, self->strides, self->ndim,
                               strides);
  int overflow = 0;
  int64_t n = aotrun_fb_numel(self->sizes, self->ndim, &overflow);
  aotrun_fb_rng_state *state = NULL;
  if (n > 0 && aotrun_fb_random_state(op, self->device_index, &state))
    return AOTI_TORCH_FAILURE;
  AtenTensorHandle out = NULL;
  if (aoti_torch_empty_strided(self->ndim, self->sizes, strides, self->dtype,
                               AOTRUN_FB_DEVICE_CUDA, self->device_index,
                               &out) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the result: %s", op,
                            aotrun_shim_last_error());
  aotrun_fb_tensor t;
  AOTITorchError err = aotrun_fb_tensor_read(op, "result", out, &t);
  if (!err) err = aotrun_fb_rand_fill_tensor(op, &t, j);
  if (err) {
    aoti_torch_delete_tensor_object(out);
    return err;
  }
  *ret0 = out;
  return AOTI_TORCH_SUCCESS;
}
