/* query_error.c: see query_error.h. */
#include "aot_loader/query_error.h"

#include <stdatomic.h>

static _Thread_local struct {
  uint64_t serial; /* 0: none kept */
  aotrun_error err;
} tls_query;

uint64_t aotrun_query_serial_next(void) {
  static _Atomic uint64_t counter;
  return atomic_fetch_add(&counter, 1) + 1;
}

aotrun_status aotrun_query_error_keep(uint64_t serial, aotrun_status st,
                                      const aotrun_error *e) {
  if (st != AOTRUN_OK && serial != 0 && e != NULL) {
    tls_query.serial = serial;
    tls_query.err = *e;
  }
  return st;
}

void aotrun_query_error_forget(uint64_t serial) {
  if (serial != 0 && tls_query.serial == serial) tls_query.serial = 0;
}

const char *aotrun_query_error_message(uint64_t serial) {
  if (serial == 0 || tls_query.serial != serial) return NULL;
  return tls_query.err.message;
}
