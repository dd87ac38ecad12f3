/* scatter_engine.c: the sort engine of the scatter family, for reductions
 * whose result depends on the order of the values (float sum, prod, mean;
 * "last write wins" where shared memory cannot hold a line's winners).
 *
 *   general mode  one pair per item: key = the target's offset in out,
 *                 value = the src element's bits (carried through the sort,
 *                 so the fold reads contiguously) or its offset in src.
 *   row mode      index constant along every dim but dim (an expanded edge
 *                 list `dst[:, None].expand(E, F)`): one pair per position
 *                 e along dim, key = index value, value = e; each run then
 *                 reduces whole rows (column q of item e is src[qsrc[q] +
 *                 e * src_stride]), coalesced over the columns.
 *
 * The shared stable radix sort keeps index order within a target; the
 * segment kernels fold each run in that order (scatter_kernels.h). */
#include <stdio.h>
#include <string.h>

#include "shim_lib/dtype.h"
#include "shim_lib/fallback/scatter_plan.h"

#define GENERAL_CHUNK 8 /* items per chunk: a 32-byte sector of u32 keys */
#define ROW_CHUNK 16
#define FAN 64

/* One scratch tensor cut into 256-byte aligned pieces. */
typedef struct carve {
  size_t used;
  int overflow;
} carve;

static size_t carve_take(carve *c, uint64_t count, uint64_t size) {
  uint64_t bytes;
  size_t at = c->used;
  if (__builtin_mul_overflow(count, size, &bytes) ||
      __builtin_add_overflow((uint64_t)c->used, bytes + 255u, &bytes)) {
    c->overflow = 1;
    return 0;
  }
  c->used = (size_t)(bytes & ~(uint64_t)255u);
  return at;
}

static int row_mode(const aotrun_fb_scatter_items *it) {
  if (it->numel == it->sizes[it->dim]) return 0; /* one column */
  for (int32_t d = 0; d < it->ndim; d++)
    if (d != it->dim && it->index_strides[d] != 0) return 0;
  return 1;
}

/* Offset of the last element + 1 (0 when empty). */
static uint64_t span_of(const aotrun_fb_tensor *t) {
  int overflow = 0;
  if (t->ndim > 0 && aotrun_fb_numel(t->sizes, t->ndim, &overflow) == 0)
    return 0;
  uint64_t last = 0;
  for (int64_t d = 0; d < t->ndim; d++)
    last += (uint64_t)(t->sizes[d] - 1) * (uint64_t)t->strides[d];
  return last + 1;
}

typedef struct sort_bufs {
  void *keys_in, *keys_out, *vals_in, *vals_out;
  int key64, val64, carried;
  int64_t n;
  uint64_t sentinel;
} sort_bufs;

