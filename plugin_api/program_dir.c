/*
 * program_dir.c: the named-data service over a program directory. Keys are
 * plain file names inside the directory; their bytes are mmapped read-only
 * so large model libraries and weights are never copied.
 *
 * Trust (docs/plugin-abi.md, "Files and trust"): a key is opened without
 * blocking (a FIFO never hangs the open) and must be a regular file whose
 * real path (symbolic links resolved) lies inside the directory's real
 * path; a link to a file outside the program directory is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/host_error.h"
#include "plugin_api/host_file.h"

/* One get_named_data result; the token handed to the plugin. */
typedef struct mapping {
  struct mapping *next;
  void *addr; /* NULL for an empty file */
  size_t size;
} mapping;

struct aotrun_program_dir {
  aotrun_host_api api; /* api.ctx points back here */
  char *path;
  char *real; /* realpath(path): keys must resolve under it */
  int32_t log_threshold; /* atomic loads and stores: set while plugins log */
  pthread_mutex_t lock; /* guards mappings: plugins may call from threads */
  mapping *mappings;
};

static aotrun_status check_key(const char *key) {
  if (key == NULL || key[0] == '\0')
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "named data key is empty");
  if (strchr(key, '/') != NULL || strcmp(key, ".") == 0 ||
      strcmp(key, "..") == 0)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "named data key '%s' is not a plain file name "
                            "(no '/', '.' or '..')",
                            key);
  return AOTRUN_OK;
}

/* mmaps the open regular file fd into *m. */
static aotrun_status map_file(const char *file, int fd,
                              const struct stat *st, mapping *m) {
  m->size = (size_t)st->st_size;
  if (m->size == 0) return AOTRUN_OK; /* mmap refuses length 0 */
  void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED)
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED,
                            "named data %s: mmap of %zu bytes failed: %s",
                            file, m->size, strerror(errno));
  m->addr = p;
  return AOTRUN_OK;
}

/* "dir/key" in a new string, or NULL when out of memory. */
static char *join(const char *dir, const char *key) {
  size_t a = strlen(dir), b = strlen(key);
  char *file = malloc(a + b + 2);
  if (file == NULL) return NULL;
  memcpy(file, dir, a);
  file[a] = '/';
  memcpy(file + a + 1, key, b + 1);
  return file;
}

/* Resolves file and refuses it unless it lies inside the directory. On
 * success *resolved is a new string (a path without symbolic links). */
static aotrun_status confine(const aotrun_program_dir *d, const char *file,
                             char **resolved) {
  *resolved = realpath(file, NULL);
  if (*resolved == NULL)
    return aotrun_host_file_open_failed("named data", file, errno);
  size_t n = strlen(d->real);
  int root = n == 1; /* the program directory is "/" */
  if (strncmp(*resolved, d->real, n) != 0 || (!root && (*resolved)[n] != '/')) {
    aotrun_status s = aotrun_host_fail(
        AOTRUN_ERR_INVALID_ARGUMENT,
        "named data %s resolves to %s, outside the program directory %s: "
        "refused (see \"Files and trust\" in docs/plugin-abi.md)",
        file, *resolved, d->real);
    free(*resolved);
    *resolved = NULL;
    return s;
  }
  return AOTRUN_OK;
}

/* Opens (without blocking, without following a link), checks and maps
 * dir/key into *m. */
