/*
 * query_error.h: the last failure of a const query (get_num_io,
 * get_io_info) on this thread, kept apart from the method handle.
 *
 * The queries take `const aotrun_method *`: several threads may query one
 * handle at once, so none may write into it (docs/plugin-abi.md, "Failure
 * rules"). A failure is kept per thread with the serial of the handle it
 * came from; last_error(m) on that thread returns it until the next
 * non-const call on m forgets it. Serials tell apart handles that reuse a
 * freed handle's address. Each plugin linking this library has its own
 * copy of the state (it is per plugin, per thread).
 */
#ifndef AOTRUN_QUERY_ERROR_H
#define AOTRUN_QUERY_ERROR_H

#include <stdint.h>

#include "aot_loader/aotrun_error.h"

/* A new handle's serial: never 0, never given twice in the process. */
uint64_t aotrun_query_serial_next(void);

/* Keeps *e for `serial` on this thread when st is not AOTRUN_OK (a kept
 * failure of another handle is replaced). Returns st, so a query can end
 * with `return aotrun_query_error_keep(m->serial, st, &e);`. */
aotrun_status aotrun_query_error_keep(uint64_t serial, aotrun_status st,
                                      const aotrun_error *e);

/* Drops this thread's kept failure if it came from `serial`. */
void aotrun_query_error_forget(uint64_t serial);

/* This thread's kept message for `serial`, or NULL when none is kept. */
const char *aotrun_query_error_message(uint64_t serial);

#endif /* AOTRUN_QUERY_ERROR_H */
