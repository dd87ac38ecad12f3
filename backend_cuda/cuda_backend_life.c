/* cuda_backend_life.c: see cuda_backend_life.h. */
#include "backend_cuda/cuda_backend_life.h"

#include <pthread.h>

#include "aot_loader/global_symbols.h"
#include "shim_lib/aotrun_shim.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t g_users;   /* entry-symbol calls not yet balanced */
static int64_t g_methods; /* live method handles */
static int64_t g_releases;

void aotrun_cuda_backend_acquire(void) {
  pthread_mutex_lock(&g_mu);
  g_users++;
  pthread_mutex_unlock(&g_mu);
}

void aotrun_cuda_method_born(void) {
  pthread_mutex_lock(&g_mu);
  g_methods++;
  pthread_mutex_unlock(&g_mu);
}

void aotrun_cuda_method_gone(void) {
  pthread_mutex_lock(&g_mu);
  g_methods--;
  pthread_mutex_unlock(&g_mu);
}

void aotrun_cuda_deinit(const aotrun_backend_api *self) {
  (void)self;
  pthread_mutex_lock(&g_mu);
  if (g_users > 0) g_users--;
  /* Under the lock: an init racing with the last deinit is a host bug,
   * but it must not see half-freed state. */
  if (g_users == 0 && g_methods == 0) {
    aotrun_shim_release_process_state();
    aotrun_global_symbols_release();
    g_releases++;
  }
  pthread_mutex_unlock(&g_mu);
}

int64_t aotrun_cuda_backend_users(void) {
  pthread_mutex_lock(&g_mu);
  int64_t n = g_users;
  pthread_mutex_unlock(&g_mu);
  return n;
}

int64_t aotrun_cuda_live_methods(void) {
  pthread_mutex_lock(&g_mu);
  int64_t n = g_methods;
  pthread_mutex_unlock(&g_mu);
  return n;
}

int64_t aotrun_cuda_releases(void) {
  pthread_mutex_lock(&g_mu);
  int64_t n = g_releases;
  pthread_mutex_unlock(&g_mu);
  return n;
}
