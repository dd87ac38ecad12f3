/*
 * test_kernel_arch.c: the GPU portability check at load
 * (aot_loader/kernel_arch.h) on synthetic ELF files: `.nv_fatbin` sections
 * with synthetic fatbin containers, cubins embedded as data (both ELF ABI
 * versions of the SM field), no section table, malformed sizes; and the
 * loader refusing such a library before dlopen with a message naming the
 * library and both architectures.
 */
#include <dlfcn.h>
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/kernel_arch.h"
#include "aot_loader/model_library.h"

#define BUF 16384

typedef struct entry {
  uint16_t kind; /* 1 PTX, 2 ELF */
  uint32_t arch;
  uint32_t payload;
  uint16_t isa; /* PTX ISA major * 10 + minor at +24/+26; 0: left 0 */
} entry;

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* One fatbin container (entry headers of 64 bytes, zero payloads) at out;
 * returns its size. */
static size_t fatbin(unsigned char *out, const entry *e, size_t n) {
  size_t at = 16;
  for (size_t i = 0; i < n; i++) {
    unsigned char *h = out + at;
    memset(h, 0, 64);
    put16(h, e[i].kind);
    put16(h + 2, 0x0101);
    put32(h + 4, 64);
    put64(h + 8, e[i].payload);
    put32(h + 28, e[i].arch);
    put16(h + 24, (uint16_t)(e[i].isa % 10));
    put16(h + 26, (uint16_t)(e[i].isa / 10));
    memset(h + 64, 0xCD, e[i].payload);
    at += 64 + e[i].payload;
  }
  put32(out, 0xBA55ED50u);
  put16(out + 4, 1);
  put16(out + 6, 16);
  put64(out + 8, at - 16);
  return at;
}

/* A 64-byte CUDA ELF header (an embedded cubin's start). */
static size_t cubin(unsigned char *out, unsigned abi, uint32_t flags) {
  Elf64_Ehdr eh;
  memset(&eh, 0, sizeof eh);
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_OSABI] = 0x41;
  eh.e_ident[EI_ABIVERSION] = (unsigned char)abi;
  eh.e_machine = 190;
  eh.e_flags = flags;
  memcpy(out, &eh, sizeof eh);
  return sizeof eh;
}

/* A host ELF shared object with one PT_LOAD over the file and sections
 * .nv_fatbin (fb) and .rodata (ro). Returns the size. */
static size_t host_elf(unsigned char *out, const unsigned char *fb,
                       size_t fb_n, const unsigned char *ro, size_t ro_n) {
  static const char names[] = "\0.nv_fatbin\0.rodata\0.shstrtab";
  memset(out, 0, BUF);
  Elf64_Ehdr eh;
  memset(&eh, 0, sizeof eh);
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 1;
  eh.e_ehsize = sizeof eh;
  size_t at = sizeof eh + sizeof(Elf64_Phdr);
  size_t fb_at = at;
  memcpy(out + at, fb, fb_n);
  at += (fb_n + 7) & ~(size_t)7;
  size_t ro_at = at;
  memcpy(out + at, ro, ro_n);
  at += (ro_n + 7) & ~(size_t)7;
  size_t names_at = at;
  memcpy(out + at, names, sizeof names);
  at += (sizeof names + 7) & ~(size_t)7;
  Elf64_Shdr sh[4];
  memset(sh, 0, sizeof sh);
  sh[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_PROGBITS,
                       .sh_offset = fb_at, .sh_size = fb_n};
  sh[2] = (Elf64_Shdr){.sh_name = 12, .sh_type = SHT_PROGBITS,
                       .sh_flags = SHF_ALLOC, .sh_offset = ro_at,
                       .sh_size = ro_n};
  sh[3] = (Elf64_Shdr){.sh_name = 20, .sh_type = SHT_STRTAB,
                       .sh_offset = names_at, .sh_size = sizeof names};
  eh.e_shoff = at;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 4;
  eh.e_shstrndx = 3;
  memcpy(out + at, sh, sizeof sh);
  at += sizeof sh;
  Elf64_Phdr ph = {.p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0,
                   .p_filesz = at, .p_memsz = at, .p_align = 4096};
  memcpy(out, &eh, sizeof eh);
  memcpy(out + sizeof eh, &ph, sizeof ph);
  return at;
}

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

