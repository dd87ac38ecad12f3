/*
 * shim_binding.c: see shim_binding.h. Reads the ELF with memcpy (the bytes
 * may be unaligned) and checks every range before reading.
 */
#include "aot_loader/shim_binding.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct elf_view {
  const unsigned char *p;
  size_t n;
  Elf64_Ehdr eh;
  const char *what;
  /* From the dynamic section (file offsets; 0 = absent). */
  uint64_t strtab, strsz, symtab, syment;
  uint64_t rela, relasz, jmprel, pltrelsz;
} elf_view;

static int inside(uint64_t off, uint64_t len, size_t n) {
  return off <= n && len <= n - off;
}

static Elf64_Phdr phdr_at(const elf_view *v, unsigned i) {
  Elf64_Phdr ph;
  memcpy(&ph, v->p + v->eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
  return ph;
}

/* The file offset of [vaddr, vaddr + len) when one PT_LOAD holds it in
 * its file bytes; 0 otherwise (offset 0 is the ELF header, never a table). */
static uint64_t file_offset(const elf_view *v, uint64_t vaddr, uint64_t len) {
  for (unsigned i = 0; i < v->eh.e_phnum; i++) {
    Elf64_Phdr ph = phdr_at(v, i);
    if (ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
        vaddr - ph.p_vaddr > ph.p_filesz ||
        len > ph.p_filesz - (vaddr - ph.p_vaddr))
      continue;
    uint64_t off = ph.p_offset + (vaddr - ph.p_vaddr);
    return inside(off, len, v->n) ? off : 0;
  }
  return 0;
}

/* Whether [vaddr, vaddr + 8) lies in a writable PT_LOAD (the GOT and data
 * do; code does not: a text relocation is not bound). */
static int writable(const elf_view *v, uint64_t vaddr) {
  for (unsigned i = 0; i < v->eh.e_phnum; i++) {
    Elf64_Phdr ph = phdr_at(v, i);
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && vaddr >= ph.p_vaddr &&
        vaddr - ph.p_vaddr <= ph.p_memsz && ph.p_memsz - (vaddr - ph.p_vaddr) >= 8)
      return 1;
  }
  return 0;
}

static aotrun_status bad(const elf_view *v, aotrun_error *err,
                         const char *why) {
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "%s: cannot read its imports: %s", v->what, why);
}

/* One table of the dynamic section, converted to a file offset. */
static aotrun_status table(const elf_view *v, uint64_t vaddr, uint64_t len,
                           const char *name, uint64_t *out,
                           aotrun_error *err) {
  *out = 0;
  if (vaddr == 0 && len == 0) return AOTRUN_OK;
  *out = file_offset(v, vaddr, len);
  if (*out != 0) return AOTRUN_OK;
  char why[96];
  snprintf(why, sizeof why, "%s (%llu bytes) lies outside the file", name,
           (unsigned long long)len);
  return bad(v, err, why);
}

static aotrun_status read_dynamic(elf_view *v, aotrun_shim_plan *plan,
                                  aotrun_error *err) {
  uint64_t dyn = 0, dynsz = 0, strtab = 0, symtab = 0, rela = 0, jmprel = 0;
  for (unsigned i = 0; i < v->eh.e_phnum; i++) {
    Elf64_Phdr ph = phdr_at(v, i);
    if (ph.p_type == PT_DYNAMIC) {
      dyn = ph.p_offset;
      dynsz = ph.p_filesz;
    } else if (ph.p_type == PT_GNU_RELRO) {
      plan->relro_start = ph.p_vaddr;
      plan->relro_end = ph.p_vaddr + ph.p_memsz;
    }
  }
  if (dyn == 0 || !inside(dyn, dynsz, v->n))
    return bad(v, err, "no dynamic section inside the file");
  for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= dynsz; o += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    memcpy(&d, v->p + dyn + o, sizeof d);
    if (d.d_tag == DT_NULL) break;
    switch (d.d_tag) {
      case DT_STRTAB: strtab = d.d_un.d_ptr; break;
      case DT_STRSZ: v->strsz = d.d_un.d_val; break;
      case DT_SYMTAB: symtab = d.d_un.d_ptr; break;
      case DT_SYMENT: v->syment = d.d_un.d_val; break;
      case DT_RELA: rela = d.d_un.d_ptr; break;
      case DT_RELASZ: v->relasz = d.d_un.d_val; break;
      case DT_JMPREL: jmprel = d.d_un.d_ptr; break;
      case DT_PLTRELSZ: v->pltrelsz = d.d_un.d_val; break;
      default: break;
    }
  }
  if (v->syment == 0) v->syment = sizeof(Elf64_Sym);
  if (v->syment < sizeof(Elf64_Sym)) return bad(v, err, "DT_SYMENT too small");
  aotrun_status st = table(v, strtab, v->strsz, "DT_STRTAB", &v->strtab, err);
  if (st == AOTRUN_OK)
    st = table(v, symtab, symtab ? v->syment : 0, "DT_SYMTAB", &v->symtab, err);
  if (st == AOTRUN_OK)
    st = table(v, rela, rela ? v->relasz : 0, "DT_RELA", &v->rela, err);
  if (st == AOTRUN_OK)
    st = table(v, jmprel, jmprel ? v->pltrelsz : 0, "DT_JMPREL", &v->jmprel,
               err);
  return st;
}

