/*
 * gpu_identity_check.c: aotrun_gpu_identity_check, the GPU check of the
 * CUDA backend's ABI 1.1 identity, devices, can_run and device choice.
 * Runs on the GPU machine against a PROGRAM directory exported there;
 * exits 77 (skip) with the reason when there is no GPU.
 *
 *   aotrun_gpu_identity_check PLUGIN.so PROGRAM_DIR [--method NAME]
 *                             [--input FILE.npy]... [--expected FILE.npy]...
 *
 * Checks (one PASS/FAIL line each):
 *   info       version, vendor, a build string naming runtime and driver
 *   devices    get_device_count == cudaGetDeviceCount; each device's name,
 *              total memory and compute capability == cudaGetDeviceProperties,
 *              0 < free <= total; the caller's current device unchanged;
 *              device N (out of range) refused naming it
 *   can_run    the program: yes; with device "N" (out of range): no, naming
 *              the value and the count
 *   other_arch a copy of the program whose library's cubins are relabelled
 *              for another GPU architecture: no, the reason naming both
 *              architectures (skipped with the reason when the library has
 *              PTX, which the driver would JIT, or no kernels)
 *   init       with device "0": a method, the caller's device restored;
 *              with --input/--expected (static output shapes): one execute
 *              succeeds and restores the caller's device too; with device
 *              "N": INVALID_ARGUMENT naming the value and count
 *   queries    the const queries (get_num_io, get_io_info) write nothing
 *              into the handle: a failing query on a second thread is that
 *              thread's last_error(m), never this thread's; this thread's
 *              own failing query is its last_error(m) until the next
 *              non-const call (an execute with --input/--expected)
 * Exit 0 pass, 1 fail, 2 usage, 77 skip.
 */
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "aot_loader/kernel_arch.h"
#include "plugin_api/aotrun_host.h"
#include "plugin_api/npy.h"

#define EXIT_SKIP 77
#define EM_CUDA_ 190
#define CUDA_ABI_V2_ 8
#define MAX_IO 32

typedef struct io_files {
  const char *inputs[MAX_IO], *expected[MAX_IO];
  int num_inputs, num_expected;
} io_files;

static int g_failures;

static void check(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s: ", ok ? "PASS" : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!ok) g_failures++;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b != NULL) {
    b[n] = '\0';
    *size = (size_t)n;
  }
  return b;
}

static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  int ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static void check_info(const aotrun_backend *b) {
  aotrun_backend_info info;
  aotrun_status s = aotrun_backend_get_info(b, &info);
  check(s == AOTRUN_OK && strstr(info.build, "CUDA runtime ") != NULL &&
            strstr(info.build, "driver none") == NULL,
        "info: version %s, vendor %s, build %s", s == AOTRUN_OK ? info.version : "?",
        s == AOTRUN_OK ? info.vendor : "?",
        s == AOTRUN_OK ? info.build : aotrun_host_last_error());
}

static void check_device(const aotrun_backend *b, int d) {
  struct cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
    check(0, "device %d: cudaGetDeviceProperties failed", d);
    return;
  }
  int before = -1, after = -2;
  cudaGetDevice(&before);
  aotrun_device_info info;
  aotrun_status s = aotrun_backend_device_info(b, d, &info);
  cudaGetDevice(&after);
  check(s == AOTRUN_OK && strcmp(info.name, p.name) == 0 &&
            info.total_memory == p.totalGlobalMem &&
            info.compute_major == p.major && info.compute_minor == p.minor &&
            info.free_memory > 0 && info.free_memory <= info.total_memory &&
            info.device_type == kDLCUDA && info.device_id == d &&
            before == after,
        "device %d: %s, %llu bytes (free %llu), compute %d.%d (cudart: %s, "
        "%zu bytes, %d.%d), current device %d -> %d %s",
        d, s == AOTRUN_OK ? info.name : aotrun_host_last_error(),
        (unsigned long long)info.total_memory,
        (unsigned long long)info.free_memory, info.compute_major,
        info.compute_minor, p.name, p.totalGlobalMem, p.major, p.minor,
        before, after, before == after ? "(kept)" : "(CHANGED)");
}

