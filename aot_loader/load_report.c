/* load_report.c: see load_report.h. */
#include "aot_loader/load_report.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

static const char *const kPhaseKeys[AOTRUN_LOAD_PHASE_COUNT] = {
    "library_write_ns", "dlopen_ns",        "container_ns",
    "weight_read_ns",   "weight_upload_ns", "first_run_ns",
};

void aotrun_load_report_init(aotrun_load_report *r) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < AOTRUN_LOAD_PHASE_COUNT; i++) r->phase_ns[i] = -1;
  r->total_ns = -1;
}

int64_t aotrun_load_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void aotrun_load_report_add(aotrun_load_report *r, aotrun_load_phase phase,
                            int64_t start) {
  if (r == NULL || phase >= AOTRUN_LOAD_PHASE_COUNT) return;
  int64_t d = aotrun_load_clock_ns() - start;
  if (r->phase_ns[phase] < 0) r->phase_ns[phase] = 0;
  r->phase_ns[phase] += d > 0 ? d : 0;
}

const char *aotrun_load_phase_key(aotrun_load_phase phase) {
  return phase < AOTRUN_LOAD_PHASE_COUNT ? kPhaseKeys[phase] : "?";
}

void aotrun_load_report_text(char *field, size_t size, const char *text) {
  snprintf(field, size, "%s", text != NULL ? text : "");
}

/* A phase that did not happen is null. */
static int add_phases(cJSON *o, const aotrun_load_report *r) {
  for (int i = 0; i < AOTRUN_LOAD_PHASE_COUNT; i++) {
    cJSON *v = r->phase_ns[i] < 0 ? cJSON_CreateNull()
                                  : cJSON_CreateNumber((double)r->phase_ns[i]);
    if (v == NULL) return 0;
    cJSON_AddItemToObject(o, kPhaseKeys[i], v);
  }
  return cJSON_AddNumberToObject(o, "total_ns", (double)r->total_ns) != NULL;
}

static int add_strings(cJSON *o, const aotrun_load_report *r) {
  return cJSON_AddStringToObject(o, "method", r->method) &&
         cJSON_AddStringToObject(o, "library", r->library) &&
         cJSON_AddStringToObject(o, "device", r->device) &&
         cJSON_AddStringToObject(o, "library_image", r->image) &&
         cJSON_AddStringToObject(o, "library_image_note", r->image_note) &&
         cJSON_AddStringToObject(o, "kernels", r->kernels) &&
         cJSON_AddStringToObject(o, "weights_path", r->weights_path);
}

/* Byte counts are exact in a double up to 2^53 (8 PiB). */
static int add_counts(cJSON *o, const aotrun_load_report *r) {
  return cJSON_AddNumberToObject(o, "library_bytes",
                                 (double)r->library_bytes) &&
         cJSON_AddNumberToObject(o, "weights_file_bytes",
                                 (double)r->weights_file_bytes) &&
         cJSON_AddNumberToObject(o, "host_bytes", (double)r->host_bytes) &&
         cJSON_AddNumberToObject(o, "device_bytes", (double)r->device_bytes) &&
         cJSON_AddNumberToObject(o, "shared_bytes", (double)r->shared_bytes) &&
         cJSON_AddNumberToObject(o, "device_free_bytes",
                                 (double)r->device_free_bytes) &&
         cJSON_AddNumberToObject(o, "gpu_arch", (double)r->gpu_arch) &&
         cJSON_AddNumberToObject(o, "driver_version",
                                 (double)r->driver_version) &&
         cJSON_AddNumberToObject(o, "shim_imports", (double)r->shim_imports) &&
         cJSON_AddNumberToObject(o, "shim_rebound", (double)r->shim_rebound);
}

char *aotrun_load_report_json(const aotrun_load_report *r) {
  cJSON *o = cJSON_CreateObject();
  char *text = NULL;
  if (o != NULL && add_strings(o, r) && add_phases(o, r) && add_counts(o, r))
    text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return text;
}
