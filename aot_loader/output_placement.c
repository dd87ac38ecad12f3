/* output_placement.c: see output_placement.h. */
#include "aot_loader/output_placement.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/dl_dtype.h"

#define SHIM_CPU 0
#define SHIM_CUDA 1

/* Which allocation became one output, and its dtype and sizes; seq -1:
 * this output is never lent. */
typedef struct slot {
  int64_t seq;
  int32_t dtype; /* shim ScalarType */
  int32_t ndim;
  int64_t sizes[AOTRUN_MAX_DIMS];
} slot;

/* The shim's view of one output after a call (known: the getters
 * answered), taken once and read by the check and the learning. */
typedef struct seen_output {
  int known;
  aotrun_shim_alloc_info info;
  void *data;
  int32_t dtype, device_type;
  int64_t ndim, *sizes;
} seen_output;

struct aotrun_output_placement {
  size_t n;
  DLDevice device;
  char *method;
  aotrun_placement_log log;
  void *log_ctx;
  int off;
  slot *plan, *seen; /* adopted; the last call's */
  seen_output *views; /* this call's outputs, as settle found them */
  int has_plan, has_seen;
  aotrun_shim_lend *lend; /* this call's entries, sorted by seq */
  size_t *lend_output;    /* lend[i] is output lend_output[i] */
  size_t num_lent;        /* entries this call */
  int numbering;          /* begin started a session */
  size_t placed;          /* outputs the last call wrote in place */
  int64_t live;           /* lent buffers still referenced (the shim's) */
};

aotrun_status aotrun_output_placement_new(size_t num_outputs, DLDevice device,
                                          const char *method,
                                          aotrun_placement_log log,
                                          void *log_ctx,
                                          aotrun_output_placement **out,
                                          aotrun_error *err) {
  *out = NULL;
  if (num_outputs == 0) return AOTRUN_OK;
  aotrun_output_placement *p = calloc(1, sizeof *p);
  size_t m = strlen(method) + 1;
  if (p != NULL) {
    p->plan = calloc(num_outputs, sizeof *p->plan);
    p->seen = calloc(num_outputs, sizeof *p->seen);
    p->views = calloc(num_outputs, sizeof *p->views);
    p->lend = calloc(num_outputs, sizeof *p->lend);
    p->lend_output = calloc(num_outputs, sizeof *p->lend_output);
    p->method = malloc(m);
  }
  if (p == NULL || p->plan == NULL || p->seen == NULL || p->views == NULL ||
      p->lend == NULL ||
      p->lend_output == NULL || p->method == NULL) {
    aotrun_output_placement_free(p);
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory creating method %s", method);
  }
  memcpy(p->method, method, m);
  p->n = num_outputs;
  p->device = device;
  p->log = log;
  p->log_ctx = log_ctx;
  *out = p;
  return AOTRUN_OK;
}

void aotrun_output_placement_free(aotrun_output_placement *p) {
  if (p == NULL) return;
  free(p->plan);
  free(p->seen);
  free(p->views);
  free(p->lend);
  free(p->lend_output);
  free(p->method);
  free(p);
}

static void turn_off(aotrun_output_placement *p, const char *why) {
  p->off = 1;
  if (p->log == NULL) return;
  char msg[512];
  snprintf(msg, sizeof msg,
           "method %s: outputs are copied from now on, no longer written in "
           "place: %s",
           p->method, why);
  p->log(p->log_ctx, AOTRUN_LOG_WARNING, msg);
}

/* ---- begin: what may be lent -------------------------------------------- */

static const char *data_of(const DLTensor *t) {
  return t->data == NULL ? NULL : (const char *)t->data + t->byte_offset;
}

/* Bytes from data_of(t) that t may touch (strided inputs included). */
static size_t extent(const DLTensor *t) {
  size_t item = aotrun_dl_itemsize(t->dtype), span = 1;
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 0) return 0;
    int64_t stride = t->strides != NULL ? t->strides[d] : 0;
    if (t->strides == NULL) {
      span *= (size_t)t->shape[d];
      continue;
    }
    span += (size_t)(t->shape[d] - 1) * (size_t)(stride < 0 ? -stride : stride);
  }
  return span * item;
}

static int overlap(const DLTensor *a, const DLTensor *b) {
  const char *x = data_of(a), *y = data_of(b);
  if (x == NULL || y == NULL) return 0;
  size_t nx = extent(a), ny = extent(b);
  return nx > 0 && ny > 0 && x < y + ny && y < x + nx;
}

static int in_allocation_memory(const aotrun_output_placement *p,
                                const DLTensor *t) {
  if (p->device.device_type == kDLCUDA)
    return t->device.device_type == kDLCUDA &&
           t->device.device_id == p->device.device_id;
  return t->device.device_type == kDLCPU ||
         t->device.device_type == kDLCUDAHost;
}