static void check_devices(const aotrun_backend *b, int n) {
  int32_t count = -1;
  aotrun_status s = aotrun_backend_device_count(b, &count);
  check(s == AOTRUN_OK && count == n,
        "device count %d (cudaGetDeviceCount %d)", (int)count, n);
  /* Start from the last device, so a leaked switch to 0 would show. */
  cudaSetDevice(n - 1);
  for (int d = 0; d < n; d++) check_device(b, d);
  aotrun_device_info info;
  s = aotrun_backend_device_info(b, n, &info);
  check(s == AOTRUN_ERR_INVALID_ARGUMENT &&
            strstr(aotrun_host_last_error(), "does not exist") != NULL,
        "device %d refused: %s", n, aotrun_host_last_error());
  cudaSetDevice(0);
}

typedef struct program {
  aotrun_program_dir *dir;
  const void *manifest;
  size_t size;
  void *token;
} program;

static int program_open(const char *path, program *p) {
  memset(p, 0, sizeof *p);
  if (aotrun_program_dir_open(path, &p->dir) != AOTRUN_OK) return -1;
  const aotrun_host_api *h = aotrun_program_dir_host_api(p->dir);
  return h->get_named_data(h->ctx, "manifest.json", &p->manifest, &p->size,
                           &p->token) == AOTRUN_OK
             ? 0
             : -1;
}

static void program_close(program *p) {
  if (p->dir == NULL) return;
  const aotrun_host_api *h = aotrun_program_dir_host_api(p->dir);
  if (p->token != NULL) h->release_named_data(h->ctx, p->token);
  aotrun_program_dir_close(p->dir);
}

static aotrun_status can_run(const aotrun_backend *b, program *p,
                             const char *method, const char *device,
                             char *reason, size_t size) {
  aotrun_key_value specs[2] = {{"method", method}, {"device", device}};
  return aotrun_backend_can_run(b, aotrun_program_dir_host_api(p->dir),
                                p->manifest, p->size, specs, 2, reason, size);
}

static void check_can_run(const aotrun_backend *b, program *p,
                          const char *method, int n) {
  char reason[1024];
  aotrun_status s = can_run(b, p, method, "0", reason, sizeof reason);
  check(s == AOTRUN_OK, "can_run %s on device 0: %s", method,
        s == AOTRUN_OK ? "yes" : reason);
  char dev[16], want[128];
  snprintf(dev, sizeof dev, "%d", n);
  snprintf(want, sizeof want, "compile spec device \"%d\": CUDA device %d does "
           "not exist (this machine has %d device", n, n, n);
  s = can_run(b, p, method, dev, reason, sizeof reason);
  check(s == AOTRUN_ERR_INVALID_ARGUMENT && strstr(reason, want) != NULL,
        "can_run on device %d refused: %s", n, reason);
}

/* One execute of m with host tensors from the files; 0 when it ran. */
static aotrun_status execute_files(const aotrun_backend_api *t,
                                   aotrun_method *m, const io_files *f) {
  aotrun_npy in[MAX_IO], want[MAX_IO];
  DLTensor in_t[MAX_IO], out_t[MAX_IO];
  memset(in, 0, sizeof in);
  memset(want, 0, sizeof want);
  memset(out_t, 0, sizeof out_t);
  aotrun_status s = AOTRUN_OK;
  for (int i = 0; s == AOTRUN_OK && i < f->num_inputs; i++) {
    s = aotrun_npy_read(f->inputs[i], &in[i]);
    in_t[i] = (DLTensor){in[i].data, {kDLCPU, 0}, in[i].ndim, in[i].dtype,
                         in[i].shape, NULL, 0};
  }
  for (int i = 0; s == AOTRUN_OK && i < f->num_expected; i++) {
    s = aotrun_npy_read(f->expected[i], &want[i]);
    out_t[i] = (DLTensor){calloc(1, want[i].nbytes ? want[i].nbytes : 1),
                          {kDLCPU, 0}, want[i].ndim, want[i].dtype,
                          want[i].shape, NULL, 0};
  }
  if (s == AOTRUN_OK)
    s = t->execute(m, in_t, (size_t)f->num_inputs, out_t,
                   (size_t)f->num_expected);
  if (s != AOTRUN_OK) printf("INFO: execute: %s\n", t->last_error(m));
  for (int i = 0; i < MAX_IO; i++) {
    free(out_t[i].data);
    aotrun_npy_free(&in[i]);
    aotrun_npy_free(&want[i]);
  }
  return s;
}

