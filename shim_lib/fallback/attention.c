/* attention.c: the fused attention fallback ops on our own kernel
 * (attention_kernels.cu; docs/fallback-ops.md "Attention"):
 *
 *   _scaled_dot_product_flash_attention      q, k, v [B, H, L|S, D]
 *   _scaled_dot_product_efficient_attention  q, k, v [B, H, L|S, D], bias
 *   _flash_attention_forward                 q, k, v [B, L|S, H, D] (dense)
 *   _efficient_attention_forward             q, k, v [B, L|S, H, D], bias
 *
 * Semantics and outputs are ATen's (torch 2.11, CUDA):
 * - any strides; a last dim that is not contiguous is copied first;
 * - Hq a multiple of Hkv (query head h reads key/value head h / (Hq/Hkv));
 * - scale NULL means 1/sqrt(D);
 * - is_causal: the flash ops align the mask bottom-right (key j visible to
 *   query i when j <= i + S - L: FlashAttention-2's rule, which ATen's flash
 *   kernel uses), the efficient ops top-left (j <= i, custom_mask_type 1;
 *   2 is bottom-right), as torch.nn.functional.scaled_dot_product_attention
 *   does for is_causal;
 * - a query row that sees no key (all scores -inf) gives 0, with lse +inf
 *   (flash) or -inf (efficient); NaN propagates;
 * - dropout_p must be 0 and return_debug_mask false;
 * - outputs: flash: out empty_like(query), lse float32 [B, H, L],
 *   cum_seq_q / cum_seq_k undefined tensors, rng_state uint64 [2] and
 *   unused uint64 [] (CUDA, unwritten), debug mask an empty tensor of q's
 *   dtype; efficient: out [B, H, L, D] with [B, L, H, D] storage (the
 *   _forward op: [B, L, H, D] contiguous), lse float32 [B, H, ceil(L/32)*32]
 *   (rows past L +inf) when compute_log_sumexp, else [B, H, 0], philox
 *   seed / offset int64 [] on the CPU, as ATen returns them without dropout.
 * No host synchronisation: usable inside a CUDA graph capture. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shim_lib/fallback/attention_kernels.h"
#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/tensor_layout.h"

enum { AOTRUN_FB_UINT64 = 29 };

typedef struct attn_call {
  const char *op;
  int seq_major; /* [B, L, H, D] inputs (the _forward ops) */
  aotrun_fb_tensor q, k, v, bias;
  int has_bias;
  int64_t B, Hq, Hkv, L, S, D;
  int64_t bias_strides[4]; /* bias expanded to [B, Hq, L, S] */
} attn_call;

/* Dims of batch, heads, sequence in the inputs' layout. */
static int dim_h(const attn_call *c) { return c->seq_major ? 2 : 1; }
static int dim_l(const attn_call *c) { return c->seq_major ? 1 : 2; }

