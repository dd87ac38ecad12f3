/*
 * test_output_lend.c: the shim's allocation numbering and lending of a
 * caller's buffers (aotrun_shim_lend_begin, aotrun_shim_tensor_alloc_info),
 * on CPU tensors: which allocation gets a lent buffer, which requests do
 * not, that lent memory is never freed, the live count, and what
 * alloc_info says of views, offsets and earlier sessions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

#define F32 6 /* ScalarType::Float */
#define F64 7
#define CPU 0

static AtenTensorHandle empty(int64_t rows, int64_t cols) {
  int64_t sizes[2] = {rows, cols}, strides[2] = {cols, 1};
  AtenTensorHandle h = NULL;
  ASSERT_OK(aoti_torch_empty_strided(2, sizes, strides, F32, CPU, 0, &h));
  return h;
}

static void *data_of(AtenTensorHandle h) {
  void *p = NULL;
  ASSERT_OK(aoti_torch_get_data_ptr(h, &p));
  return p;
}

static aotrun_shim_alloc_info info_of(AtenTensorHandle h) {
  aotrun_shim_alloc_info i;
  aotrun_shim_tensor_alloc_info(h, &i);
  return i;
}

static const int64_t k23[2] = {2, 3};

static aotrun_shim_lend entry(int64_t seq, void *data) {
  return (aotrun_shim_lend){seq, F32, CPU, 0, 2, k23, data, 0};
}

static void test_numbering(void **state) {
  (void)state;
  AtenTensorHandle before = empty(2, 3);
  assert_int_equal(info_of(before).seq, -1); /* no session yet */
  aotrun_shim_lend_begin(NULL, 0, NULL);
  AtenTensorHandle a = empty(2, 3), b = empty(4, 4), c = empty(1, 1);
  aotrun_shim_lend_end();
  AtenTensorHandle after = empty(2, 3);
  assert_int_equal(info_of(a).seq, 0);
  assert_int_equal(info_of(b).seq, 1);
  assert_int_equal(info_of(c).seq, 2);
  assert_int_equal(info_of(after).seq, -1);
  aotrun_shim_alloc_info i = info_of(a);
  assert_true(i.sole && i.whole && !i.lent);
  /* A new session: the old numbers no longer count. */
  aotrun_shim_lend_begin(NULL, 0, NULL);
  AtenTensorHandle d = empty(2, 3);
  aotrun_shim_lend_end();
  assert_int_equal(info_of(d).seq, 0);
  assert_int_equal(info_of(a).seq, -1);
  AtenTensorHandle all[] = {before, a, b, c, after, d};
  for (size_t k = 0; k < 6; k++) aoti_torch_delete_tensor_object(all[k]);
}

static void test_lends_matching_allocation(void **state) {
  (void)state;
  _Alignas(64) float buf[6] = {0};
  int64_t live = 0;
  aotrun_shim_lend e[1] = {entry(1, buf)};
  aotrun_shim_lend_begin(e, 1, &live);
  AtenTensorHandle a = empty(2, 3), b = empty(2, 3), c = empty(2, 3);
  aotrun_shim_lend_end();
  assert_int_equal(e[0].lent, 1);
  assert_ptr_equal(data_of(b), buf);
  assert_ptr_not_equal(data_of(a), buf);
  assert_ptr_not_equal(data_of(c), buf);
  aotrun_shim_alloc_info i = info_of(b);
  assert_int_equal(i.seq, 1);
  assert_true(i.lent && i.sole && i.whole);
  assert_false(info_of(a).lent);
  assert_false(aotrun_shim_tensor_owns_memory(b));
  assert_int_equal(live, 1);
  ((float *)data_of(b))[5] = 7.0f; /* the model writes the caller's buffer */
  assert_true(buf[5] == 7.0f);
  /* Deleting it frees nothing of the caller's (ASan would see a bad free)
   * and drops the count. */
  aoti_torch_delete_tensor_object(b);
  assert_int_equal(live, 0);
  aoti_torch_delete_tensor_object(a);
  aoti_torch_delete_tensor_object(c);
}

/* A view keeps the lent buffer referenced: the count says so. */
static void test_live_count_sees_a_kept_view(void **state) {
  (void)state;
  _Alignas(64) float buf[6];
  int64_t live = 0;
  aotrun_shim_lend e[1] = {entry(0, buf)};
  aotrun_shim_lend_begin(e, 1, &live);
  AtenTensorHandle a = empty(2, 3);
  aotrun_shim_lend_end();
  int64_t one = 1;
  AtenTensorHandle v = NULL;
  ASSERT_OK(aoti_torch__reinterpret_tensor(a, 1, &one, &one, 2, &v));
  aotrun_shim_alloc_info ia = info_of(a), iv = info_of(v);
  assert_false(ia.sole); /* the view shares the storage */
  assert_true(iv.lent);
  assert_false(iv.whole); /* offset 2, one element */
  aoti_torch_delete_tensor_object(a);
  assert_int_equal(live, 1);
  aoti_torch_delete_tensor_object(v);
  assert_int_equal(live, 0);
}

/* Requests that differ from the entry in dtype, bytes or layout get their
 * own memory; the ordinal still advances. */
