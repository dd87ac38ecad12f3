/*
 * kernel_arch.c: see kernel_arch.h. Reads little-endian fields with memcpy
 * (the bytes may be unaligned) and checks every range before reading.
 */
#include "aot_loader/kernel_arch.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_HEADER_SIZE 16
#define FATBIN_ENTRY_MIN 32 /* through the arch field at +28 */
#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#ifndef EM_CUDA
#define EM_CUDA 190
#endif
#define CUDA_ABI_V2 8 /* e_ident[EI_ABIVERSION] from which the SM is in 8-15 */
#define SM_MIN 10
#define SM_MAX 255

typedef struct span {
  const unsigned char *p;
  size_t n;
} span;

static uint16_t rd16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint32_t rd32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint64_t rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* [off, off + len) lies inside n bytes, without overflow. */
static int inside(uint64_t off, uint64_t len, size_t n) {
  return off <= n && len <= n - off;
}

/* Inserts sm into a sorted, duplicate-free list. */
static void add_arch(uint32_t *list, size_t *count, uint32_t sm) {
  if (sm < SM_MIN || sm > SM_MAX) return;
  size_t i = 0;
  while (i < *count && list[i] < sm) i++;
  if (i < *count && list[i] == sm) return;
  if (*count == AOTRUN_KERNEL_ARCH_MAX) return;
  memmove(list + i + 1, list + i, (*count - i) * sizeof *list);
  list[i] = sm;
  (*count)++;
}

/* Records a PTX entry: its arch (sorted in like add_arch, the ISA array
 * kept in step) and the lowest ISA version seen for that arch. */
static void add_ptx(aotrun_kernel_archs *out, uint32_t sm, uint32_t isa) {
  if (sm < SM_MIN || sm > SM_MAX) return;
  size_t i = 0, n = out->num_ptx;
  while (i < n && out->ptx[i] < sm) i++;
  if (i < n && out->ptx[i] == sm) {
    if (out->ptx_isa[i] == 0 || (isa != 0 && isa < out->ptx_isa[i]))
      out->ptx_isa[i] = isa;
    return;
  }
  if (n == AOTRUN_KERNEL_ARCH_MAX) return;
  memmove(out->ptx + i + 1, out->ptx + i, (n - i) * sizeof *out->ptx);
  memmove(out->ptx_isa + i + 1, out->ptx_isa + i,
          (n - i) * sizeof *out->ptx_isa);
  out->ptx[i] = sm;
  out->ptx_isa[i] = isa;
  out->num_ptx = n + 1;
}

/* ---- cubins embedded as data ------------------------------------------- */

/* The SM of a CUDA ELF image starting at p (n bytes left), or 0. */
static uint32_t cubin_sm(const unsigned char *p, size_t n) {
  if (n < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) != 0 ||
      p[EI_CLASS] != ELFCLASS64)
    return 0;
  if (rd16(p + offsetof(Elf64_Ehdr, e_machine)) != EM_CUDA) return 0;
  uint32_t flags = rd32(p + offsetof(Elf64_Ehdr, e_flags));
  return p[EI_ABIVERSION] >= CUDA_ABI_V2 ? (flags >> 8) & 0xffu
                                         : flags & 0xffu;
}

static void scan_cubins(span s, aotrun_kernel_archs *out) {
  const unsigned char *p = s.p, *end = s.p + s.n;
  while (p < end) {
    p = memchr(p, ELFMAG0, (size_t)(end - p));
    if (p == NULL) return;
    uint32_t sm = cubin_sm(p, (size_t)(end - p));
    if (sm != 0) {
      out->num_images++;
      add_arch(out->sass, &out->num_sass, sm);
    }
    p++;
  }
}

/* ---- fatbin containers ------------------------------------------------- */

static void scan_entries(span c, aotrun_kernel_archs *out) {
  uint64_t e = 0;
  while (inside(e, FATBIN_ENTRY_MIN, c.n)) {
    uint16_t kind = rd16(c.p + e);
    uint32_t header = rd32(c.p + e + 4);
    uint64_t payload = rd64(c.p + e + 8);
    uint32_t arch = rd32(c.p + e + 28);
    uint16_t minor = rd16(c.p + e + 24), major = rd16(c.p + e + 26);
    uint32_t isa = major > 0 && major < 100 && minor < 10
                       ? (uint32_t)major * 10 + minor
                       : 0;
    if (header < FATBIN_ENTRY_MIN || !inside(e, header, c.n)) return;
    if (kind == FATBIN_KIND_ELF || kind == FATBIN_KIND_PTX) {
      out->num_images++;
      if (kind == FATBIN_KIND_ELF)
        add_arch(out->sass, &out->num_sass, arch);
      else
        add_ptx(out, arch, isa);
    }
    if (!inside(e + header, payload, c.n)) return;
    e += header + payload;
  }
}