static AOTITorchError check_inputs(attn_call *c, const char *op,
                                   int seq_major, AtenTensorHandle query,
                                   AtenTensorHandle key, AtenTensorHandle value,
                                   AtenTensorHandle *attn_bias,
                                   const char *bias_name, double dropout_p) {
  memset(c, 0, sizeof *c);
  c->op = op;
  c->seq_major = seq_major;
  AOTITorchError err;
  if ((err = aotrun_fb_tensor_read(op, "query", query, &c->q)) ||
      (err = aotrun_fb_tensor_read(op, "key", key, &c->k)) ||
      (err = aotrun_fb_tensor_read(op, "value", value, &c->v)))
    return err;
  if ((err = aotrun_fb_require_cuda(op, &c->q, -1, NULL)) ||
      (err = aotrun_fb_require_cuda(op, &c->k, c->q.device_index, "query")) ||
      (err = aotrun_fb_require_cuda(op, &c->v, c->q.device_index, "query")))
    return err;
  if ((err = aotrun_fb_require_ndim(op, &c->q, 4)) ||
      (err = aotrun_fb_require_ndim(op, &c->k, 4)) ||
      (err = aotrun_fb_require_ndim(op, &c->v, 4)))
    return err;
  char a[24];
  if (c->q.dtype != AOTRUN_FB_FLOAT16 && c->q.dtype != AOTRUN_FB_BFLOAT16 &&
      c->q.dtype != AOTRUN_FB_FLOAT32)
    return aotrun_shim_fail(
        "%s: 'query' has dtype %s; supported are float16, bfloat16 and "
        "float32",
        op, aotrun_fb_dtype_name(c->q.dtype, a));
  if ((err = aotrun_fb_require_same_dtype(op, &c->k, &c->q)) ||
      (err = aotrun_fb_require_same_dtype(op, &c->v, &c->q)))
    return err;
  const int dh = dim_h(c), dl = dim_l(c);
  c->B = c->q.sizes[0];
  c->Hq = c->q.sizes[dh];
  c->L = c->q.sizes[dl];
  c->D = c->q.sizes[3];
  c->Hkv = c->k.sizes[dh];
  c->S = c->k.sizes[dl];
  char qs[96], ks[96], vs[96];
  aotrun_fb_shape_str(c->q.sizes, 4, qs, sizeof qs);
  aotrun_fb_shape_str(c->k.sizes, 4, ks, sizeof ks);
  aotrun_fb_shape_str(c->v.sizes, 4, vs, sizeof vs);
  if (c->k.sizes[0] != c->B || c->v.sizes[0] != c->B)
    return aotrun_shim_fail(
        "%s: batch sizes differ: 'query' %s, 'key' %s, 'value' %s", op, qs,
        ks, vs);
  if (c->v.sizes[dh] != c->Hkv || c->v.sizes[dl] != c->S)
    return aotrun_shim_fail(
        "%s: 'key' %s and 'value' %s differ in heads or sequence length", op,
        ks, vs);
  if (c->k.sizes[3] != c->D)
    return aotrun_shim_fail(
        "%s: head dims differ: 'query' %s has D=%lld, 'key' %s has D=%lld",
        op, qs, (long long)c->D, ks, (long long)c->k.sizes[3]);
  if (c->v.sizes[3] != c->D)
    return aotrun_shim_fail(
        "%s: 'value' %s has head dim %lld, 'query' %s has D=%lld; a value "
        "head dim other than D is not supported",
        op, vs, (long long)c->v.sizes[3], qs, (long long)c->D);
  if (c->D < 1 || c->D > AOTRUN_FB_ATTN_MAX_D)
    return aotrun_shim_fail(
        "%s: head dim D=%lld of 'query' %s is not supported (1 to %d)", op,
        (long long)c->D, qs, AOTRUN_FB_ATTN_MAX_D);
  if (c->Hkv == 0 ? c->Hq != 0 : c->Hq % c->Hkv != 0)
    return aotrun_shim_fail(
        "%s: 'query' %s has %lld heads, not a multiple of the %lld heads of "
        "'key' %s",
        op, qs, (long long)c->Hq, (long long)c->Hkv, ks);
  if (c->L > 65535LL * 32 || c->S > 0x7fffffffLL ||
      c->B * c->Hq > 0x7fffffffLL)
    return aotrun_shim_fail(
        "%s: 'query' %s / 'key' %s too large (at most %lld queries, 2^31 "
        "keys and batch * heads)",
        op, qs, ks, 65535LL * 32);
  if (dropout_p != 0.0)
    return aotrun_shim_fail(
        "%s: dropout_p=%g is not supported (aotrun runs attention without "
        "dropout: 0.0 only)",
        op, dropout_p);
  if (attn_bias != NULL && *attn_bias != NULL) {
    if ((err = aotrun_fb_tensor_read(op, bias_name, *attn_bias, &c->bias)))
      return err;
    if ((err = aotrun_fb_require_cuda(op, &c->bias, c->q.device_index,
                                      "query")) ||
        (err = aotrun_fb_require_same_dtype(op, &c->bias, &c->q)))
      return err;
    const int64_t want[4] = {c->B, c->Hq, c->L, c->S};
    char bs[96], ws[96];
    if (c->bias.ndim < 1 || c->bias.ndim > 4 ||
        aotrun_fb_expand_strides(c->bias.sizes, c->bias.strides,
                                 c->bias.ndim, want, 4, c->bias_strides))
      return aotrun_shim_fail(
          "%s: '%s' of shape %s does not broadcast to [B, H, L, S] = %s", op,
          bias_name,
          aotrun_fb_shape_str(c->bias.sizes, c->bias.ndim, bs, sizeof bs),
          aotrun_fb_shape_str(want, 4, ws, sizeof ws));
    c->has_bias = 1;
  }
  return AOTI_TORCH_SUCCESS;
}

/* ---- outputs ---- */

