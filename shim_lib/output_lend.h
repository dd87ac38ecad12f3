/*
 * output_lend.h: the allocation numbering and lending behind
 * aotrun_shim_lend_begin (aotrun_shim.h), for tensor_create.c.
 */
#ifndef AOTRUN_SHIM_OUTPUT_LEND_H
#define AOTRUN_SHIM_OUTPUT_LEND_H

#include <stdint.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/storage.h"

/* One allocation's number and, where an entry matches it, the lent
 * buffer. counted is 0 outside a session. */
typedef struct aotrun_lend_ticket {
  int counted;
  uint64_t session;
  int64_t seq;
  void *data;    /* the lent buffer, or NULL: allocate as usual */
  int64_t *live; /* the lender's count */
} aotrun_lend_ticket;

/* Numbers the next allocation of this thread's session and looks for its
 * entry; the request is already checked (bytes: its byte size). */
void aotrun_lend_next(int32_t dtype, int32_t device_type, int32_t device_index,
                      int64_t ndim, const int64_t *sizes,
                      const int64_t *strides, int pinned, size_t bytes,
                      aotrun_lend_ticket *t);

/* Marks storage s as made by ticket t's allocation. */
void aotrun_lend_stamp(aotrun_storage *s, const aotrun_lend_ticket *t);

#endif /* AOTRUN_SHIM_OUTPUT_LEND_H */