static aotrun_status map_key(const aotrun_program_dir *d, const char *key,
                             mapping *m) {
  char *file = join(d->path, key), *resolved = NULL;
  if (file == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory reading named data '%s'", key);
  aotrun_status s = confine(d, file, &resolved);
  int fd = -1;
  struct stat st;
  if (s == AOTRUN_OK)
    s = aotrun_host_file_open_read(resolved, "named data", 1, SIZE_MAX, &fd,
                                   &st);
  if (s == AOTRUN_OK) s = map_file(file, fd, &st, m);
  if (fd >= 0) close(fd); /* the mapping outlives the descriptor */
  free(resolved);
  free(file);
  return s;
}

static aotrun_status get_named_data(void *ctx, const char *key,
                                    const void **data, size_t *size,
                                    void **token) {
  static const char kEmpty[1] = {0};
  aotrun_program_dir *d = ctx;
  if (data == NULL || size == NULL || token == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_named_data: NULL data, size or token");
  *data = NULL;
  *size = 0;
  *token = NULL;
  aotrun_status s = check_key(key);
  if (s != AOTRUN_OK) return s;
  mapping *m = calloc(1, sizeof *m);
  if (m == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory reading named data '%s'", key);
  if ((s = map_key(d, key, m)) != AOTRUN_OK) {
    free(m);
    return s;
  }
  pthread_mutex_lock(&d->lock);
  m->next = d->mappings;
  d->mappings = m;
  pthread_mutex_unlock(&d->lock);
  *data = m->addr != NULL ? m->addr : (const void *)kEmpty;
  *size = m->size;
  *token = m;
  return AOTRUN_OK;
}

static void unmap(mapping *m) {
  if (m->addr != NULL) munmap(m->addr, m->size);
  free(m);
}

/* Unknown or NULL tokens are ignored: release never fails. */
static void release_named_data(void *ctx, void *token) {
  aotrun_program_dir *d = ctx;
  mapping *found = NULL;
  pthread_mutex_lock(&d->lock);
  for (mapping **p = &d->mappings; *p != NULL; p = &(*p)->next) {
    if (*p == token) {
      found = *p;
      *p = found->next;
      break;
    }
  }
  pthread_mutex_unlock(&d->lock);
  if (found != NULL) unmap(found);
}

static void log_message(void *ctx, int32_t level, const char *message) {
  const aotrun_program_dir *d = ctx;
  aotrun_log_stderr(__atomic_load_n(&d->log_threshold, __ATOMIC_RELAXED),
                    level, message);
}

aotrun_status aotrun_program_dir_open(const char *path,
                                      aotrun_program_dir **out) {
  if (out == NULL || path == NULL || path[0] == '\0')
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_program_dir_open: empty path or NULL out");
  *out = NULL;
  struct stat st;
  if (stat(path, &st) != 0)
    return aotrun_host_fail(errno == ENOENT ? AOTRUN_ERR_NOT_FOUND
                                            : AOTRUN_ERR_ACCESS_FAILED,
                            "program directory %s: %s", path,
                            strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "program %s is not a directory", path);
  aotrun_program_dir *d = calloc(1, sizeof *d);
  if (d != NULL) d->path = strdup(path);
  if (d != NULL && d->path != NULL) d->real = realpath(path, NULL);
  if (d == NULL || d->path == NULL || d->real == NULL) {
    if (d != NULL) free(d->path);
    free(d);
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory opening program %s", path);
  }
  pthread_mutex_init(&d->lock, NULL);
  d->log_threshold = AOTRUN_LOG_WARNING;
  d->api.abi_version = AOTRUN_ABI_VERSION;
  d->api.struct_size = sizeof d->api;
  d->api.ctx = d;
  d->api.log = log_message;
  d->api.get_named_data = get_named_data;
  d->api.release_named_data = release_named_data;
  *out = d;
  return AOTRUN_OK;
}

void aotrun_program_dir_close(aotrun_program_dir *d) {
  if (d == NULL) return;
  while (d->mappings != NULL) {
    mapping *m = d->mappings;
    d->mappings = m->next;
    unmap(m);
  }
  pthread_mutex_destroy(&d->lock);
  free(d->path);
  free(d->real);
  free(d);
}

const aotrun_host_api *aotrun_program_dir_host_api(
    const aotrun_program_dir *d) {
  return d != NULL ? &d->api : NULL;
}

const char *aotrun_program_dir_path(const aotrun_program_dir *d) {
  return d != NULL ? d->path : NULL;
}

void aotrun_program_dir_set_log_level(aotrun_program_dir *d,
                                      int32_t threshold) {
  if (d != NULL) __atomic_store_n(&d->log_threshold, threshold, __ATOMIC_RELAXED);
}

size_t aotrun_program_dir_num_mapped(const aotrun_program_dir *d) {
  if (d == NULL) return 0;
  size_t n = 0;
  aotrun_program_dir *w = (aotrun_program_dir *)d; /* lock is not const */
  pthread_mutex_lock(&w->lock);
  for (const mapping *m = d->mappings; m != NULL; m = m->next) n++;
  pthread_mutex_unlock(&w->lock);
  return n;
}