static void check_init(const aotrun_backend *b, program *p,
                       const char *method, int n, const io_files *f) {
  const aotrun_backend_api *t = aotrun_backend_table(b);
  const aotrun_host_api *h = aotrun_program_dir_host_api(p->dir);
  aotrun_key_value specs[2] = {{"method", method}, {"device", "0"}};
  if (n > 1) cudaSetDevice(n - 1);
  int before = -1, after = -2;
  cudaGetDevice(&before);
  aotrun_method *m = NULL;
  aotrun_status s = t->init_ex(t, h, p->manifest, p->size, specs, 2, &m);
  cudaGetDevice(&after);
  check(s == AOTRUN_OK && m != NULL && before == after,
        "init on device \"0\": %s; current device %d -> %d",
        s == AOTRUN_OK ? "ok" : t->last_error(NULL), before, after);
  if (m != NULL && f->num_inputs > 0) {
    cudaGetDevice(&before);
    s = execute_files(t, m, f);
    cudaGetDevice(&after);
    check(s == AOTRUN_OK && before == after,
          "execute on device \"0\": %s; current device %d -> %d",
          aotrun_status_string(s), before, after);
  }
  t->destroy(m);
  char dev[16], want[128];
  snprintf(dev, sizeof dev, "%d", n);
  specs[1].value = dev;
  snprintf(want, sizeof want, "CUDA device %d does not exist (this machine "
           "has %d device", n, n);
  m = NULL;
  s = t->init_ex(t, h, p->manifest, p->size, specs, 2, &m);
  check(s == AOTRUN_ERR_INVALID_ARGUMENT && m == NULL &&
            strstr(t->last_error(NULL), want) != NULL,
        "init on device \"%d\" refused: %s", n, t->last_error(NULL));
  cudaSetDevice(0);
}

/* ---- const queries: failures per thread, nothing written into m ---- */

typedef struct query_thread {
  const aotrun_backend_api *t;
  const aotrun_method *m;
  aotrun_status status;
  char message[256];
} query_thread;

static void *failing_query(void *p) {
  query_thread *q = p;
  aotrun_io_info info = {.struct_size = sizeof info};
  q->status = q->t->get_io_info(q->m, AOTRUN_IO_OUTPUT, 9999, &info);
  snprintf(q->message, sizeof q->message, "%s", q->t->last_error(q->m));
  return NULL;
}