/* The undefined aoti_torch_* symbol `index` names, or NULL. */
static const char *import_name(const elf_view *v, uint64_t index) {
  if (v->symtab == 0 || v->strtab == 0) return NULL;
  if (index > (v->n - v->symtab) / v->syment) return NULL;
  uint64_t off = v->symtab + index * v->syment;
  if (!inside(off, sizeof(Elf64_Sym), v->n)) return NULL;
  Elf64_Sym sym;
  memcpy(&sym, v->p + off, sizeof sym);
  if (sym.st_shndx != SHN_UNDEF || sym.st_name >= v->strsz) return NULL;
  const char *s = (const char *)v->p + v->strtab + sym.st_name;
  size_t room = (size_t)(v->strsz - sym.st_name);
  if (memchr(s, '\0', room) == NULL) return NULL;
  return strncmp(s, AOTRUN_SHIM_PREFIX, strlen(AOTRUN_SHIM_PREFIX)) == 0
             ? s
             : NULL;
}

/* 1: the slot holds S (+ A for absolute types); 0: a type we do not bind. */
static int bindable_type(uint16_t machine, uint32_t type, int *uses_addend) {
  *uses_addend = 1;
  if (machine == EM_X86_64) {
    if (type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT) {
      *uses_addend = 0;
      return 1;
    }
    return type == R_X86_64_64;
  }
  if (machine == EM_AARCH64)
    return type == R_AARCH64_GLOB_DAT || type == R_AARCH64_JUMP_SLOT ||
           type == R_AARCH64_ABS64;
  return 0;
}

static aotrun_status add_name(aotrun_shim_plan *plan, const char *name,
                              uint32_t *index) {
  for (size_t i = 0; i < plan->num_names; i++)
    if (strcmp(plan->names[i], name) == 0) {
      *index = (uint32_t)i;
      return AOTRUN_OK;
    }
  const char **grown =
      realloc(plan->names, (plan->num_names + 1) * sizeof *grown);
  if (grown == NULL) return AOTRUN_ERR_OUT_OF_MEMORY;
  plan->names = grown;
  plan->names[plan->num_names] = name;
  *index = (uint32_t)plan->num_names++;
  return AOTRUN_OK;
}

static aotrun_status add_slot(aotrun_shim_plan *plan, const Elf64_Rela *r,
                              int uses_addend, const char *name) {
  uint32_t index = 0;
  if (add_name(plan, name, &index) != AOTRUN_OK)
    return AOTRUN_ERR_OUT_OF_MEMORY;
  aotrun_shim_slot *grown =
      realloc(plan->slots, (plan->num_slots + 1) * sizeof *grown);
  if (grown == NULL) return AOTRUN_ERR_OUT_OF_MEMORY;
  plan->slots = grown;
  plan->slots[plan->num_slots++] = (aotrun_shim_slot){
      .vaddr = r->r_offset, .addend = uses_addend ? r->r_addend : 0,
      .name = index};
  return AOTRUN_OK;
}

