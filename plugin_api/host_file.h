/*
 * host_file.h: opening files the host reads or writes, safely (private to
 * plugin_api; see docs/plugin-abi.md, "Files and trust").
 *
 * Reading: open(O_RDONLY | O_NONBLOCK | O_CLOEXEC) so a FIFO or a device
 * never blocks the open, then fstat and require a regular file of at most
 * `max_bytes` before reading anything.
 * Writing: open(O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK) so a
 * symbolic link at the destination is refused (ELOOP), never followed, and
 * require a regular file.
 * Every error names the file and is recorded with aotrun_host_fail.
 */
#ifndef AOTRUN_HOST_FILE_H
#define AOTRUN_HOST_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "plugin_api/aotrun_plugin.h"

/* Opens `path` for reading and checks it is a regular file of at most
 * max_bytes (`what` names it in messages, e.g. "input 0"). With nofollow
 * set, a symbolic link as the last component is refused. On success *fd is
 * open (O_CLOEXEC, blocking again) and *st describes it. */
aotrun_status aotrun_host_file_open_read(const char *path, const char *what,
                                         int nofollow, size_t max_bytes,
                                         int *fd, struct stat *st);

/* Reads all of a regular file of at most max_bytes into a malloc'd buffer
 * (*data; never NULL on success, even for 0 bytes). */
aotrun_status aotrun_host_file_read(const char *path, const char *what,
                                    size_t max_bytes, void **data,
                                    size_t *size);

/* Records "cannot open <what> <path>: <strerror(err)>" (NOT_FOUND for
 * ENOENT, else ACCESS_FAILED) and returns the status. */
aotrun_status aotrun_host_file_open_failed(const char *what,
                                           const char *path, int err);

/* Creates or truncates `path` for writing without following a symbolic
 * link there; *out is a stdio stream ("wb"). */
aotrun_status aotrun_host_file_create(const char *path, FILE **out);

#endif /* AOTRUN_HOST_FILE_H */
