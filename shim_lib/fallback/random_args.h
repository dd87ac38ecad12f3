/*
 * random_args.h: the argument checks the random ops share (generator,
 * dtype / layout / device / pin_memory, sizes, randint's range) and the
 * running of one random job (random_run.c). The checks make no CUDA call,
 * so their errors are reported on machines without a GPU.
 */
#ifndef AOTRUN_FALLBACK_RANDOM_ARGS_H
#define AOTRUN_FALLBACK_RANDOM_ARGS_H

#include <stdint.h>

#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/random_kernels.h"

/* What a factory op (rand, randn, randint*, randperm) makes. */
typedef struct aotrun_fb_rand_factory {
  int32_t dtype;
  int32_t device; /* CUDA device index (resolved) */
  int64_t ndim;
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t numel;
} aotrun_fb_rand_factory;

/* Which dtypes an op accepts. */
enum {
  AOTRUN_FB_RAND_FLOATS = 1,   /* float32, float64, float16, bfloat16 */
  AOTRUN_FB_RAND_INTEGERS = 2, /* + bool, uint8..uint64, int8..int64 */
  AOTRUN_FB_RAND_PERM = 3,     /* randperm: floats, int8..int64, uint8 */
};

/* 1 when dtype is float32, float64, float16 or bfloat16. */
AOTRUN_FB_HIDDEN int aotrun_fb_rand_is_float(int32_t dtype);
/* 1 when the random kernels can store integers as dtype (the floats, bool,
 * int8..int64, uint8..uint64). */
AOTRUN_FB_HIDDEN int aotrun_fb_rand_is_storable(int32_t dtype);

/* Refuses a torch Generator: `generator` NULL or *generator NULL is the
 * default generator. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_check_generator(
    const char *op, AtenGeneratorHandle *generator);

/* dtype (NULL: default_dtype) in the set `allowed`; layout NULL or strided;
 * device NULL (the current CUDA device) or cuda with device_index -1 (the
 * current device) or >= 0; pin_memory NULL or false. Fills f->dtype and
 * f->device. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_options(
    const char *op, const int32_t *dtype, int32_t default_dtype, int allowed,
    const int32_t *layout, const int32_t *device, int32_t device_index,
    const int32_t *pin_memory, aotrun_fb_rand_factory *f);

/* size[0..size_len) (size may be NULL when size_len is 0): at most
 * AOTRUN_FB_MAX_DIMS dims, none negative, numel fits int64. Fills f->ndim,
 * f->sizes, f->numel. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_sizes(
    const char *op, const int64_t *size, int64_t size_len,
    aotrun_fb_rand_factory *f);

/* low < high, and low and high - 1 representable in dtype (ATen's
 * check_from_to_in_range). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_randint_check_range(
    const char *op, int64_t low, int64_t high, int32_t dtype);

/* A new contiguous CUDA tensor of f's shape, dtype and device. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_new_output(
    const char *op, const aotrun_fb_rand_factory *f, AtenTensorHandle *ret,
    void **data);

/* ---- random_run.c ---- */

/* Elements per Philox block of the job: 2 for float64 and for randint
 * ranges over 2^32 and 8-byte randperm keys, else 4. */
AOTRUN_FB_HIDDEN int32_t aotrun_fb_rand_per_block(const aotrun_fb_rand_job *j);

/* Sets j->per_block and queues the job on stream, with its ticket from
 * temps when it needs one. j->state must be set (aotrun_fb_random_state,
 * called before any other CUDA work of the op so a seeding failure leaves
 * nothing behind) and its device current. A job without elements queues
 * nothing. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_run(aotrun_fb_temps *temps,
                                                   aotrun_fb_rand_job *j,
                                                   cudaStream_t stream);

/* The factory ops' common body: seeds cuda:<f->device> (when there are
 * elements), makes a new contiguous output of f's shape and dtype, fills
 * it with job j (kind and parameters set; out, n, ndim, state filled here)
 * on the current stream. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_fill_new(
    const char *op, const aotrun_fb_rand_factory *f, aotrun_fb_rand_job *j,
    AtenTensorHandle *ret0);

/* Fills an existing CUDA tensor t (any strides, already checked) in place
 * with job j (kind and parameters set; for BERNOULLI_P, p and p_strides
 * expanded to t's sizes): seeds, enters t's device, runs. A dense t is
 * filled in storage order; others are walked (dims merged first). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_fill_tensor(
    const char *op, const aotrun_fb_tensor *t, aotrun_fb_rand_job *j);

/* uniform / normal_functional: a new tensor like self (the sizes, dtype
 * and device of self, at::empty_like's strides) filled with job j. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_rand_fill_like(
    const char *op, const aotrun_fb_tensor *self, aotrun_fb_rand_job *j,
    AtenTensorHandle *ret0);

/* ---- uniform.c ---- */

/* ATen's uniform_ checks for dtype (from and to finite in the dtype,
 * from <= to, to - from <= the dtype's max) and the job's parameters:
 * a = from, b = to, c = to - from, rounded as ATen rounds them. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_uniform_params(
    const char *op, int32_t dtype, double from, double to,
    aotrun_fb_rand_job *j);

#endif /* AOTRUN_FALLBACK_RANDOM_ARGS_H */
