/*
 * global_symbols.c: see global_symbols.h for the search order and why.
 */
#include "aot_loader/global_symbols.h"

#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef const char *(*last_error_fn)(void);
typedef void (*clear_error_fn)(void);

/* Written once, under g_mu, by the first successful ensure; read afterwards
 * by code that got a model library from a load that called ensure. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static void *g_shim;
static void *g_cudart;
static last_error_fn g_last_error;
static clear_error_fn g_clear_error;
static aotrun_delete_tensor_fn g_delete_tensor;

/* Appends "; <text>" to a diagnostic buffer, truncating quietly (the
 * return value is read so that -O2's -Wformat-truncation knows the cut is
 * meant). */
static void note(char *buf, size_t cap, const char *what, const char *why) {
  size_t used = strlen(buf);
  if (used + 1 >= cap) return;
  if (snprintf(buf + used, cap - used, "%s%s: %s", used ? "; " : "", what,
               why ? why : "unknown error") < 0)
    buf[used] = '\0';
}

/* The link map of the object that holds addr, or NULL. */
static struct link_map *object_of(const void *addr) {
  Dl_info info;
  struct link_map *lm = NULL;
  if (dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) == 0) return NULL;
  return lm;
}

/* Step 2: the object our own scope binds `marker` to, made global; with
 * `own`, only when that object also exports it (checked before the object
 * is promoted: RTLD_NOLOAD|RTLD_GLOBAL would make libtorch global). */
static void *promote_provider(const char *marker, const char *own, char *diag,
                              size_t cap) {
  void *sym = dlsym(RTLD_DEFAULT, marker);
  if (sym == NULL) return NULL;
  struct link_map *lm = object_of(sym);
  if (lm == NULL) return NULL;
  int main_program = lm->l_name == NULL || lm->l_name[0] == '\0';
  if (own != NULL) {
    void *peek = main_program ? dlopen(NULL, RTLD_NOW)
                              : dlopen(lm->l_name, RTLD_NOW | RTLD_NOLOAD);
    int ours = peek != NULL && dlsym(peek, own) != NULL;
    if (peek != NULL) dlclose(peek);
    if (!ours) return NULL; /* another provider of the marker (libtorch) */
  }
  if (main_program)
    return dlopen(NULL, RTLD_NOW | RTLD_GLOBAL); /* main program: global */
  void *h = dlopen(lm->l_name, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (h == NULL) note(diag, cap, lm->l_name, dlerror());
  return h;
}

/* The directory of the object holding this code (the executable's when we
 * are linked into it), or 0 when it cannot be told. */
static int own_directory(char *dir, size_t cap) {
  static const char anchor = 0;
  struct link_map *lm = object_of(&anchor);
  char path[PATH_MAX];
  if (lm != NULL && lm->l_name != NULL && lm->l_name[0] != '\0') {
    snprintf(path, sizeof path, "%s", lm->l_name);
  } else {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
  }
  char *slash = strrchr(path, '/');
  if (slash == NULL) return 0;
  *slash = '\0';
  snprintf(dir, cap, "%s", path[0] ? path : "/");
  return 1;
}

/* Steps 1-4 of global_symbols.h for one library. `own`: a symbol only the
 * right library exports (NULL: any provider of the marker will do). */
static void *make_global(const char *name, const char *marker,
                         const char *own, char *diag, size_t cap) {
  void *h = dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (h != NULL) return h;
  dlerror(); /* NOLOAD misses set an error; don't report it */
  h = promote_provider(marker, own, diag, cap);
  if (h != NULL) return h;
  char dir[PATH_MAX];
  if (own_directory(dir, sizeof dir)) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h != NULL) return h;
    note(diag, cap, path, dlerror());
  }
  h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  if (h == NULL) note(diag, cap, name, dlerror());
  return h;
}

static void bind_shim_functions(void *shim) {
  void *p = dlsym(shim, "aotrun_shim_last_error");
  memcpy(&g_last_error, &p, sizeof p);
  p = dlsym(shim, "aotrun_shim_clear_error");
  memcpy(&g_clear_error, &p, sizeof p);
  p = dlsym(shim, "aoti_torch_delete_tensor_object");
  memcpy(&g_delete_tensor, &p, sizeof p);
}

static aotrun_status ensure_one(void **slot, const char *name,
                                const char *marker, const char *own,
                                aotrun_error *err) {
  if (*slot != NULL) return AOTRUN_OK;
  char diag[AOTRUN_ERROR_MESSAGE_SIZE - 128] = "";
  void *h = make_global(name, marker, own, diag, sizeof diag);
  if (h == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cannot load %s into the global symbol scope "
                            "(model libraries import its symbols): %s",
                            name, diag[0] ? diag : "not found");
  *slot = h;
  return AOTRUN_OK;
}

aotrun_status aotrun_global_symbols_ensure(int need_cudart,
                                           aotrun_error *err) {
  pthread_mutex_lock(&g_mu);
  int had_shim = g_shim != NULL;
  aotrun_status st = ensure_one(&g_shim, AOTRUN_SHIM_LIBRARY_NAME,
                                "aoti_torch_empty_strided",
                                "aotrun_shim_last_error", err);
  if (st == AOTRUN_OK && !had_shim) bind_shim_functions(g_shim);
  /* Every load: an object linking the shim may have been loaded since. */
  size_t rebound = 0;
  if (st == AOTRUN_OK)
    st = aotrun_global_symbols_bind_self(g_shim, &rebound, err);
  if (st == AOTRUN_OK && need_cudart)
    st = ensure_one(&g_cudart, AOTRUN_CUDART_LIBRARY_NAME, "cudaMalloc", NULL,
                    err);
  pthread_mutex_unlock(&g_mu);
  return st;
}

/* ctx: the shim's handle while ensure holds the lock (self_binding.c),
 * NULL otherwise (the one ensure made global). */
void *aotrun_global_symbols_shim_lookup(void *ctx, const char *name) {
  void *shim = ctx;
  if (shim == NULL) {
    pthread_mutex_lock(&g_mu);
    shim = g_shim;
    pthread_mutex_unlock(&g_mu);
  }
  return shim != NULL ? dlsym(shim, name) : NULL;
}

const char *aotrun_global_symbols_shim_path(void) {
  pthread_mutex_lock(&g_mu);
  void *shim = g_shim;
  pthread_mutex_unlock(&g_mu);
  struct link_map *lm = NULL;
  if (shim != NULL && dlinfo(shim, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL &&
      lm->l_name != NULL && lm->l_name[0] != '\0')
    return lm->l_name;
  return AOTRUN_SHIM_LIBRARY_NAME;
}

void aotrun_global_symbols_release(void) {
  pthread_mutex_lock(&g_mu);
  if (g_cudart != NULL) dlclose(g_cudart);
  if (g_shim != NULL) dlclose(g_shim);
  g_cudart = g_shim = NULL;
  g_last_error = NULL;
  g_clear_error = NULL;
  g_delete_tensor = NULL;
  pthread_mutex_unlock(&g_mu);
}

const char *aotrun_global_symbols_shim_last_error(void) {
  if (g_last_error == NULL) return "";
  const char *s = g_last_error();
  return s != NULL ? s : "";
}

void aotrun_global_symbols_shim_clear_error(void) {
  if (g_clear_error != NULL) g_clear_error();
}

aotrun_delete_tensor_fn aotrun_global_symbols_shim_delete_tensor(void) {
  return g_delete_tensor;
}