static void check_queries(const aotrun_backend *b, program *p,
                          const char *method, const io_files *f) {
  const aotrun_backend_api *t = aotrun_backend_table(b);
  const aotrun_host_api *h = aotrun_program_dir_host_api(p->dir);
  aotrun_key_value specs[1] = {{"method", method}};
  aotrun_method *m = NULL;
  if (t->init_ex(t, h, p->manifest, p->size, specs, 1, &m) != AOTRUN_OK) {
    check(0, "queries: init: %s", t->last_error(NULL));
    return;
  }
  /* The handle's bytes (the backend callocs one block; its usable size
   * covers the struct whatever its layout) before the queries, to show
   * afterwards that none of them wrote into it. */
  size_t bytes = malloc_usable_size(m);
  unsigned char *before = malloc(bytes);
  if (before != NULL) memcpy(before, m, bytes);
  query_thread q = {.t = t, .m = m};
  pthread_t th;
  int started = pthread_create(&th, NULL, failing_query, &q) == 0;
  if (started) pthread_join(th, NULL);
  check(started && q.status == AOTRUN_ERR_INVALID_ARGUMENT &&
            strstr(q.message, "index 9999 is out of range") != NULL,
        "queries: a failing get_io_info on a second thread is its own "
        "last_error: \"%s\"", q.message);
  check(strcmp(t->last_error(m), "") == 0,
        "queries: this thread's last_error(m) untouched by it: \"%s\"",
        t->last_error(m));
  size_t n = 0;
  aotrun_status s = t->get_num_io(m, 5, &n);
  char mine[256];
  snprintf(mine, sizeof mine, "%s", t->last_error(m));
  check(s == AOTRUN_ERR_INVALID_ARGUMENT && strstr(mine, "io kind 5") != NULL,
        "queries: this thread's failing get_num_io is its last_error: "
        "\"%s\"", mine);
  size_t n_in = 0;
  aotrun_io_info info = {.struct_size = sizeof info};
  int ok = t->get_num_io(m, AOTRUN_IO_INPUT, &n_in) == AOTRUN_OK &&
           (n_in == 0 || t->get_io_info(m, AOTRUN_IO_INPUT, 0, &info) ==
                             AOTRUN_OK);
  (void)t->last_error(m);
  check(ok && before != NULL && memcmp(before, m, bytes) == 0,
        "queries: %zu bytes of the handle unchanged by two failing and two "
        "working queries and last_error (%s)", bytes,
        before == NULL ? "no memory for the copy"
                       : ok ? "compared" : "a working query failed");
  free(before);
  if (f->num_inputs > 0) {
    s = execute_files(t, m, f);
    check(s == AOTRUN_OK && strcmp(t->last_error(m), "") == 0,
          "queries: the next execute (%s) ends the kept failure: \"%s\"",
          aotrun_status_string(s), t->last_error(m));
  }
  t->destroy(m);
}

/* Relabels every embedded CUDA ELF image for SM `sm`; returns how many. */
static int relabel_cubins(unsigned char *p, size_t n, unsigned sm) {
  int count = 0;
  for (size_t i = 0; i + 64 <= n; i++) {
    if (memcmp(p + i, "\177ELF", 4) != 0 || p[i + 4] != 2) continue;
    if ((unsigned)(p[i + 18] | p[i + 19] << 8) != EM_CUDA_) continue;
    unsigned char *flags = p + i + 48; /* Elf64_Ehdr.e_flags */
    if (p[i + 8] >= CUDA_ABI_V2_)
      flags[1] = (unsigned char)sm;
    else
      flags[0] = (unsigned char)sm;
    count++;
  }
  return count;
}

