/*
 * test_shim_binding.c: reading a model library's aoti_torch_* import slots
 * from its bytes (aot_loader/shim_binding.h) on the fixture models (lazy
 * and -z now builds), the missing-name list, and malformed input: a
 * header alone, a relocation table pointing outside the file.
 *
 * argv: fixture_model.so fixture_model_now.so
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/shim_binding.h"
#include "testing/loader/loader_test_util.h"

static test_bytes g_lazy, g_now;

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

static int has_name(const aotrun_shim_plan *p, const char *name) {
  for (size_t i = 0; i < p->num_names; i++)
    if (strcmp(p->names[i], name) == 0) return 1;
  return 0;
}

static void test_fixture_imports(void **state) {
  (void)state;
  const test_bytes *libs[2] = {&g_lazy, &g_now};
  for (int k = 0; k < 2; k++) {
    aotrun_shim_plan p;
    aotrun_error err;
    assert_int_equal(aotrun_shim_plan_read(libs[k]->data, libs[k]->size,
                                           "forward.so", &p, &err),
                     AOTRUN_OK);
    assert_int_equal(p.num_names, 16); /* nm -D --undefined-only */
    assert_true(p.num_slots >= p.num_names);
    assert_true(has_name(&p, "aoti_torch_empty_strided"));
    assert_true(has_name(&p, "aoti_torch_dtype_float32"));
    assert_false(has_name(&p, "malloc")); /* only aoti_torch_* */
    for (size_t i = 0; i < p.num_slots; i++) {
      assert_true(p.slots[i].name < p.num_names);
      assert_true(p.slots[i].vaddr < libs[k]->size + 0x10000);
    }
    if (libs[k] == &g_now) { /* -z now: the GOT is RELRO */
      assert_true(p.relro_end > p.relro_start);
      for (size_t i = 0; i < p.num_slots; i++)
        assert_true(p.slots[i].vaddr >= p.relro_start &&
                    p.slots[i].vaddr < p.relro_end);
    }
    aotrun_shim_plan_free(&p);
    aotrun_shim_plan_free(&p); /* twice is fine */
  }
}

/* "Exports" every name but those containing `ctx`. */
static void *lookup_except(void *ctx, const char *name) {
  return strstr(name, (const char *)ctx) ? NULL : (void *)name;
}

static void test_missing_names_listed(void **state) {
  (void)state;
  aotrun_shim_plan p;
  aotrun_error err;
  assert_int_equal(aotrun_shim_plan_read(g_lazy.data, g_lazy.size, "f.so",
                                         &p, &err),
                   AOTRUN_OK);
  char buf[512];
  assert_int_equal(aotrun_shim_plan_missing(&p, lookup_except, "get_d", buf,
                                            sizeof buf),
                   4); /* get_data_ptr, get_device_type, get_dim, get_dtype */
  assert_contains(buf, "aoti_torch_get_data_ptr");
  assert_contains(buf, "aoti_torch_get_dim, ");
  assert_int_equal(aotrun_shim_plan_missing(&p, lookup_except, "zzz", buf,
                                            sizeof buf),
                   0);
  assert_string_equal(buf, "");
  char small[40];
  assert_int_equal(aotrun_shim_plan_missing(&p, lookup_except, "aoti", small,
                                            sizeof small),
                   16);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_string_equal(small + sizeof small - 6, ", ...");
  /* bind refuses a name the lookup does not have, naming it. */
  size_t rebound = 7;
  assert_int_equal(aotrun_shim_plan_bind(&p, 0, lookup_except, "get_dim",
                                         "f.so", &rebound, &err),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_contains(err.message, "f.so imports aoti_torch_get_dim, which the "
                               "shim library does not export");
  assert_int_equal(rebound, 0);
  aotrun_shim_plan_free(&p);
}

static void test_header_only_refused(void **state) {
  (void)state;
  aotrun_shim_plan p;
  aotrun_error err;
  assert_int_equal(aotrun_shim_plan_read(g_lazy.data, sizeof(Elf64_Ehdr),
                                         "f.so", &p, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "f.so: cannot read its imports");
  assert_int_equal(aotrun_shim_plan_read("abc", 3, "f.so", &p, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(p.num_slots, 0);
}

/* DT_JMPREL pointed far outside the file: refused, naming the table. */
static void test_table_outside_the_file(void **state) {
  (void)state;
  unsigned char *copy = malloc(g_lazy.size);
  assert_non_null(copy);
  memcpy(copy, g_lazy.data, g_lazy.size);
  Elf64_Ehdr eh;
  memcpy(&eh, copy, sizeof eh);
  int patched = 0;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, copy + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_DYNAMIC) continue;
    for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= ph.p_filesz;
         o += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      memcpy(&d, copy + ph.p_offset + o, sizeof d);
      if (d.d_tag != DT_JMPREL) continue;
      d.d_un.d_ptr = 0x7fffffff00ull;
      memcpy(copy + ph.p_offset + o, &d, sizeof d);
      patched = 1;
    }
  }
  assert_true(patched);
  aotrun_shim_plan p;
  aotrun_error err;
  assert_int_equal(aotrun_shim_plan_read(copy, g_lazy.size, "f.so", &p, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "DT_JMPREL");
  assert_contains(err.message, "lies outside the file");
  free(copy);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s fixture_model.so fixture_model_now.so\n",
            argv[0]);
    return 2;
  }
  g_lazy = test_read_file(argv[1]);
  g_now = test_read_file(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_imports),
      cmocka_unit_test(test_missing_names_listed),
      cmocka_unit_test(test_header_only_refused),
      cmocka_unit_test(test_table_outside_the_file),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  free(g_lazy.data);
  free(g_now.data);
  return failed;
}
