/*
 * library_image.c: see library_image.h.
 */
#include "aot_loader/library_image.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aot_loader/fault_point.h"
#include "aot_loader/temp_file.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: executable memfd (memfd_noexec) */
#endif

static atomic_uint g_refused;

void aotrun_library_image_test_refuse(unsigned kinds) {
  atomic_store(&g_refused, kinds);
}

static int refused(aotrun_image_kind kind) {
  return (atomic_load(&g_refused) & (1u << kind)) != 0;
}

const char *aotrun_library_image_kind_name(aotrun_image_kind kind) {
  switch (kind) {
    case AOTRUN_IMAGE_MEMFD: return "memfd";
    case AOTRUN_IMAGE_UNNAMED_FILE: return "unnamed temp file";
    default: return "temp file";
  }
}

static void reset(aotrun_library_image *img) {
  memset(img, 0, sizeof *img);
  img->fd = -1;
}

/* Appends "<kind>: <why>" to the note (why the kind was not used). */
static void note(aotrun_library_image *img, aotrun_image_kind kind,
                 const char *why) {
  size_t used = strlen(img->note);
  snprintf(img->note + used, sizeof img->note - used, "%s%s: %s",
           used ? "; " : "", aotrun_library_image_kind_name(kind), why);
}

static int names_match(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  return info->dlpi_name != NULL && strcmp(info->dlpi_name, data) == 0;
}

/* Whether a loaded object carries the name `path`. ld.so finds loaded
 * libraries by name before anything else: a library that stayed loaded
 * after dlclose (C++ unique symbols, -z nodelete) keeps the name
 * /proc/self/fd/N after its descriptor was closed, and dlopen of a new
 * image under a reused N would return that old library. */
static int name_taken(const char *path) {
  return dl_iterate_phdr(names_match, (void *)path) != 0;
}

/* Moves *fd to the lowest descriptor number above it whose /proc name no
 * loaded object carries; 0, or -1 with the reason in the note. */
static int unique_fd_name(aotrun_library_image *img, aotrun_image_kind kind,
                          int *fd, char *buf, size_t size) {
  for (int tries = 0; tries < 4096; tries++) {
    snprintf(buf, size, "/proc/self/fd/%d", *fd);
    if (!name_taken(buf)) return 0;
    int moved = fcntl(*fd, F_DUPFD_CLOEXEC, *fd + 1);
    if (moved < 0) {
      note(img, kind, "no descriptor with an unused /proc name");
      return -1;
    }
    close(*fd);
    *fd = moved;
  }
  note(img, kind, "no descriptor with an unused /proc name");
  return -1;
}

/* "/proc/self/fd/N" for *fd (moved to an N no loaded library is named
 * after), when /proc shows it; else NULL (note says). */
static char *proc_path(aotrun_library_image *img, aotrun_image_kind kind,
                       int *fd) {
  char buf[64];
  if (unique_fd_name(img, kind, fd, buf, sizeof buf) != 0) return NULL;
  if (access(buf, R_OK) != 0) {
    note(img, kind, "/proc/self/fd is not readable");
    return NULL;
  }
  char *path = strdup(buf);
  if (path == NULL) note(img, kind, "out of memory");
  return path;
}

/* Writes the bytes to fd and names it through /proc; 0 on success, else
 * closes fd and returns -1 with the reason in the note. */
static int fill_fd(aotrun_library_image *img, aotrun_image_kind kind, int fd,
                   const void *bytes, size_t size) {
  int e = aotrun_fault_point("library_image.write");
  if (e == 0) e = aotrun_write_all(fd, bytes, size);
  if (e != 0) {
    char why[128];
    snprintf(why, sizeof why, "writing %zu bytes failed: %s", size,
             strerror(e));
    note(img, kind, why);
    close(fd);
    return -1;
  }
  char *path = proc_path(img, kind, &fd);
  if (path == NULL) {
    close(fd);
    return -1;
  }
  img->kind = kind;
  img->fd = fd;
  img->path = path;
  return 0;
}