typedef struct attn_outs {
  int n;
  AtenTensorHandle *slots[9];
} attn_outs;

/* AOTInductor passes NULL for a result the model does not use (torch's
 * generated shims write a result only `if (retN)`): such a slot gets a
 * spare handle here, released before returning. */
typedef struct spares {
  AtenTensorHandle h[9];
  int64_t i[2];
} spares;

static AtenTensorHandle *or_spare(AtenTensorHandle *slot, spares *s, int k) {
  return slot != NULL ? slot : &s->h[k];
}

static int64_t *or_spare_int(int64_t *slot, spares *s, int k) {
  return slot != NULL ? slot : &s->i[k];
}

/* Releases the results nobody asked for (stream-ordered: kernels still
 * writing them finish before the memory is reused). */
static AOTITorchError spares_release(spares *s, AOTITorchError err) {
  for (int k = 0; k < 9; k++) {
    aoti_torch_delete_tensor_object(s->h[k]); /* NULL-safe */
    s->h[k] = NULL;
  }
  return err;
}

static AOTITorchError check_slot(const char *op, AtenTensorHandle *slot,
                                 const char *name, const char *what) {
  if (slot == NULL)
    return aotrun_shim_fail("%s: the result pointer '%s' (%s) is NULL", op,
                            name, what);
  *slot = NULL;
  return AOTI_TORCH_SUCCESS;
}

static void outs_drop(attn_outs *o) {
  for (int i = 0; i < o->n; i++) {
    aoti_torch_delete_tensor_object(*o->slots[i]); /* NULL-safe */
    *o->slots[i] = NULL;
  }
}

