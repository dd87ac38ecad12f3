/* warm_up_run_plan.c: see warm_up_run_plan.h. */
#include "backend_cuda/warm_up_run_plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

/* What an import does that a run at init must not: NULL when nothing. */
static const char *import_hazard(const char *name) {
  static const char *const random[] = {"rand", "bernoulli", "normal",
                                       "uniform", "exponential", "multinomial",
                                       "dropout", "geometric", "cauchy",
                                       "log_normal"};
  if (strncmp(name, "aoti_torch_", 11) != 0) return NULL;
  if (strstr(name, "assert") != NULL)
    return "zeroed inputs may fail its device-side assert";
  for (size_t i = 0; i < sizeof random / sizeof random[0]; i++)
    if (strstr(name, random[i]) != NULL)
      return "a run would draw random numbers and shift a fixed seed's "
             "sequence";
  return NULL;
}

static int refuse(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t n, const char *fmt, ...) {
  if (why != NULL && n > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return 1;
}

static int refused_entry(const cJSON *m, const char *method, char *why,
                         size_t n) {
  if (!cJSON_IsObject(m))
    return refuse(why, n, "the manifest has no method '%s'", method);
  const cJSON *writes = cJSON_GetObjectItemCaseSensitive(m, "writes_buffers");
  if (!cJSON_IsBool(writes))
    return refuse(why, n,
                  "its manifest does not say whether it writes buffers "
                  "(no writes_buffers: re-export it with this aotrun)");
  if (cJSON_IsTrue(writes))
    return refuse(why, n,
                  "it writes buffers (a run would change its state)");
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, "aoti_torch_imports");
  if (!cJSON_IsArray(list))
    return refuse(why, n,
                  "its manifest does not list its imports (no "
                  "aoti_torch_imports)");
  const cJSON *item = NULL;
  cJSON_ArrayForEach(item, list) {
    const char *hazard =
        cJSON_IsString(item) ? import_hazard(item->valuestring) : NULL;
    if (hazard != NULL)
      return refuse(why, n, "it imports %s: %s", item->valuestring, hazard);
  }
  return 0;
}

int aotrun_warm_up_run_refused(const void *manifest, size_t size,
                               const char *method, char *why,
                               size_t why_size) {
  if (why != NULL && why_size > 0) why[0] = '\0';
  if (manifest == NULL || method == NULL)
    return refuse(why, why_size, "no manifest");
  cJSON *root = cJSON_ParseWithLength(manifest, size);
  if (root == NULL) return refuse(why, why_size, "the manifest does not parse");
  const cJSON *methods = cJSON_GetObjectItemCaseSensitive(root, "methods");
  int r = refused_entry(cJSON_GetObjectItemCaseSensitive(methods, method),
                        method, why, why_size);
  cJSON_Delete(root);
  return r;
}

/* The symbol's value for the run: its hint where asked and it has one
 * (cuBLAS picks kernels by size and loads each at its first launch, so
 * the sizes callers use matter), else its smallest in range, at least 1
 * (a dim of 0 launches no kernel) unless the range allows no such value. */
static int64_t run_value(const aotrun_program_symbol *s, aotrun_warm_up_at at) {
  if (at == AOTRUN_WARM_UP_AT_HINT && s->hint >= 1) return s->hint;
  if (s->min >= 1) return s->min;
  return s->max >= 1 ? 1 : s->min;
}

int aotrun_warm_up_run_shapes(const aotrun_program_method *m,
                              aotrun_warm_up_at at,
                              int64_t (*shapes)[AOTRUN_PROGRAM_MAX_DIMS],
                              size_t max_inputs, char *why, size_t why_size) {
  if (why != NULL && why_size > 0) why[0] = '\0';
  if (m->num_inputs > max_inputs) {
    if (why != NULL)
      snprintf(why, why_size, "it has %zu inputs, more than %zu",
               m->num_inputs, max_inputs);
    return 0;
  }
  for (size_t i = 0; i < m->num_inputs; i++) {
    const aotrun_program_io *io = &m->inputs[i];
    for (int32_t d = 0; d < io->ndim; d++) {
      const aotrun_dim_expr *e = &io->exprs[d];
      if (io->dims[d] >= 0) {
        shapes[i][d] = io->dims[d];
      } else if (e->symbol >= 0 && (size_t)e->symbol < m->num_symbols) {
        shapes[i][d] = e->scale * run_value(&m->symbols[e->symbol], at) +
                       e->offset;
      } else {
        if (why != NULL)
          snprintf(why, why_size,
                   "input %zu (%s) dim %d (%s) has no declared range", i,
                   io->name, (int)d, io->symbols[d] ? io->symbols[d] : "?");
        return 0;
      }
    }
  }
  return 1;
}
