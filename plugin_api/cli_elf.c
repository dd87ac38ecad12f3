/* cli_elf.c: see cli_elf.h. */
#include "plugin_api/cli_elf.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/host_error.h"

/* a + b <= limit, without overflowing. */
static int fits(uint64_t a, uint64_t b, uint64_t limit) {
  return a <= limit && b <= limit - a;
}

static aotrun_status bad(const char *what, const char *why) {
  return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                          "%s: cannot read its dynamic symbols: %s", what,
                          why);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts and drops repeats (a name can appear with several versions). */
static void sort_unique(cli_name_list *l) {
  if (l->count == 0) return;
  qsort(l->names, l->count, sizeof *l->names, compare_names);
  size_t k = 1;
  for (size_t i = 1; i < l->count; i++) {
    if (strcmp(l->names[i], l->names[k - 1]) == 0)
      free(l->names[i]);
    else
      l->names[k++] = l->names[i];
  }
  l->count = k;
}

static int wanted(const Elf64_Sym *s, cli_elf_which which) {
  if (which == CLI_ELF_IMPORTS) return s->st_shndx == SHN_UNDEF;
  unsigned bind = ELF64_ST_BIND(s->st_info);
  unsigned vis = ELF64_ST_VISIBILITY(s->st_other);
  return s->st_shndx != SHN_UNDEF &&
         (bind == STB_GLOBAL || bind == STB_WEAK) &&
         (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

/* The .dynsym section header and its string table's, both checked. */
static aotrun_status find_dynsym(const unsigned char *base, size_t size,
                                 const char *what, Elf64_Shdr *sym,
                                 Elf64_Shdr *str) {
  Elf64_Ehdr eh;
  if (size < sizeof eh || memcmp(base, ELFMAG, SELFMAG) != 0)
    return bad(what, "not an ELF file");
  memcpy(&eh, base, sizeof eh); /* the bytes may be unaligned */
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return bad(what, "not 64-bit little-endian ELF");
  if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !fits(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size))
    return bad(what, "no section headers inside the file");
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    memcpy(sym, base + eh.e_shoff + (uint64_t)i * sizeof *sym, sizeof *sym);
    if (sym->sh_type != SHT_DYNSYM) continue;
    if (sym->sh_entsize != sizeof(Elf64_Sym) ||
        !fits(sym->sh_offset, sym->sh_size, size))
      return bad(what, "its .dynsym section lies outside the file");
    if (sym->sh_link == 0 || sym->sh_link >= eh.e_shnum)
      return bad(what, "its .dynsym section has no string table");
    memcpy(str, base + eh.e_shoff + (uint64_t)sym->sh_link * sizeof *str,
           sizeof *str);
    if (str->sh_type != SHT_STRTAB || !fits(str->sh_offset, str->sh_size, size))
      return bad(what, "its dynamic string table lies outside the file");
    return AOTRUN_OK;
  }
  return bad(what, "no .dynsym section");
}

aotrun_status cli_elf_symbols(const void *bytes, size_t size,
                              const char *what, cli_elf_which which,
                              const char *prefix, cli_name_list *out) {
  memset(out, 0, sizeof *out);
  const unsigned char *base = bytes;
  if (base == NULL) return bad(what, "no bytes");
  Elf64_Shdr sym, str;
  aotrun_status st = find_dynsym(base, size, what, &sym, &str);
  if (st != AOTRUN_OK) return st;
  size_t n = (size_t)(sym.sh_size / sizeof(Elf64_Sym));
  const char *strtab = (const char *)base + str.sh_offset;
  size_t prefix_len = strlen(prefix);
  out->names = calloc(n ? n : 1, sizeof *out->names);
  if (out->names == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory reading %s", what);
  for (size_t i = 1; i < n; i++) { /* entry 0 is the null symbol */
    Elf64_Sym s;
    memcpy(&s, base + sym.sh_offset + i * sizeof s, sizeof s);
    if (s.st_name == 0 || !wanted(&s, which)) continue;
    if (s.st_name >= str.sh_size) {
      cli_name_list_free(out);
      return bad(what, "a symbol name lies outside its string table");
    }
    const char *name = strtab + s.st_name;
    size_t room = (size_t)(str.sh_size - s.st_name);
    const char *end = memchr(name, '\0', room);
    if (end == NULL) {
      cli_name_list_free(out);
      return bad(what, "a symbol name is not terminated");
    }
    size_t len = (size_t)(end - name);
    if (len < prefix_len || memcmp(name, prefix, prefix_len) != 0) continue;
    out->names[out->count] = malloc(len + 1);
    if (out->names[out->count] == NULL) {
      cli_name_list_free(out);
      return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                              "out of memory reading %s", what);
    }
    memcpy(out->names[out->count++], name, len + 1);
  }
  sort_unique(out);
  return AOTRUN_OK;
}

int cli_name_list_has(const cli_name_list *list, const char *name) {
  if (list == NULL || list->count == 0) return 0;
  return bsearch(&name, list->names, list->count, sizeof *list->names,
                 compare_names) != NULL;
}

void cli_name_list_free(cli_name_list *list) {
  if (list == NULL) return;
  for (size_t i = 0; i < list->count; i++) free(list->names[i]);
  free(list->names);
  memset(list, 0, sizeof *list);
}