static AOTITorchError new_out(const char *op, attn_outs *o,
                              AtenTensorHandle *slot, const char *what,
                              int64_t ndim, const int64_t *sizes,
                              const int64_t *strides, int32_t dtype,
                              int32_t device_type, int32_t device) {
  int64_t cs[4];
  if (strides == NULL) {
    aotrun_fb_contiguous_strides(sizes, ndim, cs);
    strides = cs;
  }
  o->slots[o->n++] = slot;
  if (aoti_torch_empty_strided(ndim, sizes, strides, dtype, device_type,
                               device, slot) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the %s: %s", op, what,
                            aotrun_shim_last_error());
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError new_undefined(const char *op, attn_outs *o,
                                    AtenTensorHandle *slot, const char *what) {
  o->slots[o->n++] = slot;
  if (aoti_torch_new_uninitialized_tensor(slot) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot make the %s: %s", op, what,
                            aotrun_shim_last_error());
  return AOTI_TORCH_SUCCESS;
}

static void *data_of(AtenTensorHandle h) {
  void *p = NULL;
  aoti_torch_get_data_ptr(h, &p);
  return p;
}

/* ---- the kernel call ---- */

typedef struct attn_run {
  AtenTensorHandle out;   /* layout of the inputs (seq_major or not) */
  const int64_t *out_strides;
  float *lse;             /* [B, Hq, lse_len] contiguous, or NULL */
  int64_t lse_len;        /* row length of lse (>= L) */
  int64_t lse_pad;        /* rows [L, lse_pad) set to +inf */
  int causal;             /* AOTRUN_FB_ATTN_* */
  float scale;
  float empty_lse;
} attn_run;

/* A contiguous copy of t when its last dim is not contiguous. */
static AOTITorchError last_dim_contiguous(aotrun_fb_temps *temps,
                                          aotrun_fb_tensor *t,
                                          int64_t *strides_buf,
                                          cudaStream_t stream) {
  if (t->sizes[3] <= 1 || t->strides[3] == 1) return AOTI_TORCH_SUCCESS;
  for (int64_t d = 0; d < 4; d++)
    if (t->sizes[d] == 0) return AOTI_TORCH_SUCCESS;
  void *data = NULL;
  AOTITorchError err = aotrun_fb_contiguous_copy(
      temps, t->name, t->data, t->strides, t->sizes, 4, t->dtype,
      t->elem_size, stream, &data);
  if (err) return err;
  aotrun_fb_contiguous_strides(t->sizes, 4, strides_buf);
  t->strides = strides_buf;
  t->data = (char *)data;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError run(attn_call *c, const attn_run *r) {
  const char *op = c->op;
  if (c->B * c->Hq * c->L == 0) return AOTI_TORCH_SUCCESS;
  aotrun_fb_device_scope scope;
  AOTITorchError err = aotrun_fb_device_enter(op, c->q.device_index, &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, op, c->q.device_index);
  int64_t qs[4], ks[4], vs[4], os[4];
  if (!err) err = last_dim_contiguous(&temps, &c->q, qs, stream);
  if (!err) err = last_dim_contiguous(&temps, &c->k, ks, stream);
  if (!err) err = last_dim_contiguous(&temps, &c->v, vs, stream);
  /* The kernel writes rows with a contiguous last dim: otherwise (an
   * empty_like of a query whose last dim is strided) through a scratch
   * tensor copied into the output afterwards. */
  void *out = data_of(r->out);
  const int64_t *ostr = r->out_strides;
  int staged = c->D > 1 && ostr[3] != 1;
  if (!err && staged) {
    const int64_t *sz = c->q.sizes;
    err = aotrun_fb_temp_alloc(&temps, c->q.dtype, 4, sz, &out);
    aotrun_fb_contiguous_strides(sz, 4, os);
    ostr = os;
  }
  if (!err) {
    const int dh = dim_h(c), dl = dim_l(c);
    aotrun_fb_attn_params p;
    memset(&p, 0, sizeof p);
    p.q = c->q.data;
    p.k = c->k.data;
    p.v = c->v.data;
    p.out = out;
    p.lse = r->lse;
    p.bias = c->has_bias ? c->bias.data : NULL;
    p.q_sb = c->q.strides[0], p.q_sh = c->q.strides[dh], p.q_sl = c->q.strides[dl];
    p.k_sb = c->k.strides[0], p.k_sh = c->k.strides[dh], p.k_sl = c->k.strides[dl];
    p.v_sb = c->v.strides[0], p.v_sh = c->v.strides[dh], p.v_sl = c->v.strides[dl];
    p.o_sb = ostr[0], p.o_sh = ostr[dh], p.o_sl = ostr[dl];
    if (c->has_bias) {
      p.b_sb = c->bias_strides[0];
      p.b_sh = c->bias_strides[1];
      p.b_sl = c->bias_strides[2];
      p.b_ss = c->bias_strides[3];
    }
    p.lse_sh = r->lse_len;
    p.lse_sb = r->lse_len * c->Hq;
    p.B = (int32_t)c->B;
    p.Hq = (int32_t)c->Hq;
    p.Hkv = (int32_t)c->Hkv;
    p.L = (int32_t)c->L;
    p.S = (int32_t)c->S;
    p.D = (int32_t)c->D;
    p.lse_pad = (int32_t)r->lse_pad;
    p.causal = r->causal;
    p.dtype = c->q.dtype;
    p.scale = r->scale;
    p.empty_lse = r->empty_lse;
    cudaError_t e = aotrun_fb_attention(&p, stream);
    if (e != cudaSuccess)
      err = aotrun_shim_fail("%s: the attention kernel failed to launch: %s",
                             op, cudaGetErrorString(e));
  }
  if (!err && staged)
    err = aotrun_fb_copy(&temps, "the output", data_of(r->out), r->out_strides,
                         out, os, c->q.sizes, 4, c->q.elem_size, stream);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}

static float scale_of(const attn_call *c, const double *scale) {
  return scale ? (float)*scale : (float)(1.0 / sqrt((double)c->D));
}

/* ---- _scaled_dot_product_flash_attention / _flash_attention_forward ---- */

/* out (empty_like query), lse [B, H, L], rng_state, unused, debug mask;
 * then the kernel. */
static AOTITorchError flash_common(attn_call *c, attn_outs *o, int is_causal,
                                   const double *scale, AtenTensorHandle *out,
                                   AtenTensorHandle *lse,
                                   AtenTensorHandle *rng_state,
                                   AtenTensorHandle *unused,
                                   AtenTensorHandle *debug_mask) {
  const char *op = c->op;
  const int32_t dev = c->q.device_index;
  int64_t ostr[4];
  aotrun_fb_empty_like_strides(c->q.sizes, c->q.strides, 4, ostr);
  const int64_t lse_sizes[3] = {c->B, c->Hq, c->L};
  const int64_t two = 2, zero = 0;
  AOTITorchError err;
  if ((err = new_out(op, o, out, "output", 4, c->q.sizes, ostr, c->q.dtype,
                     AOTRUN_FB_DEVICE_CUDA, dev)) ||
      (err = new_out(op, o, lse, "logsumexp", 3, lse_sizes, NULL,
                     AOTRUN_FB_FLOAT32, AOTRUN_FB_DEVICE_CUDA, dev)) ||
      (err = new_out(op, o, rng_state, "rng_state", 1, &two, NULL,
                     AOTRUN_FB_UINT64, AOTRUN_FB_DEVICE_CUDA, dev)) ||
      (err = new_out(op, o, unused, "unused philox offset", 0, NULL, NULL,
                     AOTRUN_FB_UINT64, AOTRUN_FB_DEVICE_CUDA, dev)) ||
      (err = new_out(op, o, debug_mask, "debug mask", 1, &zero, NULL,
                     c->q.dtype, AOTRUN_FB_DEVICE_CUDA, dev)))
    return err;
  attn_run r;
  memset(&r, 0, sizeof r);
  r.out = *out;
  r.out_strides = ostr;
  r.lse = (float *)data_of(*lse);
  r.lse_len = c->L;
  r.lse_pad = c->L;
  r.causal = is_causal ? AOTRUN_FB_ATTN_BOTTOM_RIGHT : AOTRUN_FB_ATTN_NONE;
  r.scale = scale_of(c, scale);
  r.empty_lse = INFINITY;
  return run(c, &r);
}

/* The flash entry points' shared check: the inputs (no bias), and no
 * debug mask (ATen returns one only with dropout, which is refused). */
static AOTITorchError check_flash_inputs(attn_call *c, const char *op,
                                         int seq_major, AtenTensorHandle query,
                                         AtenTensorHandle key,
                                         AtenTensorHandle value,
                                         double dropout_p,
                                         int32_t return_debug_mask) {
  AOTITorchError err = check_inputs(c, op, seq_major, query, key, value, NULL,
                                    NULL, dropout_p);
  if (err) return err;
  if (return_debug_mask)
    return aotrun_shim_fail(
        "%s: return_debug_mask=True is not supported (ATen returns the "
        "mask only with dropout)",
        op);
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError sdpa_flash(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    double dropout_p, int32_t is_causal, int32_t return_debug_mask,
    double *scale, AtenTensorHandle *ret0, AtenTensorHandle *ret1,
    AtenTensorHandle *ret2, AtenTensorHandle *ret3, int64_t *ret4,
    int64_t *ret5, AtenTensorHandle *ret6, AtenTensorHandle *ret7,
    AtenTensorHandle *ret8);

AOTRUN_SHIM_API AOTITorchError
aoti_torch_cuda__scaled_dot_product_flash_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    double dropout_p, int32_t is_causal, int32_t return_debug_mask,
    double *scale, AtenTensorHandle *ret0, AtenTensorHandle *ret1,
    AtenTensorHandle *ret2, AtenTensorHandle *ret3, int64_t *ret4,
    int64_t *ret5, AtenTensorHandle *ret6, AtenTensorHandle *ret7,
    AtenTensorHandle *ret8) {
  spares sp = {{NULL}, {0}};
  ret0 = or_spare(ret0, &sp, 0);
  ret1 = or_spare(ret1, &sp, 1);
  ret2 = or_spare(ret2, &sp, 2);
  ret3 = or_spare(ret3, &sp, 3);
  ret6 = or_spare(ret6, &sp, 6);
  ret7 = or_spare(ret7, &sp, 7);
  ret8 = or_spare(ret8, &sp, 8);
  ret4 = or_spare_int(ret4, &sp, 0);
  ret5 = or_spare_int(ret5, &sp, 1);
  return spares_release(&sp, sdpa_flash(query, key, value, dropout_p,
                                        is_causal, return_debug_mask, scale,
                                        ret0, ret1, ret2, ret3, ret4, ret5,
                                        ret6, ret7, ret8));
}

static AOTITorchError sdpa_flash(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    double dropout_p, int32_t is_causal, int32_t return_debug_mask,
    double *scale, AtenTensorHandle *ret0, AtenTensorHandle *ret1,
    AtenTensorHandle *ret2, AtenTensorHandle *ret3, int64_t *ret4,
    int64_t *ret5, AtenTensorHandle *ret6, AtenTensorHandle *ret7,
    AtenTensorHandle *ret8) {
  static const char op[] =
      "aoti_torch_cuda__scaled_dot_product_flash_attention";
  AOTITorchError err;
  if ((err = check_slot(op, ret0, "ret0", "output")) ||
      (err = check_slot(op, ret1, "ret1", "logsumexp")) ||
      (err = check_slot(op, ret2, "ret2", "cum_seq_q")) ||
      (err = check_slot(op, ret3, "ret3", "cum_seq_k")) ||
      (err = check_slot(op, ret6, "ret6", "rng_state")) ||
      (err = check_slot(op, ret7, "ret7", "unused")) ||
      (err = check_slot(op, ret8, "ret8", "debug_attn_mask")))
    return err;
  if (ret4 == NULL || ret5 == NULL)
    return aotrun_shim_fail("%s: the result pointer '%s' (%s) is NULL", op,
                            ret4 == NULL ? "ret4" : "ret5",
                            ret4 == NULL ? "max_q" : "max_k");
  attn_call c;
  if ((err = check_flash_inputs(&c, op, 0, query, key, value, dropout_p,
                                return_debug_mask)))
    return err;
  attn_outs o = {0};
  err = new_undefined(op, &o, ret2, "cum_seq_q");
  if (!err) err = new_undefined(op, &o, ret3, "cum_seq_k");
  if (!err)
    err = flash_common(&c, &o, is_causal, scale, ret0, ret1, ret6, ret7, ret8);
  if (err) {
    outs_drop(&o);
    return err;
  }
  *ret4 = c.L;
  *ret5 = c.S;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError flash_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *cum_seq_q, AtenTensorHandle *cum_seq_k, int64_t max_q,
    int64_t max_k, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double *scale, int64_t *window_size_left,
    int64_t *window_size_right, AtenTensorHandle *seqused_k,
    AtenTensorHandle *alibi_slopes, AtenTensorHandle *ret0,
    AtenTensorHandle *ret1, AtenTensorHandle *ret2, AtenTensorHandle *ret3,
    AtenTensorHandle *ret4) {
  static const char op[] = "aoti_torch_cuda__flash_attention_forward";
  (void)max_q;
  (void)max_k;
  AOTITorchError err;
  if ((err = check_slot(op, ret0, "ret0", "output")) ||
      (err = check_slot(op, ret1, "ret1", "softmax_logsumexp")) ||
      (err = check_slot(op, ret2, "ret2", "rng_state")) ||
      (err = check_slot(op, ret3, "ret3", "unused")) ||
      (err = check_slot(op, ret4, "ret4", "debug_attn_mask")))
    return err;
  if ((cum_seq_q && *cum_seq_q) || (cum_seq_k && *cum_seq_k))
    return aotrun_shim_fail(
        "%s: cum_seq_q / cum_seq_k (variable-length batches) are not "
        "supported; the dense form only",
        op);
  if ((seqused_k && *seqused_k) || (alibi_slopes && *alibi_slopes))
    return aotrun_shim_fail("%s: %s is not supported", op,
                            seqused_k && *seqused_k ? "seqused_k"
                                                    : "alibi_slopes");
  if ((window_size_left && *window_size_left >= 0) ||
      (window_size_right && *window_size_right >= 0 &&
       !(is_causal && *window_size_right == 0)))
    return aotrun_shim_fail(
        "%s: sliding windows (window_size_left=%lld, window_size_right=%lld) "
        "are not supported",
        op, window_size_left ? (long long)*window_size_left : -1LL,
        window_size_right ? (long long)*window_size_right : -1LL);
  attn_call c;
  if ((err = check_flash_inputs(&c, op, 1, query, key, value, dropout_p,
                                return_debug_mask)))
    return err;
  attn_outs o = {0};
  err = flash_common(&c, &o, is_causal, scale, ret0, ret1, ret2, ret3, ret4);
  if (err) outs_drop(&o);
  return err;
}

/* ---- _scaled_dot_product_efficient_attention / _efficient_attention_forward */

static AOTITorchError efficient_common(attn_call *c, attn_outs *o, int causal,
                                       int compute_lse, const double *scale,
                                       AtenTensorHandle *out,
                                       AtenTensorHandle *lse,
                                       AtenTensorHandle *seed,
                                       AtenTensorHandle *offset) {
  const char *op = c->op;
  const int32_t dev = c->q.device_index;
  /* res = empty(B, L, H, D) (transposed to [B, H, L, D] by the sdpa op). */
  const int64_t blhd[4] = {c->B, c->L, c->Hq, c->D};
  int64_t cs[4], sizes[4], ostr[4];
  aotrun_fb_contiguous_strides(blhd, 4, cs);
  if (c->seq_major) {
    memcpy(sizes, blhd, sizeof sizes);
    memcpy(ostr, cs, sizeof ostr);
  } else {
    const int64_t s[4] = {c->B, c->Hq, c->L, c->D};
    const int64_t t[4] = {cs[0], cs[2], cs[1], cs[3]};
    memcpy(sizes, s, sizeof sizes);
    memcpy(ostr, t, sizeof ostr);
  }
  const int64_t pad = compute_lse ? (c->L + 31) / 32 * 32 : 0;
  const int64_t lse_sizes[3] = {c->B, c->Hq, pad};
  AOTITorchError err;
  if ((err = new_out(op, o, out, "output", 4, sizes, ostr, c->q.dtype,
                     AOTRUN_FB_DEVICE_CUDA, dev)) ||
      (err = new_out(op, o, lse, "logsumexp", 3, lse_sizes, NULL,
                     AOTRUN_FB_FLOAT32, AOTRUN_FB_DEVICE_CUDA, dev)) ||
      (err = new_out(op, o, seed, "philox_seed", 0, NULL, NULL,
                     AOTRUN_FB_INT64, AOTRUN_FB_DEVICE_CPU, 0)) ||
      (err = new_out(op, o, offset, "philox_offset", 0, NULL, NULL,
                     AOTRUN_FB_INT64, AOTRUN_FB_DEVICE_CPU, 0)))
    return err;
  attn_run r;
  memset(&r, 0, sizeof r);
  r.out = *out;
  r.out_strides = ostr;
  r.lse = compute_lse ? (float *)data_of(*lse) : NULL;
  r.lse_len = pad;
  r.lse_pad = pad;
  r.causal = causal;
  r.scale = scale_of(c, scale);
  r.empty_lse = -INFINITY;
  return run(c, &r);
}

static AOTITorchError sdpa_efficient(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *attn_bias, int32_t compute_log_sumexp,
    double dropout_p, int32_t is_causal, double *scale,
    AtenTensorHandle *ret0, AtenTensorHandle *ret1, AtenTensorHandle *ret2,
    AtenTensorHandle *ret3) {
  static const char op[] =
      "aoti_torch_cuda__scaled_dot_product_efficient_attention";
  AOTITorchError err;
  if ((err = check_slot(op, ret0, "ret0", "output")) ||
      (err = check_slot(op, ret1, "ret1", "log_sumexp")) ||
      (err = check_slot(op, ret2, "ret2", "philox_seed")) ||
      (err = check_slot(op, ret3, "ret3", "philox_offset")))
    return err;
  attn_call c;
  if ((err = check_inputs(&c, op, 0, query, key, value, attn_bias,
                          "attn_bias", dropout_p)))
    return err;
  attn_outs o = {0};
  err = efficient_common(
      &c, &o, is_causal ? AOTRUN_FB_ATTN_UPPER_LEFT : AOTRUN_FB_ATTN_NONE,
      compute_log_sumexp, scale, ret0, ret1, ret2, ret3);
  if (err) outs_drop(&o);
  return err;
}

static AOTITorchError efficient_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *bias, AtenTensorHandle *cu_seqlens_q,
    AtenTensorHandle *cu_seqlens_k, int64_t *max_seqlen_q,
    int64_t *max_seqlen_k, double dropout_p, int64_t custom_mask_type,
    int32_t compute_log_sumexp, double *scale, AtenTensorHandle *seqlen_k,
    int64_t *window_size, AtenTensorHandle *ret0, AtenTensorHandle *ret1,
    AtenTensorHandle *ret2, AtenTensorHandle *ret3, int64_t *ret4,
    int64_t *ret5) {
  static const char op[] = "aoti_torch_cuda__efficient_attention_forward";
  (void)max_seqlen_q;
  AOTITorchError err;
  if ((err = check_slot(op, ret0, "ret0", "output")) ||
      (err = check_slot(op, ret1, "ret1", "logsumexp")) ||
      (err = check_slot(op, ret2, "ret2", "philox_seed")) ||
      (err = check_slot(op, ret3, "ret3", "philox_offset")))
    return err;
  if (ret4 == NULL || ret5 == NULL)
    return aotrun_shim_fail("%s: the result pointer '%s' (%s) is NULL", op,
                            ret4 == NULL ? "ret4" : "ret5",
                            ret4 == NULL ? "max_seqlen_q" : "max_seqlen_k");
  if ((cu_seqlens_q && *cu_seqlens_q) || (cu_seqlens_k && *cu_seqlens_k) ||
      (seqlen_k && *seqlen_k))
    return aotrun_shim_fail(
        "%s: cu_seqlens_q / cu_seqlens_k / seqlen_k (variable-length "
        "batches) are not supported; the dense form only",
        op);
  if (window_size && *window_size > 0)
    return aotrun_shim_fail(
        "%s: window_size=%lld (local attention) is not supported", op,
        (long long)*window_size);
  if (custom_mask_type < 0 || custom_mask_type > 2)
    return aotrun_shim_fail(
        "%s: custom_mask_type=%lld is not supported (0 none, 1 causal "
        "top-left, 2 causal bottom-right)",
        op, (long long)custom_mask_type);
  attn_call c;
  if ((err = check_inputs(&c, op, 1, query, key, value, bias, "bias",
                          dropout_p)))
    return err;
  attn_outs o = {0};
  err = efficient_common(&c, &o, (int)custom_mask_type, compute_log_sumexp,
                         scale, ret0, ret1, ret2, ret3);
  if (err) {
    outs_drop(&o);
    return err;
  }
  *ret4 = c.L; /* meta: max_seqlen_q is M without cu_seqlens_q */
  *ret5 = max_seqlen_k ? *max_seqlen_k : c.S;
  return AOTI_TORCH_SUCCESS;
}

/* ---- the entry points: NULL result slots get spares (see spares) ---- */

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda__flash_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *cum_seq_q, AtenTensorHandle *cum_seq_k, int64_t max_q,
    int64_t max_k, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double *scale, int64_t *window_size_left,
    int64_t *window_size_right, AtenTensorHandle *seqused_k,
    AtenTensorHandle *alibi_slopes, AtenTensorHandle *ret0,
    AtenTensorHandle *ret1, AtenTensorHandle *ret2, AtenTensorHandle *ret3,
    AtenTensorHandle *ret4) {
  spares sp = {{NULL}, {0}};
  return spares_release(
      &sp, flash_forward(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k,
                         dropout_p, is_causal, return_debug_mask, scale,
                         window_size_left, window_size_right, seqused_k,
                         alibi_slopes, or_spare(ret0, &sp, 0),
                         or_spare(ret1, &sp, 1), or_spare(ret2, &sp, 2),
                         or_spare(ret3, &sp, 3), or_spare(ret4, &sp, 4)));
}