/* Copies the program's regular files into dst, the library relabelled. */
static int copy_relabelled(const char *src, const char *dst,
                           const char *library, unsigned sm, int *relabelled,
                           aotrun_kernel_archs *archs) {
  DIR *d = opendir(src);
  if (d == NULL) return -1;
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    char from[4096], to[4096];
    struct stat st;
    snprintf(from, sizeof from, "%s/%s", src, e->d_name);
    snprintf(to, sizeof to, "%s/%s", dst, e->d_name);
    if (stat(from, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    size_t n = 0;
    char *bytes = read_file(from, &n);
    if (bytes == NULL) {
      rc = -1;
      break;
    }
    if (strcmp(e->d_name, library) == 0) {
      *relabelled = relabel_cubins((unsigned char *)bytes, n, sm);
      aotrun_kernel_archs_scan(bytes, n, archs);
    }
    rc = write_file(to, bytes, n);
    free(bytes);
  }
  closedir(d);
  return rc;
}

/* The library named for `method` in the manifest (a plain scan). */
static int library_of(const program *p, const char *method, char *out,
                      size_t size) {
  char key[300];
  snprintf(key, sizeof key, "\"%s\"", method);
  const char *at = strstr((const char *)p->manifest, "\"methods\"");
  at = at != NULL ? strstr(at, key) : NULL;
  at = at != NULL ? strstr(at, "\"library\"") : NULL;
  at = at != NULL ? strchr(at + 9, '"') : NULL;
  const char *end = at != NULL ? strchr(at + 1, '"') : NULL;
  if (end == NULL || (size_t)(end - at - 1) >= size) return -1;
  memcpy(out, at + 1, (size_t)(end - at - 1));
  out[end - at - 1] = '\0';
  return 0;
}

static void check_other_arch(const aotrun_backend *b, const char *path,
                             program *p, const char *method) {
  char library[256];
  if (library_of(p, method, library, sizeof library) != 0) {
    check(0, "other_arch: no library for method %s in the manifest", method);
    return;
  }
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  unsigned sm = major == 9 ? 100 : 90; /* another major than the GPU's */
  char dir[] = "/tmp/aotrun-other-arch.XXXXXX";
  if (mkdtemp(dir) == NULL) {
    check(0, "other_arch: mkdtemp failed");
    return;
  }
  int relabelled = 0;
  aotrun_kernel_archs archs;
  memset(&archs, 0, sizeof archs);
  char desc[256];
  if (copy_relabelled(path, dir, library, sm, &relabelled, &archs) != 0) {
    check(0, "other_arch: cannot copy %s to %s", path, dir);
  } else if (archs.num_ptx > 0 || archs.num_sass == 0) {
    printf("SKIP: other_arch: %s has %s after relabelling %d cubin(s): a "
           "SASS-only library is needed\n",
           library, aotrun_kernel_archs_describe(&archs, desc, sizeof desc),
           relabelled);
  } else {
    program q;
    char reason[1024] = "";
    aotrun_status s = AOTRUN_ERR_INTERNAL;
    if (program_open(dir, &q) == 0)
      s = can_run(b, &q, method, "0", reason, sizeof reason);
    program_close(&q);
    char want[32];
    snprintf(want, sizeof want, "sm_%u", sm);
    check(s == AOTRUN_ERR_NOT_SUPPORTED && strstr(reason, want) != NULL &&
              strstr(reason, "this GPU is sm_") != NULL,
          "other_arch: can_run on %s relabelled for %s (%d cubins): %s",
          library, want, relabelled, reason);
  }
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("INFO: could not remove %s\n", dir);
}

static int parse_args(int argc, char **argv, const char **method,
                      io_files *f) {
  *method = "forward";
  memset(f, 0, sizeof *f);
  for (int i = 3; i < argc; i += 2) {
    if (i + 1 >= argc) return -1;
    if (strcmp(argv[i], "--method") == 0)
      *method = argv[i + 1];
    else if (strcmp(argv[i], "--input") == 0 && f->num_inputs < MAX_IO)
      f->inputs[f->num_inputs++] = argv[i + 1];
    else if (strcmp(argv[i], "--expected") == 0 && f->num_expected < MAX_IO)
      f->expected[f->num_expected++] = argv[i + 1];
    else
      return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *method;
  io_files files;
  if (argc < 3 || parse_args(argc, argv, &method, &files) != 0) {
    fprintf(stderr,
            "usage: %s PLUGIN.so PROGRAM_DIR [--method NAME] "
            "[--input FILE.npy]... [--expected FILE.npy]...\n",
            argv[0]);
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("SKIP: no CUDA device\n");
    return EXIT_SKIP;
  }
  aotrun_backend *b = NULL;
  if (aotrun_backend_open(argv[1], AOTRUN_ABI_VERSION, &b) != AOTRUN_OK) {
    printf("FAIL: %s\n", aotrun_host_last_error());
    return 1;
  }
  check_info(b);
  check_devices(b, n);
  program p;
  if (program_open(argv[2], &p) != 0) {
    check(0, "cannot open program %s: %s", argv[2], aotrun_host_last_error());
  } else {
    check_can_run(b, &p, method, n);
    check_init(b, &p, method, n, &files);
    check_queries(b, &p, method, &files);
    check_other_arch(b, argv[2], &p, method);
  }
  program_close(&p);
  aotrun_backend_close(b);
  printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
  return g_failures ? 1 : 0;
}