static aotrun_status check(const aotrun_kernel_archs *a, uint32_t gpu,
                           aotrun_error *err) {
  aotrun_error_clear(err);
  return aotrun_kernel_archs_check(a, gpu, "forward.so", "cuda:0", err);
}

/* ---- .nv_fatbin ---- */

static void test_fatbin_sass_and_ptx(void **state) {
  (void)state;
  static unsigned char fb[2048], elf[BUF];
  const entry e[] = {{2, 80, 40, 0}, {1, 90, 24, 0}, {2, 80, 8, 0}, {16, 70, 0, 0}};
  size_t fb_n = fatbin(fb, e, 4);
  size_t n = host_elf(elf, fb, fb_n, (const unsigned char *)"x", 1);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_sass, 1); /* sm_80 twice: listed once */
  assert_int_equal(a.sass[0], 80);
  assert_int_equal(a.num_ptx, 1);
  assert_int_equal(a.ptx[0], 90);
  assert_int_equal(a.num_images, 3); /* LTO-IR is not counted */
  char buf[128];
  assert_string_equal(aotrun_kernel_archs_describe(&a, buf, sizeof buf),
                      "sm_80, compute_90 (PTX)");
  aotrun_error err;
  assert_int_equal(check(&a, 80, &err), AOTRUN_OK);
  assert_int_equal(check(&a, 86, &err), AOTRUN_OK); /* same major */
  assert_int_equal(check(&a, 90, &err), AOTRUN_OK); /* PTX JIT */
  assert_int_equal(check(&a, 120, &err), AOTRUN_OK);
  assert_int_equal(check(&a, 75, &err), AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(err.message, "forward.so has kernels for sm_80, "
                               "compute_90 (PTX) only; this GPU is sm_75 "
                               "(cuda:0)");
}

static void test_sass_only_for_another_gpu(void **state) {
  (void)state;
  static unsigned char fb[1024], elf[BUF];
  const entry e[] = {{2, 90, 16, 0}};
  size_t n = host_elf(elf, fb, fatbin(fb, e, 1), (const unsigned char *)"", 0);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(elf, n, &a);
  aotrun_error err;
  assert_int_equal(check(&a, 80, &err), AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(err.message,
                  "forward.so has kernels for sm_90 only; this GPU is sm_80 "
                  "(cuda:0): re-export the program for sm_80");
  assert_int_equal(check(&a, 100, &err), AOTRUN_ERR_NOT_SUPPORTED);
  assert_int_equal(check(&a, 90, &err), AOTRUN_OK);
}

/* ---- cubins embedded as data (embed_kernel_binary) ---- */

static void test_embedded_cubins(void **state) {
  (void)state;
  static unsigned char ro[1024], elf[BUF];
  size_t at = 5; /* unaligned, after some other data */
  memset(ro, 0x7f, sizeof ro); /* many ELFMAG0 bytes that start nothing */
  at += cubin(ro + at, 8, 0x6005a04);     /* CUDA >= 12.8: sm_90 in 8-15 */
  at += 3;
  at += cubin(ro + at, 7, 0x500550);      /* older ABI: sm_80 in 0-7 */
  at += cubin(ro + at, 8, 0x6007802);     /* sm_120 */
  size_t n = host_elf(elf, (const unsigned char *)"", 0, ro, at + 10);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_sass, 3);
  assert_int_equal(a.sass[0], 80);
  assert_int_equal(a.sass[1], 90);
  assert_int_equal(a.sass[2], 120);
  assert_int_equal(a.num_ptx, 0);
  aotrun_error err;
  assert_int_equal(check(&a, 89, &err), AOTRUN_OK);
  assert_int_equal(check(&a, 100, &err), AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(err.message, "sm_80, sm_90, sm_120 only; this GPU is "
                               "sm_100");
}

static void test_no_gpu_code_passes(void **state) {
  (void)state;
  static unsigned char elf[BUF];
  size_t n = host_elf(elf, (const unsigned char *)"", 0,
                      (const unsigned char *)"plain data", 10);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_images, 0);
  char buf[32];
  assert_string_equal(aotrun_kernel_archs_describe(&a, buf, sizeof buf),
                      "none");
  aotrun_error err;
  assert_int_equal(check(&a, 80, &err), AOTRUN_OK);
  aotrun_kernel_archs_scan(NULL, 10, &a);
  assert_int_equal(a.num_images, 0);
}