static aotrun_status read_relocs(const elf_view *v, uint64_t off,
                                 uint64_t size, aotrun_shim_plan *plan,
                                 aotrun_error *err) {
  for (uint64_t o = 0; off != 0 && o + sizeof(Elf64_Rela) <= size;
       o += sizeof(Elf64_Rela)) {
    Elf64_Rela r;
    memcpy(&r, v->p + off + o, sizeof r);
    const char *name = import_name(v, ELF64_R_SYM(r.r_info));
    if (name == NULL) continue;
    int uses_addend = 0;
    uint32_t type = (uint32_t)ELF64_R_TYPE(r.r_info);
    char why[160];
    if (!bindable_type(v->eh.e_machine, type, &uses_addend)) {
      snprintf(why, sizeof why, "%s is imported through relocation type %u, "
               "which aotrun does not bind", name, (unsigned)type);
      return bad(v, err, why);
    }
    if (!writable(v, r.r_offset)) {
      snprintf(why, sizeof why, "%s is bound at 0x%llx, outside the "
               "writable segments (a text relocation)", name,
               (unsigned long long)r.r_offset);
      return bad(v, err, why);
    }
    if (add_slot(plan, &r, uses_addend, name) != AOTRUN_OK)
      return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                              "%s: out of memory reading its imports",
                              v->what);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_shim_plan_read(const void *bytes, size_t size,
                                    const char *what, aotrun_shim_plan *plan,
                                    aotrun_error *err) {
  memset(plan, 0, sizeof *plan);
  elf_view v = {.p = bytes, .n = size, .what = what ? what : "model library"};
  if (bytes == NULL || size < sizeof v.eh) return bad(&v, err, "not an ELF file");
  memcpy(&v.eh, bytes, sizeof v.eh);
  if (memcmp(v.eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      v.eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      v.eh.e_phentsize != sizeof(Elf64_Phdr) ||
      !inside(v.eh.e_phoff, (uint64_t)v.eh.e_phnum * sizeof(Elf64_Phdr), size))
    return bad(&v, err, "not a 64-bit ELF file with program headers");
  aotrun_status st = read_dynamic(&v, plan, err);
  if (st == AOTRUN_OK) st = read_relocs(&v, v.rela, v.relasz, plan, err);
  if (st == AOTRUN_OK) st = read_relocs(&v, v.jmprel, v.pltrelsz, plan, err);
  if (st != AOTRUN_OK) aotrun_shim_plan_free(plan);
  return st;
}

void aotrun_shim_plan_free(aotrun_shim_plan *plan) {
  if (plan == NULL) return;
  free(plan->slots);
  free((void *)plan->names);
  memset(plan, 0, sizeof *plan);
}

size_t aotrun_shim_plan_missing(const aotrun_shim_plan *plan,
                                aotrun_shim_lookup_fn lookup, void *ctx,
                                char *buf, size_t size) {
  size_t missing = 0, used = 0;
  if (size > 0) buf[0] = '\0';
  for (size_t i = 0; i < plan->num_names; i++) {
    if (lookup(ctx, plan->names[i]) != NULL) continue;
    missing++;
    if (size == 0 || used >= size) continue;
    int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                     plan->names[i]);
    used = n < 0 ? size : used + (size_t)n;
  }
  if (size > 8 && used >= size) snprintf(buf + size - 6, 6, ", ...");
  return missing;
}

/* glibc's rounding (_dl_protect_relro): the start down, the end down too;
 * the partial last page shares .data and stays writable. */
static void relro_pages(const aotrun_shim_plan *plan, uintptr_t base,
                        uintptr_t *start, uintptr_t *end) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  *start = (base + plan->relro_start) & ~(page - 1);
  *end = (base + plan->relro_end) & ~(page - 1);
}

/* Counts the slots whose value differs from the shim's. */
static size_t count_differing(const aotrun_shim_plan *plan, uintptr_t base,
                              void *const *targets) {
  size_t n = 0;
  for (size_t i = 0; i < plan->num_slots; i++) {
    const aotrun_shim_slot *s = &plan->slots[i];
    uintptr_t want = (uintptr_t)targets[s->name] + (uintptr_t)s->addend;
    uintptr_t have;
    memcpy(&have, (const void *)(base + s->vaddr), sizeof have);
    n += have != want;
  }
  return n;
}

static void write_slots(const aotrun_shim_plan *plan, uintptr_t base,
                        void *const *targets) {
  for (size_t i = 0; i < plan->num_slots; i++) {
    const aotrun_shim_slot *s = &plan->slots[i];
    uintptr_t want = (uintptr_t)targets[s->name] + (uintptr_t)s->addend;
    memcpy((void *)(base + s->vaddr), &want, sizeof want);
  }
}

static aotrun_status bind_all(const aotrun_shim_plan *plan, uintptr_t base,
                              void *const *targets, const char *what,
                              size_t *rebound, aotrun_error *err) {
  *rebound = count_differing(plan, base, targets);
  if (*rebound == 0) return AOTRUN_OK; /* the usual case: nothing to write */
  uintptr_t start = 0, end = 0;
  relro_pages(plan, base, &start, &end);
  int relro = end > start;
  if (relro && mprotect((void *)start, end - start, PROT_READ | PROT_WRITE))
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "%s: cannot open its RELRO pages to bind %zu "
                            "imports to the shim library (mprotect)",
                            what, *rebound);
  write_slots(plan, base, targets);
  if (relro) (void)mprotect((void *)start, end - start, PROT_READ);
  return AOTRUN_OK;
}

aotrun_status aotrun_shim_plan_bind(const aotrun_shim_plan *plan,
                                    uintptr_t base,
                                    aotrun_shim_lookup_fn lookup, void *ctx,
                                    const char *what, size_t *rebound,
                                    aotrun_error *err) {
  *rebound = 0;
  if (plan->num_slots == 0) return AOTRUN_OK;
  void **targets = calloc(plan->num_names, sizeof *targets);
  if (targets == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "%s: out of memory binding its imports", what);
  aotrun_status st = AOTRUN_OK;
  for (size_t i = 0; i < plan->num_names && st == AOTRUN_OK; i++) {
    targets[i] = lookup(ctx, plan->names[i]);
    if (targets[i] == NULL)
      st = aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "%s imports %s, which the shim library does not "
                            "export", what, plan->names[i]);
  }
  if (st == AOTRUN_OK) st = bind_all(plan, base, targets, what, rebound, err);
  free(targets);
  return st;
}