/* Containers follow each other, 8-byte aligned; bytes that are not a
 * container header are skipped 8 at a time. */
static void scan_fatbin(span s, aotrun_kernel_archs *out) {
  uint64_t off = 0;
  while (inside(off, FATBIN_HEADER_SIZE, s.n)) {
    const unsigned char *h = s.p + off;
    uint16_t header = rd16(h + 6);
    uint64_t size = rd64(h + 8);
    if (rd32(h) != FATBIN_MAGIC || header < FATBIN_HEADER_SIZE ||
        !inside(off, header, s.n)) {
      off += 8;
      continue;
    }
    uint64_t room = s.n - off - header;
    span c = {h + header, (size_t)(size < room ? size : room)};
    scan_entries(c, out);
    uint64_t next = off + header + c.n;
    off = (next + 7) & ~(uint64_t)7;
  }
}

/* ---- the library's sections -------------------------------------------- */

/* The section's name, when it lies inside the string table. */
static const char *section_name(span b, const Elf64_Shdr *names,
                                uint32_t offset) {
  if (!inside(names->sh_offset, names->sh_size, b.n) ||
      offset >= names->sh_size)
    return "";
  const char *s = (const char *)b.p + names->sh_offset + offset;
  size_t room = (size_t)(names->sh_size - offset);
  return memchr(s, '\0', room) != NULL ? s : "";
}

/* 1 when the section table was usable (sections scanned), else 0. */
static int scan_sections(span b, aotrun_kernel_archs *out) {
  Elf64_Ehdr eh;
  if (b.n < sizeof eh || memcmp(b.p, ELFMAG, SELFMAG) != 0) return 0;
  memcpy(&eh, b.p, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shstrndx >= eh.e_shnum ||
      !inside(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), b.n))
    return 0;
  Elf64_Shdr names;
  memcpy(&names, b.p + eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof names,
         sizeof names);
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh;
    memcpy(&sh, b.p + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
    if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL ||
        !inside(sh.sh_offset, sh.sh_size, b.n))
      continue;
    span s = {b.p + sh.sh_offset, (size_t)sh.sh_size};
    if (strcmp(section_name(b, &names, sh.sh_name), ".nv_fatbin") == 0)
      scan_fatbin(s, out);
    else if (sh.sh_type == SHT_PROGBITS && !(sh.sh_flags & SHF_EXECINSTR))
      scan_cubins(s, out);
  }
  return 1;
}

void aotrun_kernel_archs_scan(const void *bytes, size_t size,
                              aotrun_kernel_archs *out) {
  memset(out, 0, sizeof *out);
  if (bytes == NULL) return;
  span b = {bytes, size};
  if (scan_sections(b, out)) return;
  /* No usable section table (stripped of it, or not ELF): look at every
   * byte for both forms. */
  scan_fatbin(b, out);
  scan_cubins(b, out);
}

/* ---- the check --------------------------------------------------------- */

static int sass_runs(uint32_t sm, uint32_t gpu) {
  return sm / 10 == gpu / 10 && sm % 10 <= gpu % 10;
}

static void append_list(char *buf, size_t size, size_t *used,
                        const uint32_t *list, size_t n, const char *prefix) {
  for (size_t i = 0; i < n && *used < size; i++)
    *used += (size_t)snprintf(buf + *used, size - *used, "%s%s_%u",
                              *used ? ", " : "", prefix, (unsigned)list[i]);
}

const char *aotrun_kernel_archs_describe(const aotrun_kernel_archs *a,
                                         char *buf, size_t size) {
  if (size == 0) return buf;
  size_t used = 0;
  buf[0] = '\0';
  append_list(buf, size, &used, a->sass, a->num_sass, "sm");
  if (a->num_ptx > 0) {
    append_list(buf, size, &used, a->ptx, a->num_ptx, "compute");
    if (used < size) snprintf(buf + used, size - used, " (PTX)");
  }
  if (buf[0] == '\0') snprintf(buf, size, "none");
  return buf;
}

/* PTX ISA version -> first CUDA release whose driver compiles it (NVIDIA's
 * PTX ISA release history; 12.6 added no ISA version, 8.6 is 12.7's). */
static const struct {
  uint32_t isa;
  int cuda;
} kPtxIsa[] = {
    {70, 11000}, {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040},
    {75, 11050}, {76, 11060}, {77, 11070}, {78, 11080}, {80, 12000},
    {81, 12010}, {82, 12020}, {83, 12030}, {84, 12040}, {85, 12050},
    {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000}, {91, 13010},
};
#define PTX_ISA_ROWS (sizeof kPtxIsa / sizeof kPtxIsa[0])

