/*
 * elf_check.c: see elf_check.h. Only 64-bit little-endian ELF (the platforms
 * AOTInductor targets here) is accepted.
 */
#include "aot_loader/elf_check.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#define AOTRUN_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define AOTRUN_ELF_MACHINE EM_AARCH64
#endif

/* a + b <= limit, without overflowing. */
static int fits(uint64_t a, uint64_t b, uint64_t limit) {
  return a <= limit && b <= limit - a;
}

static aotrun_status check_header(const Elf64_Ehdr *eh, size_t size,
                                  const char *what, aotrun_error *err) {
  if (eh->e_ident[EI_CLASS] != ELFCLASS64)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is not a 64-bit ELF file (class %u)", what,
                            (unsigned)eh->e_ident[EI_CLASS]);
  if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is not little-endian ELF", what);
  if (eh->e_type != ET_DYN)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is not a shared library (ELF type %u, "
                            "expected %u)",
                            what, (unsigned)eh->e_type, (unsigned)ET_DYN);
#ifdef AOTRUN_ELF_MACHINE
  if (eh->e_machine != AOTRUN_ELF_MACHINE)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is built for ELF machine %u, this process "
                            "is %u",
                            what, (unsigned)eh->e_machine,
                            (unsigned)AOTRUN_ELF_MACHINE);
#endif
  if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s has no usable program headers (%u of %u "
                            "bytes)",
                            what, (unsigned)eh->e_phnum,
                            (unsigned)eh->e_phentsize);
  uint64_t table = (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
  if (!fits(eh->e_phoff, table, size))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is truncated: its program headers end at "
                            "byte %llu, it has %zu bytes",
                            what,
                            (unsigned long long)eh->e_phoff +
                                (unsigned long long)table,
                            size);
  return AOTRUN_OK;
}

/* Every segment the loader maps or reads must lie inside the bytes. */
static aotrun_status check_segments(const unsigned char *base,
                                    const Elf64_Ehdr *eh, size_t size,
                                    const char *what, aotrun_error *err) {
  int loads = 0;
  for (unsigned i = 0; i < eh->e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, base + eh->e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD) loads++;
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC &&
        ph.p_type != PT_INTERP && ph.p_type != PT_NOTE)
      continue;
    if (!fits(ph.p_offset, ph.p_filesz, size))
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "%s is truncated: segment %u ends at byte "
                              "%llu, it has %zu bytes",
                              what, i,
                              (unsigned long long)ph.p_offset +
                                  (unsigned long long)ph.p_filesz,
                              size);
  }
  if (loads == 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s has no loadable segment", what);
  return AOTRUN_OK;
}

aotrun_status aotrun_elf_check_shared_library(const void *bytes, size_t size,
                                              const char *what,
                                              aotrun_error *err) {
  const unsigned char *base = bytes;
  if (base == NULL || size < SELFMAG || memcmp(base, ELFMAG, SELFMAG) != 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is not an ELF shared library (%zu bytes, no "
                            "ELF magic)",
                            what, size);
  if (size < sizeof(Elf64_Ehdr))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is truncated: %zu bytes, an ELF header needs "
                            "%zu",
                            what, size, sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  memcpy(&eh, base, sizeof eh); /* the bytes may be unaligned */
  aotrun_status st = check_header(&eh, size, what, err);
  if (st != AOTRUN_OK) return st;
  return check_segments(base, &eh, size, what, err);
}
