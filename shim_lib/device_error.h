/*
 * device_error.h: bad data found by a kernel (an index out of range), reported
 * without a host synchronisation.
 *
 * Each CUDA device has one report slot in mapped, page-locked host memory.
 * A fallback op passes the slot's device address to its kernel; the first
 * kernel thread that finds bad data claims the slot (atomicCAS on `code`)
 * and fills it in. Nothing waits: the host reads the slot after its next
 * synchronisation (the CUDA backend does after every call, tests call
 * aotrun_shim_take_device_error) and turns it into an error message. The
 * slot works inside captured CUDA graphs too: replays write the same slot.
 *
 * Layout shared with .cu kernels: keep it plain C with fixed-width fields.
 */
#ifndef AOTRUN_SHIM_DEVICE_ERROR_H
#define AOTRUN_SHIM_DEVICE_ERROR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aotrun_device_error {
  int32_t code;  /* 0: no report; otherwise AOTRUN_DEVERR_* */
  int32_t dim;   /* the dim of the indexed tensor */
  int64_t value; /* the offending index as given (or the True count) */
  int64_t bound; /* the size of that dim */
  uint64_t op;   /* address of the op's static name ("aoti_torch_...") */
  uint64_t arg;  /* address of the static argument name ("index") */
} aotrun_device_error;

enum {
  AOTRUN_DEVERR_NONE = 0,
  AOTRUN_DEVERR_INDEX_OUT_OF_RANGE = 1,
  /* A mask selects `value` elements where '<arg>' provides `bound` (in its
   * dim `dim`): masked_scatter's source or a masked index_put's values. */
  AOTRUN_DEVERR_COUNT_MISMATCH = 2,
  /* A probability outside [0, 1] (or NaN) in '<arg>' (bernoulli_ with a p
   * tensor): `value` holds the double's bits, `bound` the flat index of the
   * element of self it was drawn for. */
  AOTRUN_DEVERR_PROBABILITY = 3,
};

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_DEVICE_ERROR_H */
