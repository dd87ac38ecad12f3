/*
 * test_staged_upload_cuda.c: weight uploads through pinned staging
 * (backend_cuda/cuda_staged_upload.h) on a GPU: sizes below, at and above
 * the staging threshold, an odd tail, a source that is a read-only file
 * mapping (the weights file as the host maps it); each read back and
 * compared byte for byte. Every test skips with the reason when no GPU is
 * usable.
 */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend_cuda/cuda_staged_upload.h"

static char g_reason[160];

#define REQUIRE_GPU()                          \
  do {                                         \
    if (g_reason[0] != '\0') {                 \
      print_message("skipped: %s\n", g_reason); \
      skip();                                  \
    }                                          \
  } while (0)

static void fill(unsigned char *p, size_t n, unsigned seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (unsigned char)(x >> 24);
  }
}

/* Uploads src, reads it back, compares. */
static void round_trip(const unsigned char *src, size_t n) {
  void *dev = NULL;
  assert_int_equal(cudaMalloc(&dev, n ? n : 1), cudaSuccess);
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status st = aotrun_cuda_staged_upload(dev, src, n, &err);
  if (st != AOTRUN_OK) fail_msg("upload of %zu bytes: %s", n, err.message);
  unsigned char *back = malloc(n ? n : 1);
  assert_non_null(back);
  assert_int_equal(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost),
                   cudaSuccess);
  for (size_t i = 0; i < n; i++)
    if (back[i] != src[i])
      fail_msg("%zu bytes: byte %zu is %u, uploaded %u", n, i, back[i],
               src[i]);
  free(back);
  assert_int_equal(cudaFree(dev), cudaSuccess);
}

static void test_sizes(void **state) {
  (void)state;
  REQUIRE_GPU();
  const size_t chunk = AOTRUN_CUDA_STAGING_BYTES / 2;
  const size_t sizes[] = {0, 1, 4097, 2 * chunk - 1, 2 * chunk,
                          2 * chunk + 1, 5 * chunk + 12345, 13 * chunk};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    unsigned char *src = malloc(sizes[k] ? sizes[k] : 1);
    assert_non_null(src);
    fill(src, sizes[k], (unsigned)k);
    round_trip(src, sizes[k]);
    free(src);
  }
}

/* From a read-only private file mapping, as the host maps weights. */
static void test_from_file_mapping(void **state) {
  (void)state;
  REQUIRE_GPU();
  size_t n = 3 * AOTRUN_CUDA_STAGING_BYTES + 777;
  char path[] = "/tmp/aotrun-staged-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  unsigned char *src = malloc(n);
  assert_non_null(src);
  fill(src, n, 99);
  assert_int_equal(write(fd, src, n), (ssize_t)n);
  void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
  assert_true(map != MAP_FAILED);
  close(fd);
  round_trip(map, n);
  assert_int_equal(memcmp(map, src, n), 0);
  munmap(map, n);
  free(src);
}

int main(void) {
  int gpus = 0;
  cudaError_t e = cudaGetDeviceCount(&gpus);
  if (e != cudaSuccess || gpus == 0) {
    snprintf(g_reason, sizeof g_reason,
             "no usable GPU: cudaGetDeviceCount: %s (%d)",
             cudaGetErrorString(e), gpus);
    (void)cudaGetLastError();
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_from_file_mapping),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