static void test_mismatches_not_lent(void **state) {
  (void)state;
  _Alignas(64) float buf[8];
  int64_t k24[2] = {2, 4}, st24[2] = {4, 1};
  int64_t st21[2] = {2, 1};    /* [2, 3] over 5 elements: overlapping */
  int64_t st64[2] = {3, 1};
  int64_t five = 5, unit = 1;  /* fewer bytes */
  int64_t k32[2] = {3, 2}, col[2] = {1, 3}; /* the bytes, column-major */
  aotrun_shim_lend e[5] = {entry(0, buf), entry(1, buf), entry(2, buf),
                           entry(3, buf), entry(4, buf)};
  aotrun_shim_lend_begin(e, 5, NULL);
  AtenTensorHandle h[5] = {0};
  ASSERT_OK(aoti_torch_empty_strided(2, k24, st24, F32, CPU, 0, &h[0]));
  ASSERT_OK(aoti_torch_empty_strided(2, k23, st21, F32, CPU, 0, &h[1]));
  ASSERT_OK(aoti_torch_empty_strided(2, k23, st64, F64, CPU, 0, &h[2]));
  ASSERT_OK(aoti_torch_empty_strided(1, &five, &unit, F32, CPU, 0, &h[3]));
  ASSERT_OK(aoti_torch_empty_strided(2, k32, col, F32, CPU, 0, &h[4]));
  aotrun_shim_lend_end();
  for (int k = 0; k < 5; k++) {
    assert_int_equal(e[k].lent, 0);
    assert_ptr_not_equal(data_of(h[k]), buf);
    assert_int_equal(info_of(h[k]).seq, k);
    aoti_torch_delete_tensor_object(h[k]);
  }
}

/* The entry's bytes in another dense shape are lent: a wrapper allocates
 * [1, 512] and returns it as the output [1, 1, 512] (reinterpret_tensor of
 * a reused buffer). */
static void test_same_bytes_in_another_shape_lent(void **state) {
  (void)state;
  _Alignas(64) float b0[6], b1[6], b2[6];
  int64_t k32[2] = {3, 2}, st32[2] = {2, 1};
  int64_t six = 6, unit = 1;
  int64_t k1x6[3] = {1, 1, 6}, st1x6[3] = {99, 6, 1}; /* size-1 dims free */
  aotrun_shim_lend e[3] = {entry(0, b0), entry(1, b1), entry(2, b2)};
  aotrun_shim_lend_begin(e, 3, NULL);
  AtenTensorHandle h[3] = {0};
  ASSERT_OK(aoti_torch_empty_strided(2, k32, st32, F32, CPU, 0, &h[0]));
  ASSERT_OK(aoti_torch_empty_strided(1, &six, &unit, F32, CPU, 0, &h[1]));
  ASSERT_OK(aoti_torch_empty_strided(3, k1x6, st1x6, F32, CPU, 0, &h[2]));
  aotrun_shim_lend_end();
  void *want[3] = {b0, b1, b2};
  for (int k = 0; k < 3; k++) {
    assert_int_equal(e[k].lent, 1);
    assert_ptr_equal(data_of(h[k]), want[k]);
    aotrun_shim_alloc_info i = info_of(h[k]);
    assert_true(i.lent && i.whole && i.sole);
    aoti_torch_delete_tensor_object(h[k]);
  }
}

/* Entries whose ordinal passed without a match are skipped, later ones
 * still lend; a failed request takes no number twice. */
static void test_entries_in_order(void **state) {
  (void)state;
  _Alignas(64) float b0[6], b2[6];
  aotrun_shim_lend e[2] = {entry(0, b0), entry(2, b2)};
  e[0].ndim = 1; /* never matches */
  aotrun_shim_lend_begin(e, 2, NULL);
  AtenTensorHandle a = empty(2, 3), b = empty(2, 3), c = empty(2, 3);
  aotrun_shim_lend_end();
  assert_int_equal(e[0].lent, 0);
  assert_int_equal(e[1].lent, 1);
  assert_ptr_equal(data_of(c), b2);
  aoti_torch_delete_tensor_object(a);
  aoti_torch_delete_tensor_object(b);
  aoti_torch_delete_tensor_object(c);
  /* After end nothing is lent. */
  AtenTensorHandle d = empty(2, 3);
  assert_ptr_not_equal(data_of(d), b2);
  aoti_torch_delete_tensor_object(d);
}

static void test_info_of_nothing(void **state) {
  (void)state;
  aotrun_shim_alloc_info i = info_of(NULL);
  assert_int_equal(i.seq, -1);
  assert_false(i.lent || i.sole || i.whole);
  AtenTensorHandle u = NULL;
  ASSERT_OK(aoti_torch_new_uninitialized_tensor(&u));
  i = info_of(u);
  assert_int_equal(i.seq, -1);
  aoti_torch_delete_tensor_object(u);
  /* Another handle on the same impl: not sole. */
  AtenTensorHandle a = empty(2, 3), a2 = NULL;
  ASSERT_OK(aoti_torch_new_tensor_handle(a, &a2));
  assert_false(info_of(a).sole);
  aoti_torch_delete_tensor_object(a2);
  assert_true(info_of(a).sole);
  aoti_torch_delete_tensor_object(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_numbering),
      cmocka_unit_test(test_lends_matching_allocation),
      cmocka_unit_test(test_live_count_sees_a_kept_view),
      cmocka_unit_test(test_mismatches_not_lent),
      cmocka_unit_test(test_same_bytes_in_another_shape_lent),
      cmocka_unit_test(test_entries_in_order),
      cmocka_unit_test(test_info_of_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