/* Whether output k's caller tensor may be lent to the plan's allocation. */
static int lendable(const aotrun_output_placement *p, const slot *s,
                    const DLTensor *inputs, size_t n_in,
                    const DLTensor *outputs, size_t k) {
  const DLTensor *t = &outputs[k];
  if (s->seq < 0 || t->data == NULL || t->ndim != s->ndim ||
      aotrun_dl_dtype_to_scalar_type(t->dtype) != s->dtype ||
      !in_allocation_memory(p, t) ||
      ((uintptr_t)data_of(t) % AOTRUN_PLACEMENT_ALIGN) != 0 ||
      !aotrun_strides_are_row_major(t->ndim, t->shape, t->strides))
    return 0;
  if (t->ndim > 0 &&
      memcmp(t->shape, s->sizes, (size_t)t->ndim * sizeof *t->shape) != 0)
    return 0;
  for (size_t i = 0; i < n_in; i++)
    if (overlap(t, &inputs[i])) return 0;
  for (size_t j = 0; j < p->n; j++)
    if (j != k && overlap(t, &outputs[j])) return 0;
  return 1;
}

static void sort_by_seq(aotrun_output_placement *p) {
  for (size_t i = 1; i < p->num_lent; i++)
    for (size_t j = i; j > 0 && p->lend[j].seq < p->lend[j - 1].seq; j--) {
      aotrun_shim_lend e = p->lend[j];
      p->lend[j] = p->lend[j - 1];
      p->lend[j - 1] = e;
      size_t o = p->lend_output[j];
      p->lend_output[j] = p->lend_output[j - 1];
      p->lend_output[j - 1] = o;
    }
}

void aotrun_output_placement_begin(aotrun_output_placement *p,
                                   const DLTensor *inputs, size_t num_inputs,
                                   const DLTensor *outputs,
                                   size_t num_outputs) {
  if (p == NULL) return;
  p->num_lent = 0;
  p->placed = 0;
  p->numbering = 0;
  if (p->off || num_outputs != p->n) return;
  for (size_t k = 0; p->has_plan && k < p->n; k++) {
    const slot *s = &p->plan[k];
    if (!lendable(p, s, inputs, num_inputs, outputs, k)) continue;
    aotrun_shim_lend *e = &p->lend[p->num_lent];
    *e = (aotrun_shim_lend){s->seq,
                            s->dtype,
                            p->device.device_type == kDLCUDA ? SHIM_CUDA
                                                             : SHIM_CPU,
                            p->device.device_id,
                            s->ndim,
                            s->sizes,
                            (void *)data_of(&outputs[k]),
                            0};
    p->lend_output[p->num_lent++] = k;
  }
  sort_by_seq(p);
  aotrun_shim_lend_begin(p->lend, p->num_lent, &p->live);
  p->numbering = 1;
}

void aotrun_output_placement_end(aotrun_output_placement *p) {
  if (p != NULL && p->numbering) aotrun_shim_lend_end();
}

/* ---- settle: check, repair, learn --------------------------------------- */

static void describe(AtenTensorHandle h, seen_output *o) {
  memset(o, 0, sizeof *o);
  aotrun_shim_tensor_alloc_info(h, &o->info);
  o->known = h != NULL && aoti_torch_get_data_ptr(h, &o->data) == 0 &&
             aoti_torch_get_dtype(h, &o->dtype) == 0 &&
             aoti_torch_get_device_type(h, &o->device_type) == 0 &&
             aoti_torch_get_dim(h, &o->ndim) == 0 &&
             aoti_torch_get_sizes(h, &o->sizes) == 0 &&
             o->ndim <= AOTRUN_MAX_DIMS;
}

/* Output k sits in its own caller tensor, exactly: its copy is skipped. */
static int in_own_place(const seen_output *o, const DLTensor *dst) {
  return o->info.whole && o->data == data_of(dst) && o->ndim == dst->ndim &&
         (o->ndim == 0 ||
          memcmp(o->sizes, dst->shape, (size_t)o->ndim * sizeof *o->sizes) ==
              0);
}

/* Replaces every slot from k on that holds out[k]'s handle by a clone in
 * fresh memory; the old handle goes when no slot holds it any more. */
static aotrun_status clone_out(AtenTensorHandle *out, size_t n, size_t k,
                               aotrun_error *err) {
  AtenTensorHandle old = out[k], fresh = NULL;
  if (aoti_torch_clone(old, &fresh) != AOTI_TORCH_SUCCESS || fresh == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "output %zu: moving it out of another output's "
                            "tensor failed: %s",
                            k, aotrun_shim_last_error());
  int kept = 0;
  for (size_t j = 0; j < n; j++) {
    if (out[j] != old) continue;
    if (j >= k)
      out[j] = fresh;
    else
      kept = 1;
  }
  if (!kept) aoti_torch_delete_tensor_object(old);
  return AOTRUN_OK;
}

