/*
 * temp_file.c: see temp_file.h.
 */
#include "aot_loader/temp_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aot_loader/fault_point.h"

/* $TMPDIR when set and non-empty, else /tmp (what mkstemp users expect). */
const char *aotrun_temp_dir(void) {
  const char *dir = getenv("TMPDIR");
  return (dir != NULL && dir[0] != '\0') ? dir : "/tmp";
}

int aotrun_write_all(int fd, const void *bytes, size_t size) {
  const unsigned char *buf = bytes;
  while (size > 0) {
    /* Linux writes at most ~2 GiB per call; ask for 1 GiB at a time. */
    size_t chunk = size < ((size_t)1 << 30) ? size : ((size_t)1 << 30);
    ssize_t n = write(fd, buf, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO; /* no progress: don't spin */
    buf += n;
    size -= (size_t)n;
  }
  return 0;
}

static char *make_template(const char *dir, const char *stem,
                           const char *suffix) {
  size_t dlen = strlen(dir);
  while (dlen > 1 && dir[dlen - 1] == '/') dlen--; /* "dir/" -> "dir" */
  size_t len = dlen + 1 + strlen(stem) + 6 + strlen(suffix) + 1;
  char *path = malloc(len);
  if (path == NULL) return NULL;
  snprintf(path, len, "%.*s/%sXXXXXX%s", (int)dlen, dir, stem, suffix);
  return path;
}

aotrun_status aotrun_temp_file_create(const void *bytes, size_t size,
                                      const char *stem, const char *suffix,
                                      char **path_out, aotrun_error *err) {
  if (path_out == NULL || (bytes == NULL && size > 0) || stem == NULL ||
      suffix == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "temp file: NULL argument");
  *path_out = NULL;
  const char *dir = aotrun_temp_dir();
  char *path = make_template(dir, stem, suffix);
  if (path == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "temp file: out of memory for a path in %s", dir);
  /* mkostemps: O_CREAT|O_EXCL, mode 0600; O_CLOEXEC so a fork+exec elsewhere
   * in the host does not inherit the descriptor. */
  int fault = aotrun_fault_point("temp_file.create");
  int fd = fault ? -1 : mkostemps(path, (int)strlen(suffix), O_CLOEXEC);
  if (fd < 0) {
    int e = fault ? fault : errno;
    aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                     "cannot create a temp file in %s: %s", dir, strerror(e));
    free(path);
    return AOTRUN_ERR_ACCESS_FAILED;
  }
  int e = aotrun_fault_point("temp_file.write");
  if (e == 0) e = aotrun_write_all(fd, bytes, size);
  /* close() can report a delayed write error (NFS, quota): check it too. */
  if (close(fd) != 0 && e == 0) e = errno;
  if (e == 0) e = aotrun_fault_point("temp_file.close");
  if (e != 0) {
    aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                     "cannot write %zu bytes to temp file %s: %s", size, path,
                     strerror(e));
    aotrun_temp_file_remove(path);
    return AOTRUN_ERR_ACCESS_FAILED;
  }
  *path_out = path;
  return AOTRUN_OK;
}

void aotrun_temp_file_remove(char *path) {
  if (path == NULL) return;
  unlink(path); /* nothing useful to do if it is already gone */
  free(path);
}
