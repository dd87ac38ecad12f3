/*
 * fake_cudnn.h: the control side of libfake_cudnn.so (fake_cudnn.c), a
 * stand-in for libcudnn.so.9 that CPU tests load through
 * aotrun_fb_cudnn_set_library. Its backend (graph) API records every
 * descriptor and attribute and answers heuristics, engine and plan queries
 * from the configuration below; its legacy API functions only exist (they
 * return CUDNN_STATUS_NOT_SUPPORTED). The test reaches this struct with
 * dlsym(handle, "fake_cudnn_control_get").
 */
#ifndef AOTRUN_TESTING_FAKE_CUDNN_H
#define AOTRUN_TESTING_FAKE_CUDNN_H

#include <stdint.h>

#define FAKE_MAX_ATTRS 16
#define FAKE_ATTR_BYTES 64
#define FAKE_MAX_ENGINES 64
#define FAKE_MAX_CONFIGS 16

typedef struct fake_attr {
  int name; /* cudnnBackendAttributeName_t */
  int type; /* cudnnBackendAttributeType_t */
  int64_t count;
  unsigned char data[FAKE_ATTR_BYTES];
} fake_attr;

typedef struct fake_desc {
  int type; /* cudnnBackendDescriptorType_t */
  int finalized, destroyed;
  int64_t engine; /* engine configs and engines: the global index */
  int nattrs;
  fake_attr attrs[FAKE_MAX_ATTRS];
} fake_desc;

typedef struct fake_heur_source {
  int count;                          /* configs returned */
  int64_t engines[FAKE_MAX_CONFIGS];  /* their engines' global indexes */
} fake_heur_source;

typedef struct fake_cudnn_control {
  /* ---- configuration (zeroed by reset) ---- */
  fake_heur_source mode_a, fallback;       /* conv-only graphs */
  fake_heur_source fused_a, fused_fallback; /* graphs with a pointwise op */
  int notes[FAKE_MAX_ENGINES];           /* bit n: numerical note n */
  int fail_finalize[FAKE_MAX_ENGINES];   /* the plan of this engine fails */
  int64_t workspace[FAKE_MAX_ENGINES];   /* bytes of the plan */
  int fail_set_stream;                   /* cudnnSetStream: BAD_PARAM */
  /* ---- recorded ---- */
  int creates, destroys, finalizes, executes, heuristic_queries;
  int set_streams;   /* cudnnSetStream calls */
  void *last_stream; /* and the stream of the last one */
  int bad_calls; /* calls the real cuDNN would refuse (see fake_cudnn.c) */
  int ndescs;
  fake_desc **descs; /* every descriptor ever created, in order */
  /* The last variant pack executed. */
  int64_t last_plan_engine;
  int64_t last_count;
  int64_t last_uids[8];
  void *last_ptrs[8];
  void *last_workspace;
} fake_cudnn_control;

typedef fake_cudnn_control *(*fake_cudnn_control_fn)(void);
/* Frees every descriptor (destroyed or not) and zeroes the struct. */
typedef void (*fake_cudnn_reset_fn)(void);

#endif /* AOTRUN_TESTING_FAKE_CUDNN_H */
