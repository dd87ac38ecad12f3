/*
 * model_library_checks.c: what the loader checks before a model library is
 * mapped, with every problem in one message, and the binding of its
 * aoti_torch_* imports to the shim after dlopen (docs/loading.md,
 * "Portability check" and "Isolation from libtorch").
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/global_symbols.h"
#include "aot_loader/kernel_arch.h"
#include "aot_loader/model_library_internal.h"

/* Adds one problem: the first is kept as it is, the next are appended
 * ("...; and: ..."), so a library that fails twice says so once. */
static void add_problem(aotrun_error *all, aotrun_status *first,
                        size_t *count, aotrun_status st,
                        const aotrun_error *one) {
  if (st == AOTRUN_OK) return;
  if (*count == 0) {
    *first = st;
    aotrun_error_set(all, st, "%s", one->message);
  } else if (all != NULL) {
    size_t used = strlen(all->message);
    snprintf(all->message + used, sizeof all->message - used, "; and: %s",
             one->message);
  }
  (*count)++;
}

/* The GPU portability check (kernel_arch.h); records the kernels found. */
static aotrun_status check_kernels(const void *bytes, size_t size,
                                   const aotrun_model_library_config *c,
                                   aotrun_error *err) {
  if (c->gpu_arch == 0 && c->report == NULL) return AOTRUN_OK;
  aotrun_kernel_archs archs;
  aotrun_kernel_archs_scan(bytes, size, &archs);
  if (c->report != NULL) {
    aotrun_kernel_archs_describe(&archs, c->report->kernels,
                                 sizeof c->report->kernels);
    c->report->gpu_arch = c->gpu_arch;
    c->report->driver_version = c->driver_version;
  }
  /* The documented way out should the scan misread a library's kernels. */
  const char *skip = getenv("AOTRUN_SKIP_KERNEL_ARCH_CHECK");
  if (c->gpu_arch == 0 || (skip != NULL && strcmp(skip, "1") == 0))
    return AOTRUN_OK;
  aotrun_kernel_target t = {.gpu = c->gpu_arch,
                            .driver_version = c->driver_version,
                            .device = c->device};
  return aotrun_kernel_archs_check_target(
      &archs, &t, c->name ? c->name : "model library", err);
}

/* Every aoti_torch_* import must be exported by the shim. */
static aotrun_status check_imports(const void *bytes, size_t size,
                                   const char *what, aotrun_shim_plan *plan,
                                   aotrun_error *err) {
  aotrun_status st = aotrun_shim_plan_read(bytes, size, what, plan, err);
  if (st != AOTRUN_OK) return st;
  char names[640];
  size_t missing = aotrun_shim_plan_missing(
      plan, aotrun_global_symbols_shim_lookup, NULL, names, sizeof names);
  if (missing == 0) return AOTRUN_OK;
  return aotrun_error_set(
      err, AOTRUN_ERR_NOT_SUPPORTED,
      "%s imports %zu aoti_torch_* function%s that the shim library (%s) "
      "does not export: %s: use the shim library of the aotrun the program "
      "was exported for, or re-export it with this aotrun's exporter",
      what, missing, missing == 1 ? "" : "s",
      aotrun_global_symbols_shim_path(), names);
}

aotrun_status aotrun_model_library_precheck(const void *bytes, size_t size,
                                            const aotrun_model_library_config *c,
                                            int is_cuda,
                                            aotrun_shim_plan *plan,
                                            aotrun_error *err) {
  const char *what = c->name ? c->name : "model library";
  memset(plan, 0, sizeof *plan);
  aotrun_status first = AOTRUN_OK;
  size_t count = 0;
  aotrun_error one;
  aotrun_error_clear(&one);
  add_problem(err, &first, &count, check_kernels(bytes, size, c, &one), &one);
  aotrun_status st = aotrun_global_symbols_ensure(is_cuda, &one);
  if (st != AOTRUN_OK) {
    aotrun_error_prefix(&one, "loading model: ");
  } else {
    st = check_imports(bytes, size, what, plan, &one);
    if (st == AOTRUN_OK && c->report != NULL)
      c->report->shim_imports = plan->num_names;
  }
  add_problem(err, &first, &count, st, &one);
  if (count > 0) aotrun_shim_plan_free(plan);
  return first;
}

aotrun_status aotrun_model_library_bind_shim(aotrun_model_library *lib,
                                             const aotrun_shim_plan *plan,
                                             aotrun_load_report *report,
                                             aotrun_error *err) {
  struct link_map *lm = NULL;
  if (plan->num_slots == 0) return AOTRUN_OK;
  if (dlinfo(lib->dl, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "%s: cannot find where it was mapped (dlinfo)",
                            lib->name);
  size_t rebound = 0;
  aotrun_status st = aotrun_shim_plan_bind(
      plan, (uintptr_t)lm->l_addr, aotrun_global_symbols_shim_lookup, NULL,
      lib->name, &rebound, err);
  if (report != NULL) report->shim_rebound = rebound;
  return st;
}
