/*
 * shim_binding.h: binds a model library's aoti_torch_* imports to aotrun's
 * shim library explicitly, whatever else the process has loaded
 * (docs/loading.md, "Isolation from libtorch").
 *
 * Why: dlopen resolves a library's undefined symbols in the global scope
 * first, in load order. In a process that loaded libtorch RTLD_GLOBAL
 * before aotrun (TORCH_USE_RTLD_GLOBAL=1, an extension, ctypes), libtorch's
 * aoti_torch_* come first and the model would hand our tensor handles to
 * libtorch. So the loader
 *   1. before dlopen, reads the import relocations from the library's bytes
 *      (a plan: each GOT/data slot that holds an aoti_torch_* address) and
 *      checks every imported name against the shim, all missing names in
 *      one message;
 *   2. after dlopen, writes the shim's address into each slot (opening a
 *      RELRO page for the write and closing it again), counting the slots
 *      the dynamic loader had bound to another object.
 * Only the dynamic relocation tables are read (DT_RELA, DT_JMPREL): every
 * offset, size and index is checked against the bytes.
 */
#ifndef AOTRUN_SHIM_BINDING_H
#define AOTRUN_SHIM_BINDING_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"

#define AOTRUN_SHIM_PREFIX "aoti_torch_"

typedef struct aotrun_shim_slot {
  uint64_t vaddr;   /* where the address goes, relative to the load base */
  int64_t addend;   /* added to the symbol's address (S + A) */
  uint32_t name;    /* index into names */
} aotrun_shim_slot;

typedef struct aotrun_shim_plan {
  aotrun_shim_slot *slots;
  size_t num_slots;
  const char **names; /* distinct imported aoti_torch_* names (point into
                         the library's bytes: keep them alive) */
  size_t num_names;
  /* [relro_start, relro_end): PT_GNU_RELRO, read-only after relocation. */
  uint64_t relro_start, relro_end;
} aotrun_shim_plan;

/* Reads the plan from a shared library's bytes (already through
 * aotrun_elf_check_shared_library). A library without aoti_torch_* imports
 * gives an empty plan. AOTRUN_ERR_INVALID_ARGUMENT for a relocation table
 * outside the bytes or an aoti_torch_* import through a relocation type
 * other than GLOB_DAT / JUMP_SLOT / 64-bit absolute (named, with `what`). */
aotrun_status aotrun_shim_plan_read(const void *bytes, size_t size,
                                    const char *what, aotrun_shim_plan *plan,
                                    aotrun_error *err);

void aotrun_shim_plan_free(aotrun_shim_plan *plan);

typedef void *(*aotrun_shim_lookup_fn)(void *ctx, const char *name);

/* The names of the plan the shim does not export (lookup returns NULL),
 * comma-separated into buf ("" when all are there; truncated with ", ..."
 * when long). Returns how many are missing. */
size_t aotrun_shim_plan_missing(const aotrun_shim_plan *plan,
                                aotrun_shim_lookup_fn lookup, void *ctx,
                                char *buf, size_t size);

/* Writes lookup(name) + addend into every slot of a library loaded at
 * `base` (link_map l_addr). *rebound: slots that held another value
 * (bound elsewhere by the dynamic loader). AOTRUN_ERR_ACCESS_FAILED when a
 * name cannot be looked up or a RELRO page cannot be opened (mprotect). */
aotrun_status aotrun_shim_plan_bind(const aotrun_shim_plan *plan,
                                    uintptr_t base,
                                    aotrun_shim_lookup_fn lookup, void *ctx,
                                    const char *what, size_t *rebound,
                                    aotrun_error *err);

#endif /* AOTRUN_SHIM_BINDING_H */
