/*
 * library_image.h: where the bytes of a model library live while dlopen
 * maps them (docs/loading.md, "From memory").
 *
 * In order of preference:
 *   memfd          memfd_create(MFD_CLOEXEC | MFD_ALLOW_SEALING [| MFD_EXEC])
 *                  in RAM, sealed against writes, opened through
 *                  /proc/self/fd/N. Never on disk.
 *   unnamed file   open($TMPDIR, O_TMPFILE, 0600): a file without a name in
 *                  the temp directory, opened through /proc/self/fd/N. The
 *                  kernel frees it when the descriptor closes, so a killed
 *                  process leaves nothing.
 *   temp file      mkostemps under $TMPDIR (0600, O_EXCL, unpredictable
 *                  name), unlinked right after dlopen. Killed between the
 *                  write and the dlopen, a process leaves this one file.
 * The first two are skipped where the kernel refuses them (no memfd_create,
 * a seccomp filter, a file system without O_TMPFILE) or /proc is missing;
 * on_disk skips memfd (the loader option library_temp_file).
 *
 * The descriptor of the first two stays open while the library is loaded:
 * glibc looks up an already loaded object by its name before it opens the
 * file, so a reused /proc/self/fd/N name would return another library.
 */
#ifndef AOTRUN_LIBRARY_IMAGE_H
#define AOTRUN_LIBRARY_IMAGE_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"

typedef enum aotrun_image_kind {
  AOTRUN_IMAGE_MEMFD = 0,
  AOTRUN_IMAGE_UNNAMED_FILE = 1,
  AOTRUN_IMAGE_TEMP_FILE = 2,
} aotrun_image_kind;

#define AOTRUN_IMAGE_NOTE_SIZE 256

typedef struct aotrun_library_image {
  aotrun_image_kind kind;
  int fd;     /* memfd or O_TMPFILE descriptor; -1 for a named temp file */
  char *path; /* what dlopen gets: "/proc/self/fd/N" or the temp file */
  int unlinked;
  /* Why the preferred kinds were not used ("" when memfd was): for the
   * load report and logs. */
  char note[AOTRUN_IMAGE_NOTE_SIZE];
} aotrun_library_image;

/* Writes bytes[0..size) into a new image (see above). on_disk: skip memfd.
 * On failure nothing is left (no file, no descriptor) and *img is reset. */
aotrun_status aotrun_library_image_create(const void *bytes, size_t size,
                                          int on_disk,
                                          aotrun_library_image *img,
                                          aotrun_error *err);

/* After dlopen (whether it worked or not): unlinks a named temp file. The
 * descriptor of the other kinds stays open. */
void aotrun_library_image_mapped(aotrun_library_image *img);

/* Closes the descriptor, removes a named file that is still there, frees
 * the path. Safe on a reset or released image. */
void aotrun_library_image_release(aotrun_library_image *img);

/* "memfd", "unnamed temp file" or "temp file". */
const char *aotrun_library_image_kind_name(aotrun_image_kind kind);

/* Test seam: refuse the image kinds in `kinds` (a mask of 1 << kind; the
 * named temp file cannot be refused) in every later create, as if the
 * kernel had refused them, until called again with 0. For tests only. */
void aotrun_library_image_test_refuse(unsigned kinds);

#endif /* AOTRUN_LIBRARY_IMAGE_H */
