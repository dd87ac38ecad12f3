/* done_wait.c: see done_wait.h. */
#include "backend_cuda/done_wait.h"

#include <stddef.h>

int aotrun_done_reached(uint32_t counter, uint32_t want) {
  return (int32_t)(counter - want) >= 0;
}

static aotrun_done_wait_result spin(const volatile uint32_t *counter,
                                    uint32_t want, uint32_t spins_per_query,
                                    aotrun_stream_query_fn query, void *ctx,
                                    uint32_t *asked) {
  for (;;) {
    for (uint32_t i = 0; i < spins_per_query; i++)
      if (aotrun_done_reached(*counter, want)) return AOTRUN_DONE_SEEN;
    (*asked)++;
    aotrun_stream_query q = query(ctx);
    /* Read again: the counter may have arrived as the stream ended. */
    if (aotrun_done_reached(*counter, want)) return AOTRUN_DONE_SEEN;
    if (q == AOTRUN_STREAM_FAILED) return AOTRUN_DONE_FAILED;
    if (q == AOTRUN_STREAM_IDLE) return AOTRUN_DONE_MISSING;
  }
}

aotrun_done_wait_result aotrun_done_wait(const volatile uint32_t *counter,
                                         uint32_t want,
                                         uint32_t spins_per_query,
                                         aotrun_stream_query_fn query,
                                         void *ctx, uint32_t *queries) {
  uint32_t asked = 0;
  aotrun_done_wait_result r =
      spin(counter, want, spins_per_query ? spins_per_query : 1, query, ctx,
           &asked);
  if (queries != NULL) *queries = asked;
  return r;
}
