/* host_file.c: see host_file.h. */
#include "plugin_api/host_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_api/host_error.h"

static aotrun_status open_failed(const char *what, const char *path,
                                 int err, int nofollow) {
  if (err == ELOOP && nofollow)
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED,
                            "%s %s is a symbolic link: refused (see "
                            "\"Files and trust\" in docs/plugin-abi.md)",
                            what, path);
  return aotrun_host_fail(
      err == ENOENT ? AOTRUN_ERR_NOT_FOUND : AOTRUN_ERR_ACCESS_FAILED,
      "cannot open %s %s: %s", what, path, strerror(err));
}

aotrun_status aotrun_host_file_open_failed(const char *what,
                                           const char *path, int err) {
  return open_failed(what, path, err, 0);
}

static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

aotrun_status aotrun_host_file_open_read(const char *path, const char *what,
                                         int nofollow, size_t max_bytes,
                                         int *fd, struct stat *st) {
  *fd = -1;
  if (path == NULL || path[0] == '\0')
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s: the path is empty", what);
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
  int f = open(path, flags);
  if (f < 0) return open_failed(what, path, errno, nofollow);
  if (fstat(f, st) != 0) {
    int e = errno;
    close(f);
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "cannot stat %s %s: %s",
                            what, path, strerror(e));
  }
  aotrun_status s = AOTRUN_OK;
  if (!S_ISREG(st->st_mode))
    s = aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                         "%s %s is not a regular file (%s)", what, path,
                         kind_of(st->st_mode));
  else if ((unsigned long long)st->st_size > (unsigned long long)max_bytes)
    s = aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                         "%s %s is %lld bytes, larger than the limit of %zu "
                         "bytes",
                         what, path, (long long)st->st_size, max_bytes);
  else if (fcntl(f, F_SETFL, O_RDONLY) != 0) /* blocking reads again */
    s = aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "cannot use %s %s: %s",
                         what, path, strerror(errno));
  if (s != AOTRUN_OK) {
    close(f);
    return s;
  }
  *fd = f;
  return AOTRUN_OK;
}

/* Reads exactly size bytes (the file may not grow past its fstat size). */
static aotrun_status read_exact(const char *path, const char *what, int fd,
                                unsigned char *buf, size_t size) {
  size_t n = 0;
  while (n < size) {
    ssize_t got = read(fd, buf + n, size - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED,
                              "error reading %s %s: %s", what, path,
                              strerror(errno));
    if (got == 0)
      return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED,
                              "%s %s shrank while being read (%zu of %zu "
                              "bytes)",
                              what, path, n, size);
    n += (size_t)got;
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_host_file_read(const char *path, const char *what,
                                    size_t max_bytes, void **data,
                                    size_t *size) {
  *data = NULL;
  *size = 0;
  int fd;
  struct stat st;
  aotrun_status s =
      aotrun_host_file_open_read(path, what, 0, max_bytes, &fd, &st);
  if (s != AOTRUN_OK) return s;
  size_t n = (size_t)st.st_size;
  unsigned char *buf = malloc(n ? n : 1);
  if (buf == NULL)
    s = aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                         "out of memory reading %zu bytes of %s %s", n, what,
                         path);
  else
    s = read_exact(path, what, fd, buf, n);
  close(fd);
  if (s != AOTRUN_OK) {
    free(buf);
    return s;
  }
  *data = buf;
  *size = n;
  return AOTRUN_OK;
}

aotrun_status aotrun_host_file_create(const char *path, FILE **out) {
  *out = NULL;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK |
                          O_CLOEXEC,
                0666);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP)
      return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED,
                              "cannot create %s: it is a symbolic link, "
                              "refused (aotrun never writes through links)",
                              path);
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "cannot create %s: %s",
                            path, strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED,
                            "cannot create %s: not a regular file", path);
  }
  FILE *f = fcntl(fd, F_SETFL, O_WRONLY) == 0 ? fdopen(fd, "wb") : NULL;
  if (f == NULL) {
    int e = errno;
    close(fd);
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "cannot create %s: %s",
                            path, strerror(e));
  }
  *out = f;
  return AOTRUN_OK;
}
