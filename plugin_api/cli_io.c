/*
 * cli_io.c: host tensors for one execute. Inputs (read by cli_inputs.c
 * from .npy and .safetensors files) are checked against the declared info;
 * outputs are allocated from the declared static dims, and a dynamic dim
 * takes the size its manifest symbol is bound to by an input ("s0" in an
 * input's shape and an output's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"

#define MAX_SYMBOLS (CLI_MAX_LIST * AOTRUN_MAX_DIMS)

typedef struct symbols {
  const char *name[MAX_SYMBOLS];
  int64_t size[MAX_SYMBOLS];
  size_t from_input[MAX_SYMBOLS];
  size_t count;
} symbols;

static const int64_t *lookup(const symbols *b, const char *name,
                             size_t *index) {
  for (size_t i = 0; i < b->count; i++)
    if (strcmp(b->name[i], name) == 0) {
      if (index != NULL) *index = i;
      return &b->size[i];
    }
  return NULL;
}

static int dtype_equal(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* Checks one input against its declared info and binds its symbols. */
static int check_input(const cli_session *s, size_t i, const aotrun_npy *a,
                       const char *label, symbols *b) {
  aotrun_io_info info;
  if (aotrun_host_method_io_info(s->handle, AOTRUN_IO_INPUT, i, &info) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  const char *name = info.name != NULL ? info.name : "?";
  /* Where the input came from, when a .safetensors file is involved. */
  char from[512] = "";
  if (label != NULL) snprintf(from, sizeof from, " (from %s)", label);
  if (!dtype_equal(info.dtype, a->dtype))
    return cli_fail(CLI_EXIT_PROGRAM, "input %zu (%s) is %s, the method "
                                      "takes %s%s",
                    i, name, aotrun_dtype_name(a->dtype),
                    aotrun_dtype_name(info.dtype), from);
  if (info.ndim != a->ndim)
    return cli_fail(CLI_EXIT_PROGRAM, "input %zu (%s) has rank %d, the "
                                      "method takes rank %d%s",
                    i, name, (int)a->ndim, (int)info.ndim, from);
  const manifest_io *m =
      i < s->method->num_inputs ? &s->method->inputs[i] : NULL;
  for (int32_t d = 0; d < info.ndim; d++) {
    if (info.shape[d] >= 0 && info.shape[d] != a->shape[d])
      return cli_fail(CLI_EXIT_PROGRAM, "input %zu (%s) has size %lld in dim "
                                        "%d, the method declares %lld%s",
                      i, name, (long long)a->shape[d], (int)d,
                      (long long)info.shape[d], from);
    if (m == NULL || d >= m->ndim || m->dims[d].symbol == NULL) continue;
    size_t k;
    const int64_t *bound = lookup(b, m->dims[d].symbol, &k);
    if (bound != NULL && *bound != a->shape[d])
      return cli_fail(CLI_EXIT_PROGRAM, "input %zu (%s) has size %lld in dim "
                                        "%d (symbol '%s'), input %zu has "
                                        "%lld%s",
                      i, name, (long long)a->shape[d], (int)d,
                      m->dims[d].symbol, b->from_input[k], (long long)*bound,
                      from);
    if (bound == NULL && b->count < MAX_SYMBOLS) {
      b->name[b->count] = m->dims[d].symbol;
      b->size[b->count] = a->shape[d];
      b->from_input[b->count++] = i;
    }
  }
  return CLI_EXIT_OK;
}

/* Output i without a buffer: the backend allocates it (execute_ex). */
static int make_managed(cli_tensors *t, size_t i, const aotrun_io_info *info) {
  memset(t->out_capacity[i], 0, sizeof t->out_capacity[i]);
  t->outputs[i] = (DLTensor){.device = {kDLCPU, 0},
                             .ndim = info->ndim,
                             .dtype = info->dtype,
                             .shape = t->out_shapes[i]};
  t->managed[i] = 1;
  return CLI_EXIT_OK;
}

/* Sizes and allocates output i. */
static int make_output(const cli_session *s, size_t i, const symbols *b,
                       cli_tensors *t) {
  aotrun_io_info info;
  if (aotrun_host_method_io_info(s->handle, AOTRUN_IO_OUTPUT, i, &info) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  const char *name = info.name != NULL ? info.name : "?";
  const manifest_io *m =
      i < s->method->num_outputs ? &s->method->outputs[i] : NULL;
  int64_t *shape = t->out_shapes[i];
  size_t bytes = aotrun_dtype_size(info.dtype);
  for (int32_t d = 0; d < info.ndim; d++) {
    shape[d] = info.shape[d];
    if (shape[d] < 0 && m != NULL && d < m->ndim) {
      const int64_t *bound =
          m->dims[d].symbol ? lookup(b, m->dims[d].symbol, NULL) : NULL;
      shape[d] = m->dims[d].symbol == NULL ? m->dims[d].size
                 : bound != NULL           ? *bound
                                           : -1;
    }
    /* A data-dependent dim (e.g. x[mask]: an unbacked symbol no input
     * binds): a backend with execute_ex allocates the output itself;
     * otherwise the largest input's element count is its capacity and the
     * backend writes the real size, which must fit. */
    if (shape[d] < 0 && t->use_ex) return make_managed(t, i, &info);
    if (shape[d] < 0 && t->max_input_numel > 0)
      shape[d] = t->max_input_numel;
    if (shape[d] < 0)
      return cli_fail(CLI_EXIT_PROGRAM,
                      "output %zu (%s) dim %d is dynamic (symbol '%s') and "
                      "no input binds it: cannot size the output",
                      i, name, (int)d,
                      m != NULL && d < m->ndim && m->dims[d].symbol
                          ? m->dims[d].symbol : "?");
    if (shape[d] != 0 && bytes > SIZE_MAX / (size_t)shape[d])
      return cli_fail(CLI_EXIT_PROGRAM, "output %zu (%s) is too large", i,
                      name);
    bytes *= (size_t)shape[d];
  }
  DLTensor *o = &t->outputs[i];
  o->data = calloc(1, bytes ? bytes : 1);
  if (o->data == NULL)
    return cli_fail(CLI_EXIT_EXECUTE, "out of memory for output %zu (%s)", i,
                    name);
  o->device = (DLDevice){kDLCPU, 0};
  o->ndim = info.ndim;
  o->dtype = info.dtype;
  o->shape = shape;
  memcpy(t->out_capacity[i], shape, sizeof t->out_capacity[i]);
  return CLI_EXIT_OK;
}

void cli_tensors_release_managed(cli_tensors *t) {
  for (size_t i = 0; i < t->num_outputs && i < CLI_MAX_LIST; i++) {
    if (t->held[i] != NULL && t->held[i]->deleter != NULL)
      t->held[i]->deleter(t->held[i]);
    t->held[i] = NULL;
  }
}

void cli_tensors_reset_shapes(cli_tensors *t) {
  cli_tensors_release_managed(t);
  for (size_t i = 0; i < t->num_outputs; i++) {
    memcpy(t->out_shapes[i], t->out_capacity[i], sizeof t->out_capacity[i]);
    if (!t->managed[i]) continue;
    free(t->outputs[i].data); /* the host copy of the last call's output */
    t->outputs[i].data = NULL;
    t->outputs[i].shape = t->out_shapes[i];
    t->outputs[i].device = (DLDevice){kDLCPU, 0};
  }
}

static int count_io(const cli_session *s, int32_t kind, size_t *n) {
  if (aotrun_host_method_num_io(s->handle, kind, n) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  if (*n > CLI_MAX_LIST)
    return cli_fail(CLI_EXIT_EXECUTE, "method has %zu %ss (max %d)", *n,
                    kind == AOTRUN_IO_INPUT ? "input" : "output",
                    CLI_MAX_LIST);
  return CLI_EXIT_OK;
}

int cli_tensors_prepare(const cli_session *s, aotrun_npy *arrays,
                        size_t num_arrays, char **labels, cli_tensors *t) {
  memset(t, 0, sizeof *t);
  t->use_ex = AOTRUN_TABLE_CAN(aotrun_backend_table(s->backend), execute_ex);
  t->in_arrays = arrays;
  t->in_labels = labels;
  t->num_inputs = num_arrays;
  size_t want = 0, outs = 0;
  int rc = count_io(s, AOTRUN_IO_INPUT, &want);
  if (rc == CLI_EXIT_OK) rc = count_io(s, AOTRUN_IO_OUTPUT, &outs);
  if (rc == CLI_EXIT_OK && want != num_arrays)
    rc = cli_fail(CLI_EXIT_PROGRAM, "method '%s' takes %zu input(s), got %zu",
                  s->method->name, want, num_arrays);
  t->inputs = calloc(num_arrays ? num_arrays : 1, sizeof *t->inputs);
  t->outputs = calloc(outs ? outs : 1, sizeof *t->outputs);
  t->out_shapes = calloc(outs ? outs : 1, sizeof *t->out_shapes);
  t->out_capacity = calloc(outs ? outs : 1, sizeof *t->out_capacity);
  if (rc == CLI_EXIT_OK &&
      (!t->inputs || !t->outputs || !t->out_shapes || !t->out_capacity))
    rc = cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  t->num_outputs = rc == CLI_EXIT_OK ? outs : 0;
  symbols *b = calloc(1, sizeof *b);
  if (rc == CLI_EXIT_OK && b == NULL)
    rc = cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  for (size_t i = 0; rc == CLI_EXIT_OK && i < num_arrays; i++) {
    rc = check_input(s, i, &arrays[i], labels ? labels[i] : NULL, b);
    t->inputs[i] = (DLTensor){.data = arrays[i].data,
                              .device = {kDLCPU, 0},
                              .ndim = arrays[i].ndim,
                              .dtype = arrays[i].dtype,
                              .shape = arrays[i].shape};
    int64_t numel = 1;
    for (int32_t d = 0; d < arrays[i].ndim; d++) numel *= arrays[i].shape[d];
    if (numel > t->max_input_numel) t->max_input_numel = numel;
  }
  for (size_t i = 0; rc == CLI_EXIT_OK && i < outs; i++)
    rc = make_output(s, i, b, t);
  free(b);
  return rc;
}

void cli_tensors_free(cli_tensors *t) {
  cli_tensors_release_managed(t);
  free(t->runtime); /* the runtime stays loaded (see cli_device_io_stop) */
  for (size_t i = 0; t->in_arrays != NULL && i < t->num_inputs; i++)
    aotrun_npy_free(&t->in_arrays[i]);
  for (size_t i = 0; t->in_labels != NULL && i < t->num_inputs; i++)
    free(t->in_labels[i]);
  free(t->in_labels);
  for (size_t i = 0; t->outputs != NULL && i < t->num_outputs; i++)
    free(t->outputs[i].data);
  free(t->in_arrays);
  free(t->inputs);
  free(t->outputs);
  free(t->out_shapes);
  free(t->out_capacity);
  memset(t, 0, sizeof *t);
}

/* One element as text; returns 0 for dtypes without a printable form. */
static int format_value(const DLTensor *t, size_t i, char *buf, size_t n) {
  const char *p = (const char *)t->data + t->byte_offset;
  DLDataType d = t->dtype;
#define CASE(code_, bits_, type, fmt, cast)                              \
  if (d.code == (code_) && d.bits == (bits_)) {                          \
    type v;                                                              \
    memcpy(&v, p + i * sizeof v, sizeof v);                              \
    snprintf(buf, n, fmt, (cast)v);                                      \
    return 1;                                                            \
  }
  CASE(kDLFloat, 32, float, "%g", double)
  CASE(kDLFloat, 64, double, "%g", double)
  CASE(kDLInt, 64, int64_t, "%lld", long long)
  CASE(kDLInt, 32, int32_t, "%lld", long long)
  CASE(kDLInt, 16, int16_t, "%lld", long long)
  CASE(kDLInt, 8, int8_t, "%lld", long long)
  CASE(kDLUInt, 8, uint8_t, "%llu", unsigned long long)
  CASE(AOTRUN_DL_BOOL, 8, uint8_t, "%llu", unsigned long long)
#undef CASE
  return 0;
}

void cli_print_tensor(const char *label, size_t index, const char *name,
                      const DLTensor *t, int with_values) {
  printf("%s %zu", label, index);
  if (name != NULL) printf(" (%s)", name);
  printf(": %s [", aotrun_dtype_name(t->dtype));
  size_t count = 1;
  for (int32_t d = 0; d < t->ndim; d++) {
    printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    count *= (size_t)t->shape[d];
  }
  printf("]");
  char v[64];
  if (with_values && count > 0 && format_value(t, 0, v, sizeof v)) {
    printf(" =");
    for (size_t i = 0; i < count && i < 8; i++) {
      format_value(t, i, v, sizeof v);
      printf(" %s", v);
    }
    if (count > 8) printf(" ...");
  }
  printf("\n");
}