static AOTITorchError alloc_pairs(const aotrun_fb_scatter_plan *p,
                                  aotrun_fb_temps *temps, sort_bufs *b) {
  const uint64_t kb = b->key64 ? 8 : 4, vb = b->val64 ? 8 : 4;
  carve c = {0, 0};
  size_t ki = carve_take(&c, (uint64_t)b->n, kb);
  size_t ko = carve_take(&c, (uint64_t)b->n, kb);
  size_t vi = carve_take(&c, (uint64_t)b->n, vb);
  size_t vo = carve_take(&c, (uint64_t)b->n, vb);
  if (c.overflow)
    return aotrun_shim_fail("%s: %lld items are too many to sort", p->op,
                            (long long)b->n);
  char *base = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(temps, c.used, (void **)&base);
  if (err) return err;
  b->keys_in = base + ki;
  b->keys_out = base + ko;
  b->vals_in = base + vi;
  b->vals_out = base + vo;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError launched(const aotrun_fb_scatter_plan *p,
                               const char *what, cudaError_t e) {
  if (e == cudaSuccess) return AOTI_TORCH_SUCCESS;
  return aotrun_shim_fail("%s: launching %s failed: %s", p->op, what,
                          cudaGetErrorString(e));
}

/* The segment scratch: level partials, tails and (row mode) columns. */
static AOTITorchError alloc_segments(const aotrun_fb_scatter_plan *p,
                                     aotrun_fb_temps *temps, size_t acc,
                                     aotrun_fb_segments *s,
                                     int64_t **qcols) {
  int64_t nchunks = (s->n + s->chunk - 1) / s->chunk;
  s->fan = FAN;
  s->count[0] = nchunks;
  s->levels = 1;
  while (s->count[s->levels - 1] > FAN &&
         s->levels < AOTRUN_FB_SEG_MAX_LEVELS) {
    s->count[s->levels] = (s->count[s->levels - 1] + FAN - 1) / FAN;
    s->levels++;
  }
  carve c = {0, 0};
  size_t part[AOTRUN_FB_SEG_MAX_LEVELS], pn[AOTRUN_FB_SEG_MAX_LEVELS],
      pm[AOTRUN_FB_SEG_MAX_LEVELS];
  for (int l = 0; l < s->levels; l++) {
    uint64_t entries = (uint64_t)s->count[l] * (uint64_t)s->q;
    part[l] = carve_take(&c, entries, acc);
    pn[l] = carve_take(&c, (uint64_t)s->count[l], 8);
    pm[l] = carve_take(&c, (uint64_t)s->count[l], 1);
  }
  size_t tail = carve_take(&c, (uint64_t)nchunks * (uint64_t)s->q, acc);
  size_t tail_n = carve_take(&c, (uint64_t)nchunks, 8);
  size_t cols = carve_take(&c, qcols ? 2 * (uint64_t)s->q : 0, 8);
  if (c.overflow)
    return aotrun_shim_fail("%s: the reduction of %lld items needs too much "
                            "scratch memory",
                            p->op, (long long)s->n);
  char *base = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(temps, c.used, (void **)&base);
  if (err) return err;
  for (int l = 0; l < s->levels; l++) {
    s->part[l] = base + part[l];
    s->part_n[l] = (int64_t *)(base + pn[l]);
    s->part_more[l] = (uint8_t *)(base + pm[l]);
  }
  s->tail = base + tail;
  s->tail_n = (int64_t *)(base + tail_n);
  if (qcols) *qcols = (int64_t *)(base + cols);
  return AOTI_TORCH_SUCCESS;
}

/* Pairs of the general mode, written by one kernel. */
static AOTITorchError general_pairs(const aotrun_fb_scatter_plan *p,
                                    const aotrun_fb_scatter_items *it,
                                    const aotrun_fb_scatter_report *r,
                                    aotrun_fb_temps *temps,
                                    cudaStream_t stream, sort_bufs *b) {
  b->n = it->numel;
  b->sentinel = span_of(&p->out);
  b->key64 = b->sentinel > 0xffffffffu;
  b->carried = p->self.elem_size <= 8;
  b->val64 = b->carried ? p->self.elem_size == 8
                        : span_of(&p->src) > 0xffffffffu;
  AOTITorchError err = alloc_pairs(p, temps, b);
  if (err) return err;
  return launched(p, "the key kernel",
                  aotrun_fb_scatter_item_keys(
                      it, p->self.elem_size, b->sentinel, b->carried,
                      b->keys_in, b->key64, b->vals_in, b->val64, r, stream));
}

static AOTITorchError row_pairs(const aotrun_fb_scatter_plan *p,
                                const aotrun_fb_scatter_items *it,
                                const aotrun_fb_scatter_report *r,
                                aotrun_fb_temps *temps, cudaStream_t stream,
                                sort_bufs *b) {
  b->n = it->sizes[it->dim];
  b->sentinel = (uint64_t)it->dim_size;
  b->key64 = b->sentinel > 0xffffffffu;
  b->carried = 0;
  b->val64 = (uint64_t)b->n > 0xffffffffu;
  AOTITorchError err = alloc_pairs(p, temps, b);
  if (err) return err;
  return launched(p, "the row key kernel",
                  aotrun_fb_scatter_row_keys(it, b->keys_in, b->key64,
                                             b->vals_in, b->val64, r,
                                             stream));
}

/* Lines per block of the tile engine (scatter_kernels.h), 0 where it does
 * not apply or would not pay: a line must fill at least a quarter of the
 * tile (shorter lines would sort mostly padding), and (line, target) keys
 * stay within 16 bits (four radix passes in shared memory). */
static int tile_lines(const aotrun_fb_scatter_plan *p,
                      const aotrun_fb_scatter_items *it, int32_t reduce) {
  enum { THREADS = AOTRUN_FB_SCATTER_TILE_THREADS,
         ITEMS = AOTRUN_FB_SCATTER_TILE_ITEMS,
         PER_THREAD = ITEMS / THREADS };
  if (reduce != AOTRUN_FB_SEG_SUM && reduce != AOTRUN_FB_SEG_PROD &&
      reduce != AOTRUN_FB_SEG_MEAN)
    return 0;
  if (p->self.elem_size > 4 || p->self.dtype == AOTRUN_DT_BOOL ||
      it->numel <= 0 || it->dim_size < 1)
    return 0;
  const int64_t len = it->sizes[it->dim];
  const int64_t groups = (len + PER_THREAD - 1) / PER_THREAD;
  if (len < 1 || groups > THREADS) return 0;
  int64_t lines = THREADS / groups;
  const int64_t nlines = it->numel / len;
  if (lines > AOTRUN_FB_SCATTER_TILE_MAX_LINES)
    lines = AOTRUN_FB_SCATTER_TILE_MAX_LINES;
  if (lines > nlines) lines = nlines;
  if (lines > 65535 / it->dim_size) lines = 65535 / it->dim_size;
  if (lines < 1 || lines * len < ITEMS / 4) return 0;
  return (int)lines;
}

AOTITorchError aotrun_fb_scatter_sorted(const aotrun_fb_scatter_plan *p,
                                        const aotrun_fb_scatter_items *it,
                                        int32_t reduce,
                                        const aotrun_fb_scatter_report *r,
                                        aotrun_fb_temps *temps,
                                        cudaStream_t stream) {
  const size_t acc =
      aotrun_fb_segment_acc_size(reduce, p->self.dtype,
                                 (int64_t)p->self.elem_size);
  if (acc == 0)
    return aotrun_shim_fail("%s: internal error: no reduction %d for dtype %d",
                            p->op, (int)reduce, (int)p->self.dtype);
  const int rows = row_mode(it);
  const int lines = rows ? 0 : tile_lines(p, it, reduce);
  if (lines)
    return launched(p, "the tile kernel",
                    aotrun_fb_scatter_tiles(it, reduce, p->self.dtype,
                                            (int64_t)p->self.elem_size,
                                            p->include_self, lines, r,
                                            stream));
  sort_bufs b;
  memset(&b, 0, sizeof b);
  AOTITorchError err = rows ? row_pairs(p, it, r, temps, stream, &b)
                            : general_pairs(p, it, r, temps, stream, &b);
  if (err) return err;
  aotrun_fb_sort_pairs_args sa = {b.keys_in,           b.keys_out,
                                  b.vals_in,           b.vals_out,
                                  b.key64 ? 8 : 4,     b.val64 ? 8 : 4,
                                  b.n,                 aotrun_fb_key_bits(b.sentinel),
                                  0};
  err = aotrun_fb_sort(temps, "the scatter targets", &sa, stream);
  if (err) return err;

  aotrun_fb_segments s;
  memset(&s, 0, sizeof s);
  s.keys = b.keys_out;
  s.vals = b.vals_out;
  s.key64 = b.key64;
  s.val64 = b.val64;
  s.carried = b.carried;
  s.reduce = reduce;
  s.dtype = p->self.dtype;
  s.include_self = reduce == AOTRUN_FB_SEG_ASSIGN ? 0 : p->include_self;
  s.elem_size = (int64_t)p->self.elem_size;
  s.n = b.n;
  s.chunk = rows ? ROW_CHUNK : GENERAL_CHUNK;
  s.q = rows ? it->numel / b.n : 1;
  s.sentinel = b.sentinel;
  s.src = it->src;
  s.out = it->out;
  s.src_step = rows ? it->src_strides[it->dim] : 1;
  s.out_step = rows ? it->out_strides[it->dim] : 1;
  int64_t *cols = NULL;
  err = alloc_segments(p, temps, acc, &s, rows ? &cols : NULL);
  if (err) return err;
  if (rows) {
    s.qsrc = cols;
    s.qout = cols + s.q;
    err = launched(p, "the column kernel",
                   aotrun_fb_scatter_columns(it, cols, cols + s.q, stream));
    if (err) return err;
  }
  return launched(p, "the segment kernels",
                  aotrun_fb_scatter_segments(&s, stream));
}
