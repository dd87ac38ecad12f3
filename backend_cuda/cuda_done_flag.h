/*
 * cuda_done_flag.h: option cuda_graph_done_flag for one method: the
 * counter a graph's last node bumps (done_flag_kernel.h), the node added
 * at capture, and the call's wait on it (done_wait.h) in place of
 * cudaStreamSynchronize.
 *
 * The wait is used only where the graph's launch is the last thing the
 * call queued (its output copies are nodes of the graph): the state arms
 * the flag at such a launch; any copy the runner queues afterwards, and
 * the start of every call, disarms it, so a synchronisation with anything
 * else on the stream is always cudaStreamSynchronize.
 */
#ifndef AOTRUN_CUDA_DONE_FLAG_H
#define AOTRUN_CUDA_DONE_FLAG_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"

typedef struct aotrun_cuda_done_flag {
  volatile uint32_t *host; /* mapped pinned host memory the node writes */
  uint32_t *host_on_device; /* the same, as the device addresses it */
  uint32_t *count;          /* device memory: the node's own count */
  uint32_t launched;        /* launches of graphs with the node */
  int armed;                /* the last launch is awaited by the counter */
  int failed;               /* the memory could not be made: not tried again */
  uint64_t waits;           /* waits ended by the counter (for tests) */
} aotrun_cuda_done_flag;

/* All zero: nothing allocated until the first node. */
void aotrun_cuda_done_flag_init(aotrun_cuda_done_flag *f);
/* Frees the counter's memory (the graphs that write it are gone first). */
void aotrun_cuda_done_flag_destroy(aotrun_cuda_done_flag *f);

/* Adds the bumping kernel to graph (a cudaGraph_t) after leaves (its
 * cudaGraphNode_t leaves: every node the graph has ends before it).
 * *added = 0 without an error where the counter's memory cannot be made
 * (why in err's message, for the log; not tried again); the capture goes
 * on without the node. */
aotrun_status aotrun_cuda_done_flag_add_node(aotrun_cuda_done_flag *f,
                                             void *graph, void *const *leaves,
                                             size_t num_leaves, int *added,
                                             aotrun_error *err);

/* A graph with the node was launched; awaitable: nothing else will be
 * queued before the call's synchronisation. */
void aotrun_cuda_done_flag_launched(aotrun_cuda_done_flag *f, int awaitable);
void aotrun_cuda_done_flag_disarm(aotrun_cuda_done_flag *f);

/* The call's synchronisation: the counter when armed, else (and after a
 * stream error, to report it) cudaStreamSynchronize. Disarms. */
aotrun_status aotrun_cuda_done_flag_sync(aotrun_cuda_done_flag *f,
                                         void *stream, aotrun_error *err);

#endif /* AOTRUN_CUDA_DONE_FLAG_H */
