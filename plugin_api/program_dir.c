/*
 * program_dir.c: the named-data service over a program directory. Keys are
 * plain file names inside the directory; their bytes are mmapped read-only
 * so large model libraries and weights are never copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/host_error.h"

/* One get_named_data result; the token handed to the plugin. */
typedef struct mapping {
  struct mapping *next;
  void *addr; /* NULL for an empty file */
  size_t size;
} mapping;

struct aotrun_program_dir {
  aotrun_host_api api; /* api.ctx points back here */
  char *path;
  int32_t log_threshold;
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

static aotrun_status open_errno(const char *file, int err) {
  aotrun_status s =
      err == ENOENT ? AOTRUN_ERR_NOT_FOUND : AOTRUN_ERR_ACCESS_FAILED;
  return aotrun_host_fail(s, "named data %s: %s", file, strerror(err));
}

/* mmaps the open file fd into *m. */
static aotrun_status map_file(const char *file, int fd, mapping *m) {
  struct stat st;
  if (fstat(fd, &st) != 0) return open_errno(file, errno);
  if (!S_ISREG(st.st_mode))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "named data %s is not a regular file", file);
  m->size = (size_t)st.st_size;
  if (m->size == 0) return AOTRUN_OK; /* mmap refuses length 0 */
  void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED)
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED,
                            "named data %s: mmap of %zu bytes failed: %s",
                            file, m->size, strerror(errno));
  m->addr = p;
  return AOTRUN_OK;
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
  size_t n = strlen(d->path) + strlen(key) + 2;
  char *file = malloc(n);
  mapping *m = calloc(1, sizeof *m);
  if (file == NULL || m == NULL) {
    free(file);
    free(m);
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory reading named data '%s'", key);
  }
  memcpy(file, d->path, strlen(d->path));
  file[strlen(d->path)] = '/';
  memcpy(file + strlen(d->path) + 1, key, strlen(key) + 1);
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  s = fd < 0 ? open_errno(file, errno) : map_file(file, fd, m);
  if (fd >= 0) close(fd); /* the mapping outlives the descriptor */
  free(file);
  if (s != AOTRUN_OK) {
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
  aotrun_log_stderr(d->log_threshold, level, message);
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
  if (d == NULL || (d->path = strdup(path)) == NULL) {
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
  free(d);
}

const aotrun_host_api *aotrun_program_dir_host_api(
    const aotrun_program_dir *d) {
  return &d->api;
}

const char *aotrun_program_dir_path(const aotrun_program_dir *d) {
  return d->path;
}

void aotrun_program_dir_set_log_level(aotrun_program_dir *d,
                                      int32_t threshold) {
  d->log_threshold = threshold;
}

size_t aotrun_program_dir_num_mapped(const aotrun_program_dir *d) {
  size_t n = 0;
  aotrun_program_dir *w = (aotrun_program_dir *)d; /* lock is not const */
  pthread_mutex_lock(&w->lock);
  for (const mapping *m = d->mappings; m != NULL; m = m->next) n++;
  pthread_mutex_unlock(&w->lock);
  return n;
}