static int memfd_open(aotrun_library_image *img) {
  if (refused(AOTRUN_IMAGE_MEMFD)) {
    note(img, AOTRUN_IMAGE_MEMFD, "refused (test seam)");
    return -1;
  }
  const char *name = "aotrun-model";
  unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  /* With vm.memfd_noexec=1 a memfd is not executable unless it asks;
   * kernels before 6.3 refuse the unknown flag (EINVAL): ask without. */
  int fault = aotrun_fault_point("library_image.memfd");
  if (fault) {
    note(img, AOTRUN_IMAGE_MEMFD, strerror(fault));
    return -1;
  }
  int fd = memfd_create(name, flags | MFD_EXEC);
  if (fd < 0 && errno == EINVAL) fd = memfd_create(name, flags);
  if (fd < 0) note(img, AOTRUN_IMAGE_MEMFD, strerror(errno));
  return fd;
}

/* Seals the bytes: nobody (not even this process) can change or resize
 * them while they are mapped. Best effort: a kernel without seals still
 * gives a private copy nobody else can open. */
static void seal(int fd) {
  (void)fcntl(fd, F_ADD_SEALS,
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
}

static int try_memfd(aotrun_library_image *img, const void *bytes,
                     size_t size) {
  int fd = memfd_open(img);
  if (fd < 0) return -1;
  if (fill_fd(img, AOTRUN_IMAGE_MEMFD, fd, bytes, size) != 0) return -1;
  seal(fd);
  return 0;
}

static int try_unnamed(aotrun_library_image *img, const void *bytes,
                       size_t size) {
  if (refused(AOTRUN_IMAGE_UNNAMED_FILE)) {
    note(img, AOTRUN_IMAGE_UNNAMED_FILE, "refused (test seam)");
    return -1;
  }
  int fault = aotrun_fault_point("library_image.tmpfile");
  int fd = fault ? -1
                 : open(aotrun_temp_dir(), O_TMPFILE | O_RDWR | O_CLOEXEC,
                        0600);
  if (fd < 0) {
    char why[300];
    snprintf(why, sizeof why, "O_TMPFILE in %s: %s", aotrun_temp_dir(),
             strerror(fault ? fault : errno));
    note(img, AOTRUN_IMAGE_UNNAMED_FILE, why);
    return -1;
  }
  return fill_fd(img, AOTRUN_IMAGE_UNNAMED_FILE, fd, bytes, size);
}

aotrun_status aotrun_library_image_create(const void *bytes, size_t size,
                                          int on_disk,
                                          aotrun_library_image *img,
                                          aotrun_error *err) {
  reset(img);
  if (on_disk)
    note(img, AOTRUN_IMAGE_MEMFD, "not used (library_temp_file)");
  else if (try_memfd(img, bytes, size) == 0)
    return AOTRUN_OK;
  if (try_unnamed(img, bytes, size) == 0) return AOTRUN_OK;
  char saved[AOTRUN_IMAGE_NOTE_SIZE];
  memcpy(saved, img->note, sizeof saved);
  aotrun_status st = aotrun_temp_file_create(bytes, size, "aotrun-model-",
                                             ".so", &img->path, err);
  memcpy(img->note, saved, sizeof saved);
  if (st != AOTRUN_OK) {
    aotrun_error_prefix(err, "model library (%s): ", img->note);
    reset(img);
    return st;
  }
  img->kind = AOTRUN_IMAGE_TEMP_FILE;
  return AOTRUN_OK;
}

void aotrun_library_image_mapped(aotrun_library_image *img) {
  if (img->kind != AOTRUN_IMAGE_TEMP_FILE || img->path == NULL ||
      img->unlinked)
    return;
  if (unlink(img->path) == 0) img->unlinked = 1;
}

void aotrun_library_image_release(aotrun_library_image *img) {
  if (img == NULL) return;
  if (img->fd >= 0) close(img->fd);
  if (img->kind == AOTRUN_IMAGE_TEMP_FILE && !img->unlinked)
    aotrun_temp_file_remove(img->path);
  else
    free(img->path);
  reset(img);
}
