/* randperm.c: aoti_torch_cuda_randperm: a random permutation of 0..n-1
 * (int64 unless dtype says int32, int16, int8, uint8 or a float dtype; n
 * must fit the dtype as ATen checks it). Each position gets a random key
 * (2*ceil(log2 n) + 20 bits, at least 32, at most 64: two keys collide with
 * probability below 2^-20 per call, and colliding keys keep their index
 * order) and the shared CUB radix sort (radix_sort.h) orders the positions
 * by key. No host synchronisation. */
#include <string.h>

#include "shim_lib/fallback/random_args.h"
#include "shim_lib/fallback/random_state.h"
#include "shim_lib/fallback/cublas_handle.h"

static const char kOp[] = "aoti_torch_cuda_randperm";

static AOTITorchError check_n(int64_t n, int32_t dtype) {
  char buf[24];
  if (n < 0)
    return aotrun_shim_fail("%s: 'n' = %lld must be non-negative", kOp,
                            (long long)n);
  int64_t max;
  switch (dtype) {
    case 0: max = 255; break;
    case 1: max = 127; break;
    case 2: max = 32767; break;
    case 3: max = 2147483647; break;
    /* ATen: n <= 2^digits + 1 for float16, float32, float64. */
    case 5: max = 2048; break;
    case 6: max = (int64_t)1 << 24; break;
    case 7: max = (int64_t)1 << 53; break;
    default: return AOTI_TORCH_SUCCESS; /* int64, bfloat16 */
  }
  if (n > 0 && n - 1 > max)
    return aotrun_shim_fail(
        "%s: 'n' = %lld is too large for dtype %s (at most %lld)", kOp,
        (long long)n, aotrun_fb_dtype_name(dtype, buf), (long long)max + 1);
  return AOTI_TORCH_SUCCESS;
}

/* Sort key bits for n elements. */
static int key_bits(int64_t n) {
  int log2n = 0;
  while (log2n < 63 && ((int64_t)1 << log2n) < n) log2n++;
  int bits = 2 * log2n + 20;
  if (bits < 32) bits = 32;
  return bits > 64 ? 64 : bits;
}

static AOTITorchError run(const aotrun_fb_rand_factory *f,
                          aotrun_fb_rng_state *state, void *result,
                          aotrun_fb_temps *temps, cudaStream_t stream) {
  const int64_t n = f->numel;
  const int bits = key_bits(n);
  const int kb = bits > 32 ? 8 : 4;
  const int direct = f->dtype == AOTRUN_FB_INT64 || f->dtype == AOTRUN_FB_INT32;
  const int vb = f->dtype == AOTRUN_FB_INT32 ? 4 : 8;
  void *keys_in = NULL, *keys_out = NULL, *pos = NULL, *sorted = result;
  AOTITorchError err = aotrun_fb_temp_bytes(temps, (size_t)n * kb, &keys_in);
  if (!err) err = aotrun_fb_temp_bytes(temps, (size_t)n * kb, &keys_out);
  if (!err) err = aotrun_fb_temp_bytes(temps, (size_t)n * vb, &pos);
  if (!err && !direct)
    err = aotrun_fb_temp_bytes(temps, (size_t)n * 8, &sorted);
  if (err) return err;
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  j.kind = AOTRUN_FB_RAND_PERM_KEYS;
  j.dtype = f->dtype;
  j.n = n;
  j.out = keys_in;
  j.out2 = pos;
  j.key_bytes = kb;
  j.val_bytes = vb;
  j.state = state;
  err = aotrun_fb_rand_run(temps, &j, stream);
  if (err) return err;
  aotrun_fb_sort_pairs_args a;
  memset(&a, 0, sizeof a);
  a.keys_in = keys_in;
  a.keys_out = keys_out;
  a.vals_in = pos;
  a.vals_out = sorted;
  a.key_bytes = kb;
  a.val_bytes = vb;
  a.n = n;
  a.end_bit = bits;
  err = aotrun_fb_sort(temps, "the random keys", &a, stream);
  if (err || direct) return err;
  cudaError_t e = aotrun_fb_rand_convert_index(result, f->dtype,
                                               (const int64_t *)sorted, n,
                                               stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: the conversion kernel failed: %s", kOp,
                            cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randperm(
    int64_t n, int32_t *dtype, int32_t *layout, int32_t *device,
    int32_t device_index_, int32_t *pin_memory, AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kOp);
  *ret0 = NULL;
  aotrun_fb_rand_factory f;
  AOTITorchError err =
      aotrun_fb_rand_options(kOp, dtype, AOTRUN_FB_INT64, AOTRUN_FB_RAND_PERM,
                             layout, device, device_index_, pin_memory, &f);
  if (!err) err = check_n(n, f.dtype);
  if (!err) err = aotrun_fb_rand_sizes(kOp, &n, 1, &f);
  if (err) return err;
  aotrun_fb_rng_state *state = NULL;
  if (n > 0 && aotrun_fb_random_state(kOp, f.device, &state))
    return AOTI_TORCH_FAILURE;
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(kOp, f.device, &scope);
  if (err) return err;
  AtenTensorHandle out = NULL;
  void *data = NULL;
  err = aotrun_fb_rand_new_output(kOp, &f, &out, &data);
  if (!err && n > 0) {
    aotrun_fb_temps temps;
    aotrun_fb_temps_init(&temps, kOp, f.device);
    err = run(&f, state, data, &temps,
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