static int lent_to(const aotrun_output_placement *p, size_t k) {
  for (size_t i = 0; i < p->num_lent; i++)
    if (p->lend_output[i] == k && p->lend[i].lent) return 1;
  return 0;
}

/* Outputs in lent memory that is not exactly theirs are cloned; returns
 * through *misplaced whether a lent buffer did not end as its output alone
 * (always so when something was cloned: the lent buffer it sat in is not
 * its owner's alone). p->views keeps each output as found. */
static aotrun_status repair(aotrun_output_placement *p, AtenTensorHandle *out,
                            const DLTensor *outputs, int *misplaced,
                            aotrun_error *err) {
  *misplaced = 0;
  for (size_t k = 0; k < p->n; k++) {
    seen_output *o = &p->views[k];
    describe(out[k], o);
    int own = o->known && in_own_place(o, &outputs[k]);
    if (lent_to(p, k) && !(own && o->info.lent && o->info.sole)) *misplaced = 1;
    if (o->known && o->info.lent && own) {
      p->placed++;
      continue;
    }
    if (o->known && o->info.lent) {
      aotrun_status st = clone_out(out, p->n, k, err);
      if (st != AOTRUN_OK) return st;
    }
  }
  return AOTRUN_OK;
}

static void learn_slot(const aotrun_output_placement *p, const seen_output *o,
                       slot *s) {
  memset(s, 0, sizeof *s);
  s->seq = -1;
  if (!o->known) return;
  int device_ok = p->device.device_type == kDLCUDA
                      ? o->device_type == SHIM_CUDA
                      : o->device_type == SHIM_CPU;
  if (o->info.seq < 0 || !o->info.sole || !o->info.whole || !device_ok) return;
  s->seq = o->info.seq;
  s->dtype = o->dtype;
  s->ndim = (int32_t)o->ndim;
  memcpy(s->sizes, o->sizes, (size_t)o->ndim * sizeof *o->sizes);
}

static int same_plan(const slot *a, const slot *b, size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (a[k].seq != b[k].seq) return 0;
    if (a[k].seq < 0) continue;
    if (a[k].dtype != b[k].dtype || a[k].ndim != b[k].ndim ||
        memcmp(a[k].sizes, b[k].sizes, (size_t)a[k].ndim * sizeof(int64_t)))
      return 0;
  }
  return 1;
}

/* The plan as one debug line (once per new plan, never per call). */
static void log_plan(const aotrun_output_placement *p) {
  if (p->log == NULL) return;
  size_t n = 0;
  for (size_t k = 0; k < p->n; k++) n += p->plan[k].seq >= 0;
  char msg[256];
  snprintf(msg, sizeof msg,
           "method %s: %zu of %zu outputs written in place from the next "
           "call with these shapes on",
           p->method, n, p->n);
  p->log(p->log_ctx, AOTRUN_LOG_DEBUG, msg);
}

/* Two calls in a row that agree make the plan (from p->views: repair's
 * descriptions, still the outputs' since nothing was cloned). */
static void learn(aotrun_output_placement *p) {
  slot *now = p->seen;
  int agrees = p->has_seen;
  for (size_t k = 0; k < p->n; k++) {
    slot s;
    learn_slot(p, &p->views[k], &s);
    if (agrees && !same_plan(&s, &now[k], 1)) agrees = 0;
    now[k] = s;
  }
  p->has_seen = 1;
  if (agrees && !(p->has_plan && same_plan(p->plan, p->seen, p->n))) {
    memcpy(p->plan, p->seen, p->n * sizeof *p->plan);
    p->has_plan = 1;
    log_plan(p);
  }
}

aotrun_status aotrun_output_placement_settle(aotrun_output_placement *p,
                                             AtenTensorHandle *out,
                                             const DLTensor *outputs,
                                             size_t num_outputs,
                                             aotrun_error *err) {
  if (p == NULL || !p->numbering || num_outputs != p->n) return AOTRUN_OK;
  int misplaced = 0;
  aotrun_status st = repair(p, out, outputs, &misplaced, err);
  if (st != AOTRUN_OK) return st;
  if (misplaced) {
    turn_off(p, "a lent output buffer did not end as its output alone (the "
                "model's allocations changed between calls)");
    return AOTRUN_OK;
  }
  learn(p);
  return AOTRUN_OK;
}

void aotrun_output_placement_after(aotrun_output_placement *p) {
  if (p == NULL || !p->numbering) return;
  p->numbering = 0;
  if (__atomic_load_n(&p->live, __ATOMIC_ACQUIRE) > 0 && !p->off)
    turn_off(p, "the model kept a reference to a caller's output buffer "
                "after the call");
}

size_t aotrun_output_placement_last_placed(const aotrun_output_placement *p) {
  return p == NULL ? 0 : p->placed;
}

int aotrun_output_placement_enabled(const aotrun_output_placement *p) {
  return p != NULL && !p->off;
}