AOTRUN_SHIM_API AOTITorchError
aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *attn_bias, int32_t compute_log_sumexp,
    double dropout_p, int32_t is_causal, double *scale,
    AtenTensorHandle *ret0, AtenTensorHandle *ret1, AtenTensorHandle *ret2,
    AtenTensorHandle *ret3) {
  spares sp = {{NULL}, {0}};
  return spares_release(
      &sp, sdpa_efficient(query, key, value, attn_bias, compute_log_sumexp,
                          dropout_p, is_causal, scale, or_spare(ret0, &sp, 0),
                          or_spare(ret1, &sp, 1), or_spare(ret2, &sp, 2),
                          or_spare(ret3, &sp, 3)));
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda__efficient_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *bias, AtenTensorHandle *cu_seqlens_q,
    AtenTensorHandle *cu_seqlens_k, int64_t *max_seqlen_q,
    int64_t *max_seqlen_k, double dropout_p, int64_t custom_mask_type,
    int32_t compute_log_sumexp, double *scale, AtenTensorHandle *seqlen_k,
    int64_t *window_size, AtenTensorHandle *ret0, AtenTensorHandle *ret1,
    AtenTensorHandle *ret2, AtenTensorHandle *ret3, int64_t *ret4,
    int64_t *ret5) {
  spares sp = {{NULL}, {0}};
  return spares_release(
      &sp, efficient_forward(
               query, key, value, bias, cu_seqlens_q, cu_seqlens_k,
               max_seqlen_q, max_seqlen_k, dropout_p, custom_mask_type,
               compute_log_sumexp, scale, seqlen_k, window_size,
               or_spare(ret0, &sp, 0), or_spare(ret1, &sp, 1),
               or_spare(ret2, &sp, 2), or_spare(ret3, &sp, 3),
               or_spare_int(ret4, &sp, 0), or_spare_int(ret5, &sp, 1)));
}
