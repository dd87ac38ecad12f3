/* dim_ranges.c: see dim_ranges.h. */
#include "aot_loader/dim_ranges.h"

#include <stdio.h>
#include <stdlib.h>

/* Symbols are bound on the stack up to this many (no allocation per call
 * for ordinary methods). */
#define STACK_SYMBOLS 32

/* Where a symbol got its value. */
typedef struct bound {
  int64_t value;
  size_t input;
  int32_t dim;
  int set;
} bound;

typedef struct checker {
  const aotrun_program_method *m;
  bound *b; /* m->num_symbols */
  aotrun_error *err;
} checker;

static const char *range_text(const aotrun_program_symbol *s,
                              const aotrun_dim_expr *e, char *buf,
                              size_t size) {
  /* The expression's range: scale and offset applied to the symbol's
   * (fits: checked when the manifest was parsed). */
  long long lo = (long long)(e->scale * s->min + e->offset);
  if (s->max == AOTRUN_PROGRAM_NO_MAX)
    snprintf(buf, size, "[%lld, inf]", lo);
  else
    snprintf(buf, size, "[%lld, %lld]", lo,
             (long long)(e->scale * s->max + e->offset));
  return buf;
}

/* The symbol's value for this size, or 0 when no integer value gives it. */
static int solve(const aotrun_dim_expr *e, int64_t size, int64_t *value) {
  int64_t diff;
  if (__builtin_sub_overflow(size, e->offset, &diff)) return 0;
  if (diff % e->scale != 0) return 0;
  *value = diff / e->scale;
  return 1;
}

static aotrun_status out_of_range(checker *c, size_t i, int32_t d,
                                  int64_t size, const aotrun_dim_expr *e) {
  const aotrun_program_symbol *s = &c->m->symbols[e->symbol];
  const char *name = c->m->inputs[i].name;
  char expr[160], range[96], srange[96];
  aotrun_dim_expr plain = {e->symbol, 1, 0};
  if (e->scale == 1 && e->offset == 0)
    return aotrun_error_set(c->err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) has size %lld in dim %d (symbol "
                            "%s), outside its range %s",
                            i, name, (long long)size, (int)d, s->name,
                            range_text(s, e, range, sizeof range));
  return aotrun_error_set(
      c->err, AOTRUN_ERR_INVALID_ARGUMENT,
      "input %zu (%s) has size %lld in dim %d (%s), outside its range %s "
      "(%s in %s)",
      i, name, (long long)size, (int)d,
      aotrun_dim_expr_format(c->m, e, expr, sizeof expr),
      range_text(s, e, range, sizeof range), s->name,
      range_text(s, &plain, srange, sizeof srange));
}

static aotrun_status not_integral(checker *c, size_t i, int32_t d,
                                  int64_t size, const aotrun_dim_expr *e) {
  char expr[160];
  const aotrun_program_symbol *s = &c->m->symbols[e->symbol];
  return aotrun_error_set(c->err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "input %zu (%s) has size %lld in dim %d, which is "
                          "not %s for any integer %s",
                          i, c->m->inputs[i].name, (long long)size, (int)d,
                          aotrun_dim_expr_format(c->m, e, expr, sizeof expr),
                          s->name);
}

static aotrun_status breaks_relation(checker *c, size_t i, int32_t d,
                                     int64_t size, const aotrun_dim_expr *e) {
  const bound *b = &c->b[e->symbol];
  char expr[160];
  return aotrun_error_set(
      c->err, AOTRUN_ERR_INVALID_ARGUMENT,
      "input %zu (%s) has size %lld in dim %d, expected %lld (%s with %s = "
      "%lld from input %zu (%s) dim %d)",
      i, c->m->inputs[i].name, (long long)size, (int)d,
      (long long)(e->scale * b->value + e->offset),
      aotrun_dim_expr_format(c->m, e, expr, sizeof expr),
      c->m->symbols[e->symbol].name, (long long)b->value, b->input,
      c->m->inputs[b->input].name, (int)b->dim);
}

static aotrun_status check_dim(checker *c, size_t i, int32_t d,
                               int64_t size) {
  const aotrun_dim_expr *e = &c->m->inputs[i].exprs[d];
  const aotrun_program_symbol *s = &c->m->symbols[e->symbol];
  bound *b = &c->b[e->symbol];
  int64_t v;
  int ok = solve(e, size, &v);
  if (b->set) {
    if (!ok || v != b->value) return breaks_relation(c, i, d, size, e);
    return AOTRUN_OK;
  }
  if (!ok) {
    /* Below the range's bottom reads better as "outside its range". */
    if (size < e->scale * s->min + e->offset)
      return out_of_range(c, i, d, size, e);
    return not_integral(c, i, d, size, e);
  }
  if (v < s->min || v > s->max) return out_of_range(c, i, d, size, e);
  *b = (bound){v, i, d, 1};
  return AOTRUN_OK;
}

static aotrun_status check_all(checker *c, const DLTensor *in, size_t n) {
  for (size_t i = 0; i < n && i < c->m->num_inputs; i++) {
    const aotrun_program_io *io = &c->m->inputs[i];
    for (int32_t d = 0; d < io->ndim && d < in[i].ndim; d++) {
      if (io->exprs[d].symbol < 0) continue;
      aotrun_status st = check_dim(c, i, d, in[i].shape[d]);
      if (st != AOTRUN_OK) return st;
    }
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_dim_ranges_check(const aotrun_program_method *m,
                                      const DLTensor *inputs,
                                      size_t num_inputs, aotrun_error *err) {
  if (m == NULL || m->num_symbols == 0) return AOTRUN_OK;
  bound stack[STACK_SYMBOLS] = {{0, 0, 0, 0}};
  bound *heap = NULL;
  if (m->num_symbols > STACK_SYMBOLS) {
    heap = calloc(m->num_symbols, sizeof *heap);
    if (heap == NULL)
      return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                              "out of memory checking the dim ranges of "
                              "method %s",
                              m->name);
  }
  checker c = {m, heap ? heap : stack, err};
  aotrun_status st = check_all(&c, inputs, num_inputs);
  free(heap);
  return st;
}