/* Without a section table every byte is looked at. */
static void test_no_section_table(void **state) {
  (void)state;
  static unsigned char raw[2048];
  memset(raw, 0, sizeof raw);
  const entry e[] = {{2, 75, 0, 0}};
  size_t at = 64; /* 8-aligned container */
  at += fatbin(raw + at, e, 1);
  cubin(raw + at + 11, 8, 0x6005004); /* sm_80 */
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(raw, at + 200, &a);
  assert_int_equal(a.num_sass, 2);
  assert_int_equal(a.sass[0], 75);
  assert_int_equal(a.sass[1], 80);
}

/* Sizes past the end, zero header sizes, truncated headers: no read
 * outside the bytes (ASan/valgrind), the entries before the damage kept. */
static void test_malformed_containers(void **state) {
  (void)state;
  static unsigned char fb[1024], elf[BUF];
  const entry e[] = {{2, 86, 8, 0}, {1, 70, 8, 0}};
  size_t fb_n = fatbin(fb, e, 2);
  put64(fb + 16 + 64 + 8 + 8, UINT64_MAX - 8); /* 2nd payload: huge */
  size_t n = host_elf(elf, fb, fb_n, (const unsigned char *)"", 0);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_sass, 1); /* the first entry */
  fatbin(fb, e, 2);
  put32(fb + 16 + 4, 0); /* 1st entry header size 0 */
  n = host_elf(elf, fb, fb_n, (const unsigned char *)"", 0);
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_images, 0);
  fatbin(fb, e, 2);
  put64(fb + 8, UINT64_MAX); /* container size: huge */
  put16(fb + 6, 0xFFFF);     /* header size past the section */
  n = host_elf(elf, fb, fb_n, (const unsigned char *)"", 0);
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_images, 0);
  /* Every prefix of a valid file: no crash, never more than the whole. */
  fatbin(fb, e, 2);
  n = host_elf(elf, fb, fb_n, (const unsigned char *)"", 0);
  for (size_t k = 0; k <= n; k++) {
    aotrun_kernel_archs_scan(elf, k, &a);
    assert_true(a.num_images <= 2);
  }
  /* A section table past the end. */
  Elf64_Ehdr eh;
  memcpy(&eh, elf, sizeof eh);
  eh.e_shoff = UINT64_MAX - 10;
  memcpy(elf, &eh, sizeof eh);
  aotrun_kernel_archs_scan(elf, n, &a);
}

/* ---- through the loader: refused before dlopen ---- */