uint32_t aotrun_ptx_isa_max(int driver) {
  if (driver > kPtxIsa[PTX_ISA_ROWS - 1].cuda) return UINT32_MAX;
  uint32_t best = 0;
  for (size_t i = 0; i < PTX_ISA_ROWS; i++)
    if (kPtxIsa[i].cuda <= driver) best = kPtxIsa[i].isa;
  return best;
}

int aotrun_ptx_isa_cuda(uint32_t isa) {
  for (size_t i = 0; i < PTX_ISA_ROWS; i++)
    if (kPtxIsa[i].isa == isa) return kPtxIsa[i].cuda;
  return 0;
}

/* Whether the PTX entry i can be compiled by the driver (unknown driver or
 * ISA: yes, the driver has the last word). */
static int ptx_compiles(const aotrun_kernel_archs *a, size_t i, int driver) {
  return driver <= 0 || a->ptx_isa[i] == 0 ||
         a->ptx_isa[i] <= aotrun_ptx_isa_max(driver);
}

/* The kernels run on the GPU, but only through PTX the driver cannot
 * compile: name the lowest such ISA and both ways out. */
static aotrun_status ptx_too_new(const aotrun_kernel_archs *a,
                                 const aotrun_kernel_target *t,
                                 const char *what, aotrun_error *err) {
  uint32_t isa = UINT32_MAX, arch = 0;
  for (size_t i = 0; i < a->num_ptx; i++)
    if (a->ptx[i] <= t->gpu && a->ptx_isa[i] < isa) {
      isa = a->ptx_isa[i];
      arch = a->ptx[i];
    }
  uint32_t max = aotrun_ptx_isa_max(t->driver_version);
  int need = aotrun_ptx_isa_cuda(isa);
  char update[64] = "a newer NVIDIA driver";
  if (need > 0)
    snprintf(update, sizeof update, "an NVIDIA driver for CUDA %d.%d or later",
             need / 1000, need % 1000 / 10);
  return aotrun_error_set(
      err, AOTRUN_ERR_NOT_SUPPORTED,
      "%s has no cubin for this GPU (sm_%u, %s), only PTX ISA %u.%u "
      "(compute_%u), which this driver (CUDA %d.%d, PTX ISA up to %u.%u) "
      "cannot compile: install %s, or re-export the program for sm_%u "
      "(cubins), or with a CUDA toolkit no newer than the driver",
      what, (unsigned)t->gpu, t->device ? t->device : "the GPU",
      (unsigned)(isa / 10),
      (unsigned)(isa % 10), (unsigned)arch, t->driver_version / 1000,
      t->driver_version % 1000 / 10, (unsigned)(max / 10),
      (unsigned)(max % 10), update, (unsigned)t->gpu);
}

aotrun_status aotrun_kernel_archs_check(const aotrun_kernel_archs *a,
                                        uint32_t gpu, const char *what,
                                        const char *device,
                                        aotrun_error *err) {
  aotrun_kernel_target t = {.gpu = gpu, .driver_version = 0, .device = device};
  return aotrun_kernel_archs_check_target(a, &t, what, err);
}

aotrun_status aotrun_kernel_archs_check_target(const aotrun_kernel_archs *a,
                                               const aotrun_kernel_target *t,
                                               const char *what,
                                               aotrun_error *err) {
  uint32_t gpu = t->gpu;
  const char *device = t->device ? t->device : "the GPU";
  if (a->num_sass == 0 && a->num_ptx == 0) return AOTRUN_OK;
  for (size_t i = 0; i < a->num_sass; i++)
    if (sass_runs(a->sass[i], gpu)) return AOTRUN_OK;
  int jit_arch = 0;
  for (size_t i = 0; i < a->num_ptx; i++) {
    if (a->ptx[i] > gpu) continue;
    jit_arch = 1;
    if (ptx_compiles(a, i, t->driver_version)) return AOTRUN_OK;
  }
  if (jit_arch) return ptx_too_new(a, t, what, err);
  char have[512];
  aotrun_kernel_archs_describe(a, have, sizeof have);
  return aotrun_error_set(
      err, AOTRUN_ERR_NOT_SUPPORTED,
      "%s has kernels for %s only; this GPU is sm_%u (%s): re-export the "
      "program for sm_%u (on this GPU), or with PTX for compute_%u or lower",
      what, have, (unsigned)gpu, device, (unsigned)gpu, (unsigned)gpu);
}
