/*
 * self_binding.c: the aoti_torch_* imports of aotrun's own objects bound
 * to the shim, like a model's (shim_binding.h). An object that links the
 * shim (DT_NEEDED libaotrun_shim.so: the CUDA plugin, a host linking the
 * loader) means aotrun's functions, but one loaded RTLD_LOCAL after
 * libtorch was made global gets its imports bound to libtorch's by the
 * dynamic loader; the plugin would then make tensors the model cannot read
 * (docs/loading.md, "Isolation from libtorch"). Objects that do not link
 * the shim (libtorch, torch's own AOTInductor models) are left alone.
 *
 * Which objects: their DT_NEEDED entries, read from the dynamic section in
 * memory. The import slots: read from the object's file (mapped, not
 * copied), like a model's from its bytes.
 */
#include <dlfcn.h>
#include <elf.h>
#include <stdlib.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aot_loader/global_symbols.h"
#include "aot_loader/shim_binding.h"

typedef struct walk {
  void *shim;
  size_t rebound;
  aotrun_status st;
  aotrun_error *err;
} walk;

/* The objects to bind, collected first: binding looks symbols up
 * (dlsym, and global_symbols' mutex), which must not happen inside
 * dl_iterate_phdr's callback. The callback runs under ld.so's
 * dl_load_write_lock; a thread inside dlopen holds dl_load_lock and then
 * wants the write lock: dlsym there deadlocks (test_concurrency hung). */
typedef struct found {
  char **paths;
  uintptr_t *bases;
  size_t n, cap;
  int out_of_memory;
} found;

/* The extent [lo, hi) of the object's PT_LOAD segments (link addresses). */
static void extent(const struct dl_phdr_info *info, uintptr_t *lo,
                   uintptr_t *hi) {
  *lo = UINTPTR_MAX;
  *hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    if (ph->p_vaddr < *lo) *lo = ph->p_vaddr;
    if (ph->p_vaddr + ph->p_memsz > *hi) *hi = ph->p_vaddr + ph->p_memsz;
  }
}

/* A d_ptr of the dynamic section in memory, as an address: ld.so adjusts
 * them by the load base on most architectures, not on all (read-only
 * dynamic sections). Tells which by where the value falls; 0 when it
 * cannot be told (both, or neither: the object is then left alone). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p) {
  uintptr_t base = (uintptr_t)info->dlpi_addr, lo = 0, hi = 0;
  extent(info, &lo, &hi);
  if (base == 0) return (uintptr_t)p;
  int raw = p >= lo && p < hi;
  int adjusted = p >= base + lo && p < base + hi;
  if (raw == adjusted) return 0;
  return adjusted ? (uintptr_t)p : base + (uintptr_t)p;
}

/* Whether the loaded object lists AOTRUN_SHIM_LIBRARY_NAME in DT_NEEDED. */
static int needs_shim(const struct dl_phdr_info *info) {
  const ElfW(Dyn) *dyn = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (dyn == NULL) return 0;
  const char *strtab = NULL;
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_STRTAB)
      strtab = (const char *)dyn_ptr(info, d->d_un.d_ptr);
  if (strtab == NULL) return 0;
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_NEEDED &&
        strcmp(strtab + d->d_un.d_val, AOTRUN_SHIM_LIBRARY_NAME) == 0)
      return 1;
  return 0;
}

/* Binds one object's imports, read from its file. A file that cannot be
 * opened or mapped is left as the dynamic loader bound it. */
static aotrun_status bind_object(const char *path, uintptr_t base, walk *w) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return AOTRUN_OK;
  struct stat sb;
  void *map = MAP_FAILED;
  if (fstat(fd, &sb) == 0 && sb.st_size > 0)
    map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return AOTRUN_OK;
  aotrun_shim_plan plan;
  size_t rebound = 0;
  aotrun_status st =
      aotrun_shim_plan_read(map, (size_t)sb.st_size, path, &plan, w->err);
  if (st == AOTRUN_OK) {
    st = aotrun_shim_plan_bind(&plan, base, aotrun_global_symbols_shim_lookup,
                               w->shim, path, &rebound, w->err);
    aotrun_shim_plan_free(&plan);
  }
  munmap(map, (size_t)sb.st_size);
  w->rebound += rebound;
  return st;
}

static int collect(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  found *f = data;
  if (f->out_of_memory || !needs_shim(info)) return 0;
  const char *path = info->dlpi_name;
  if (path == NULL || path[0] == '\0') path = "/proc/self/exe";
  if (f->n == f->cap) {
    size_t cap = f->cap ? 2 * f->cap : 8;
    char **paths = realloc(f->paths, cap * sizeof *paths);
    if (paths != NULL) f->paths = paths;
    uintptr_t *bases = realloc(f->bases, cap * sizeof *bases);
    if (bases != NULL) f->bases = bases;
    if (paths == NULL || bases == NULL) {
      f->out_of_memory = 1;
      return 0;
    }
    f->cap = cap;
  }
  f->paths[f->n] = strdup(path);
  if (f->paths[f->n] == NULL) {
    f->out_of_memory = 1;
    return 0;
  }
  f->bases[f->n++] = (uintptr_t)info->dlpi_addr;
  return 0;
}

aotrun_status aotrun_global_symbols_bind_self(void *shim, size_t *rebound,
                                              aotrun_error *err) {
  walk w = {shim, 0, AOTRUN_OK, err};
  found f = {NULL, NULL, 0, 0, 0};
  dl_iterate_phdr(collect, &f);
  if (f.out_of_memory)
    w.st = aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory listing the loaded objects that "
                            "link the shim");
  for (size_t i = 0; i < f.n; i++) {
    if (w.st == AOTRUN_OK) w.st = bind_object(f.paths[i], f.bases[i], &w);
    free(f.paths[i]);
  }
  free(f.paths);
  free(f.bases);
  *rebound = w.rebound;
  return w.st;
}
