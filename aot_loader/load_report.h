/*
 * load_report.h: what one method's load took: time per phase and the
 * memory it keeps (docs/loading.md, "Load report"). Filled by the model
 * library loader and the method runner; hosts read it as JSON through the
 * read-only method option `load_report`.
 */
#ifndef AOTRUN_LOAD_REPORT_H
#define AOTRUN_LOAD_REPORT_H

#include <stddef.h>
#include <stdint.h>

typedef enum aotrun_load_phase {
  AOTRUN_LOAD_LIBRARY_WRITE = 0, /* bytes into a memfd or temp file */
  AOTRUN_LOAD_DLOPEN,            /* dlopen: mapping, relocation, ctors */
  AOTRUN_LOAD_CONTAINER,         /* ...ContainerCreateWithDevice */
  AOTRUN_LOAD_WEIGHT_READ,       /* weights file fetched and parsed */
  AOTRUN_LOAD_WEIGHT_UPLOAD,     /* checks, copies, hand-over to the model */
  AOTRUN_LOAD_FIRST_RUN,         /* a run at load (none today: -1) */
  AOTRUN_LOAD_PHASE_COUNT
} aotrun_load_phase;

#define AOTRUN_LOAD_TEXT_SIZE 256

typedef struct aotrun_load_report {
  char method[AOTRUN_LOAD_TEXT_SIZE];
  char library[AOTRUN_LOAD_TEXT_SIZE]; /* named-data key ("forward.so") */
  char device[32];
  char image[32];                      /* library_image kind, or "shared" */
  char image_note[AOTRUN_LOAD_TEXT_SIZE]; /* why not memfd ("" if it was) */
  char kernels[AOTRUN_LOAD_TEXT_SIZE];    /* "sm_90, compute_90 (PTX)" */
  char weights_path[16]; /* "user_managed", "blob" or "none" */
  int64_t phase_ns[AOTRUN_LOAD_PHASE_COUNT]; /* -1: did not happen */
  int64_t total_ns;
  uint64_t library_bytes;
  uint64_t weights_file_bytes;
  uint64_t host_bytes;   /* host memory kept: library image + host copies */
  uint64_t device_bytes; /* device memory allocated for the weights */
  uint64_t shared_bytes; /* constant bytes reused from the weight cache */
  uint64_t device_free_bytes; /* free before the upload; 0: not asked */
  uint32_t gpu_arch;          /* 90 for sm_90; 0: not a GPU */
  int driver_version;         /* 12080 for CUDA 12.8; 0: not asked */
  uint64_t shim_imports;      /* distinct aoti_torch_* names imported */
  /* Import slots the dynamic loader had bound to another object (e.g.
   * libtorch's aoti_torch_*) and aotrun re-pointed to its shim. */
  uint64_t shim_rebound;
} aotrun_load_report;

/* Every phase -1, every count 0, strings "". */
void aotrun_load_report_init(aotrun_load_report *r);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t aotrun_load_clock_ns(void);

/* Adds the time since `start` to a phase (a phase at -1 starts at 0). */
void aotrun_load_report_add(aotrun_load_report *r, aotrun_load_phase phase,
                            int64_t start);

/* The phase's JSON key ("library_write_ns", ...). */
const char *aotrun_load_phase_key(aotrun_load_phase phase);

/* One JSON object, malloc'd (free it), or NULL when out of memory. */
char *aotrun_load_report_json(const aotrun_load_report *r);

/* Copies a string into a fixed field (truncated; NULL gives ""). */
void aotrun_load_report_text(char *field, size_t size, const char *text);

#endif /* AOTRUN_LOAD_REPORT_H */