static void test_loader_refuses_before_dlopen(void **state) {
  (void)state;
  static unsigned char fb[1024], elf[BUF];
  const entry e[] = {{2, 90, 16, 0}};
  size_t n = host_elf(elf, fb, fatbin(fb, e, 1), (const unsigned char *)"", 0);
  aotrun_load_report r;
  aotrun_load_report_init(&r);
  aotrun_model_library_config c = {.device = "cuda:1", .name = "forward.so",
                                   .gpu_arch = 80, .report = &r};
  aotrun_model_library *lib = NULL;
  aotrun_error err;
  assert_int_equal(aotrun_model_library_load_with(elf, n, &c, &lib, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_null(lib);
  assert_contains(err.message, "forward.so has kernels for sm_90 only; this "
                               "GPU is sm_80 (cuda:1)");
  assert_string_equal(r.kernels, "sm_90");
  assert_int_equal(r.gpu_arch, 80);
  assert_int_equal(r.phase_ns[AOTRUN_LOAD_DLOPEN], -1); /* never reached */
}

/* ---- PTX ISA against the driver ---- */

static const char *g_real_library; /* libaotrun_shim.so (argv[1]) */

static aotrun_status check_driver(const aotrun_kernel_archs *a, uint32_t gpu,
                                  int driver, aotrun_error *err) {
  aotrun_error_clear(err);
  aotrun_kernel_target t = {.gpu = gpu, .driver_version = driver,
                            .device = "cuda:0"};
  return aotrun_kernel_archs_check_target(a, &t, "forward.so", err);
}

static void test_ptx_isa_table(void **state) {
  (void)state;
  assert_int_equal(aotrun_ptx_isa_max(12080), 87);
  assert_int_equal(aotrun_ptx_isa_max(12060), 85); /* 12.6 added none */
  assert_int_equal(aotrun_ptx_isa_max(12000), 80);
  assert_int_equal(aotrun_ptx_isa_max(11080), 78);
  assert_int_equal(aotrun_ptx_isa_max(13000), 90);
  assert_int_equal(aotrun_ptx_isa_max(10020), 0);
  assert_int_equal(aotrun_ptx_isa_max(99000), UINT32_MAX); /* newer: trust */
  assert_int_equal(aotrun_ptx_isa_cuda(90), 13000);
  assert_int_equal(aotrun_ptx_isa_cuda(87), 12080);
  assert_int_equal(aotrun_ptx_isa_cuda(99), 0);
}

/* compute_90 PTX of ISA 9.0 (CUDA 13's nvcc) and an sm_80 cubin: on an
 * sm_90 GPU only the PTX can run, and only a CUDA 13 driver compiles it. */
static void test_ptx_newer_than_the_driver(void **state) {
  (void)state;
  static unsigned char fb[2048], elf[BUF];
  const entry e[] = {{2, 80, 8, 0}, {1, 90, 24, 90}, {1, 90, 16, 91}};
  size_t n = host_elf(elf, fb, fatbin(fb, e, 3), (const unsigned char *)"x", 1);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_ptx, 1);
  assert_int_equal(a.ptx_isa[0], 90); /* the lowest of the two */
  aotrun_error err;
  assert_int_equal(check_driver(&a, 90, 13000, &err), AOTRUN_OK);
  assert_int_equal(check_driver(&a, 90, 0, &err), AOTRUN_OK); /* unknown */
  assert_int_equal(check_driver(&a, 86, 12080, &err), AOTRUN_OK); /* SASS */
  assert_int_equal(check_driver(&a, 90, 12080, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(err.message,
                  "forward.so has no cubin for this GPU (sm_90, cuda:0), "
                  "only PTX ISA 9.0 (compute_90), which this driver (CUDA "
                  "12.8, PTX ISA up to 8.7) cannot compile: install an "
                  "NVIDIA driver for CUDA 13.0 or later, or re-export the "
                  "program for sm_90 (cubins)");
  /* Without a driver version the old entry point passes it. */
  assert_int_equal(check(&a, 90, &err), AOTRUN_OK);
}

/* An older PTX next to a newer one: the driver compiles the older. */
static void test_older_ptx_is_enough(void **state) {
  (void)state;
  static unsigned char fb[2048], elf[BUF];
  const entry e[] = {{1, 80, 8, 80}, {1, 90, 8, 90}};
  size_t n = host_elf(elf, fb, fatbin(fb, e, 2), (const unsigned char *)"x", 1);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(elf, n, &a);
  assert_int_equal(a.num_ptx, 2);
  assert_int_equal(a.ptx_isa[0], 80);
  assert_int_equal(a.ptx_isa[1], 90);
  aotrun_error err;
  assert_int_equal(check_driver(&a, 90, 12000, &err), AOTRUN_OK);
  assert_int_equal(check_driver(&a, 90, 11080, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(err.message, "only PTX ISA 8.0 (compute_80)");
  assert_contains(err.message, "CUDA 12.0 or later");
  /* A GPU older than every PTX arch: the architecture message. */
  assert_int_equal(check_driver(&a, 75, 13000, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(err.message, "has kernels for compute_80, compute_90 (PTX) "
                               "only; this GPU is sm_75");
}

/* Every problem in one message: the kernels, and the imports (this
 * synthetic library has no dynamic section to read them from). Runs last:
 * it makes the shim global. */
static void test_all_problems_at_once(void **state) {
  (void)state;
  void *shim = dlopen(g_real_library, RTLD_NOW | RTLD_GLOBAL);
  assert_non_null(shim);
  static unsigned char fb[1024], elf[BUF];
  const entry e[] = {{1, 90, 16, 90}};
  size_t n = host_elf(elf, fb, fatbin(fb, e, 1), (const unsigned char *)"", 0);
  aotrun_load_report r;
  aotrun_load_report_init(&r);
  aotrun_model_library_config c = {.device = "cuda:0", .name = "forward.so",
                                   .gpu_arch = 90, .driver_version = 12040,
                                   .report = &r};
  aotrun_model_library *lib = NULL;
  aotrun_error err;
  assert_int_equal(aotrun_model_library_load_with(elf, n, &c, &lib, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_null(lib);
  assert_contains(err.message, "only PTX ISA 9.0 (compute_90), which this "
                               "driver (CUDA 12.4, PTX ISA up to 8.4)");
  assert_contains(err.message, "; and: forward.so: cannot read its imports: "
                               "no dynamic section inside the file");
  assert_int_equal(r.driver_version, 12040);
  assert_int_equal(r.phase_ns[AOTRUN_LOAD_DLOPEN], -1); /* never reached */
}

/* A real nvcc-built library: libaotrun_shim.so's .nv_fatbin holds what
 * tools/copts.bzl's AOTRUN_NVCC_FLAGS ask for: sm_80 and sm_90 SASS, and
 * compute_90 PTX. */

static void test_real_nvcc_library(void **state) {
  (void)state;
  FILE *f = fopen(g_real_library, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  assert_true(n > 0);
  rewind(f);
  unsigned char *bytes = malloc((size_t)n);
  assert_non_null(bytes);
  assert_int_equal(fread(bytes, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  aotrun_kernel_archs a;
  aotrun_kernel_archs_scan(bytes, (size_t)n, &a);
  char buf[256];
  print_message("%s: %s in %zu images\n", g_real_library,
                aotrun_kernel_archs_describe(&a, buf, sizeof buf),
                a.num_images);
  assert_string_equal(buf, "sm_80, sm_90, compute_90 (PTX)");
  assert_int_equal(a.ptx_isa[0], 90); /* CUDA 13's nvcc writes ISA 9.0 */
  aotrun_error err;
  assert_int_equal(check(&a, 89, &err), AOTRUN_OK);  /* sm_80 SASS */
  assert_int_equal(check(&a, 100, &err), AOTRUN_OK); /* PTX JIT */
  assert_int_equal(check(&a, 75, &err), AOTRUN_ERR_NOT_SUPPORTED);
  free(bytes);
}

int main(int argc, char **argv) {
  g_real_library = argc > 1 ? argv[1] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_nvcc_library),
      cmocka_unit_test(test_fatbin_sass_and_ptx),
      cmocka_unit_test(test_sass_only_for_another_gpu),
      cmocka_unit_test(test_embedded_cubins),
      cmocka_unit_test(test_no_gpu_code_passes),
      cmocka_unit_test(test_no_section_table),
      cmocka_unit_test(test_malformed_containers),
      cmocka_unit_test(test_loader_refuses_before_dlopen),
      cmocka_unit_test(test_ptx_isa_table),
      cmocka_unit_test(test_ptx_newer_than_the_driver),
      cmocka_unit_test(test_older_ptx_is_enough),
      cmocka_unit_test(test_all_problems_at_once), /* last: loads the shim */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
