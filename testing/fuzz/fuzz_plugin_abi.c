/*
 * fuzz_plugin_abi.c: libFuzzer target for the plugin ABI with hostile
 * arguments: the host library's entry points (plugin_api/aotrun_host.h) and
 * the backend table of the CPU reference plugin (cpu_ref, built with the
 * same sanitizers by run_fuzz.sh), on the C fixture program.
 *
 * The input is a byte program: up to 48 operations, each picking a call
 * (open a plugin, registry, accessors, entry symbol, init, execute, io info,
 * options, last_error, host methods with swap, log levels, named data) and
 * then its arguments: NULL pointers, huge counts (with NULL arrays, or with
 * real arrays whose count the callee must check first), bad DLTensor fields
 * (ndim, shape, strides, dtype, device, byte_offset, NULL data), wrong
 * struct sizes and versions (host api, io info), bad option names and
 * values, a host whose named-data service misbehaves. Data buffers are
 * always as large as the tensor they describe says (anything else is the
 * caller breaking the ABI, which no callee can detect). Every call must
 * return (no crash, no sanitizer report), every error message must be a
 * string, nothing may leak, and a successful execute of a well-formed call
 * must give the fixture's exact outputs.
 *
 * Environment (set by run_fuzz.sh): AOTRUN_FUZZ_PLUGIN (the clang-built
 * libaotrun_cpu_ref.so), AOTRUN_FUZZ_MODEL (fixture_model.so),
 * AOTRUN_FUZZ_SHIM (libaotrun_shim.so, which models import from).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- persistent state (set up once) ------------------------------------- */

static struct {
  program_fixture prog;
  const char *plugin_path;
  aotrun_registry *reg;
  const aotrun_backend *backend; /* cpu_ref, owned by reg */
  const aotrun_backend_api *api;
  aotrun_program_dir *dir;
  const aotrun_host_api *host; /* the real named-data service */
  aotrun_method *method;       /* "forward" through the table */
  aotrun_host_method *hm;      /* "forward" through the host library */
} g;

static void die(const char *what) {
  fprintf(stderr, "fuzz_plugin_abi setup: %s: %s\n", what,
          aotrun_host_last_error());
  exit(2); /* test harness, not library code */
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *model = getenv("AOTRUN_FUZZ_MODEL");
  const char *shim = getenv("AOTRUN_FUZZ_SHIM");
  g.plugin_path = getenv("AOTRUN_FUZZ_PLUGIN");
  if (model == NULL || shim == NULL || g.plugin_path == NULL)
    die("set AOTRUN_FUZZ_PLUGIN, AOTRUN_FUZZ_MODEL and AOTRUN_FUZZ_SHIM");
  /* Models import aoti_torch_* from the global scope. */
  if (dlopen(shim, RTLD_NOW | RTLD_GLOBAL) == NULL) die(dlerror());
  if (program_fixture_create(&g.prog, model, "cpu") != 0)
    die("writing the fixture program");
  if (aotrun_registry_create(&g.reg) != AOTRUN_OK) die("registry");
  if (aotrun_registry_load(g.reg, g.plugin_path, &g.backend) != AOTRUN_OK)
    die("loading the plugin");
  g.api = aotrun_backend_table(g.backend);
  if (aotrun_program_dir_open(g.prog.dir, &g.dir) != AOTRUN_OK)
    die("program dir");
  aotrun_program_dir_set_log_level(g.dir, AOTRUN_LOG_ERROR + 1);
  g.host = aotrun_program_dir_host_api(g.dir);
  aotrun_key_value spec = {"method", "forward"};
  if (g.api->init(g.host, g.prog.manifest, g.prog.manifest_size, &spec, 1,
                  &g.method) != AOTRUN_OK)
    die(g.api->last_error(NULL));
  if (aotrun_host_method_open(g.reg, "cpu_ref", g.host, g.prog.manifest,
                              g.prog.manifest_size, &spec, 1,
                              &g.hm) != AOTRUN_OK)
    die("host method");
  return 0;
}

/* ---- reading the input -------------------------------------------------- */

typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static uint64_t take(reader *r, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; i++) {
    v |= (uint64_t)(r->n ? *r->p : 0) << (8 * i);
    if (r->n) r->p++, r->n--;
  }
  return v;
}
static unsigned u8(reader *r) { return (unsigned)take(r, 1); }
static uint32_t u32(reader *r) { return (uint32_t)take(r, 4); }
static uint64_t u64(reader *r) { return take(r, 8); }

/* A NUL-terminated string of up to 40 input bytes (heap, exact size). */
static char *fuzz_string(reader *r) {
  size_t n = u8(r) % 41;
  char *s = malloc(n + 1);
  if (s == NULL) return NULL;
  for (size_t i = 0; i < n; i++) s[i] = (char)u8(r);
  s[n] = '\0';
  return s;
}

/* A few interesting sizes, or any 64-bit value. */
static size_t fuzz_count(reader *r) {
  switch (u8(r) % 6) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return SIZE_MAX;
    case 4: return (size_t)1 << 62;
    default: return (size_t)u64(r);
  }
}

/* Every message must be a readable string. */
static void touch(const char *s) {
  if (s == NULL) {
    fprintf(stderr, "a last-error string is NULL\n");
    abort();
  }
  volatile size_t n = strlen(s);
  (void)n;
}

/* ---- a host whose named-data service misbehaves on request ------------- */

typedef struct fake_host {
  aotrun_host_api api;
  unsigned mode;         /* see fake_get */
  const uint8_t *bytes;  /* garbage bytes served for weights */
  size_t size;
} fake_host;

static aotrun_status fake_get(void *ctx, const char *key, const void **data,
                              size_t *size, void **token) {
  fake_host *h = ctx;
  switch (h->mode % 5) {
    case 0: /* the real service */
      return g.host->get_named_data(g.host->ctx, key, data, size, token);
    case 1: /* an unknown status code, outputs untouched */
      return (aotrun_status)12345;
    case 2: /* "OK" with NULL data and a huge size */
      *data = NULL;
      *size = SIZE_MAX;
      *token = NULL;
      return AOTRUN_OK;
    case 3: /* garbage for the weights, the real file otherwise (a garbage
               library would reach dlopen only past the ELF checks, which
               the elf target fuzzes) */
      if (key != NULL && strstr(key, ".safetensors") != NULL) {
        *data = h->bytes;
        *size = h->size;
        *token = NULL;
        return AOTRUN_OK;
      }
      return g.host->get_named_data(g.host->ctx, key, data, size, token);
    default:
      return AOTRUN_ERR_NOT_FOUND;
  }
}

static void fake_release(void *ctx, void *token) {
  (void)ctx;
  g.host->release_named_data(g.host->ctx, token); /* ignores unknown */
}

static const aotrun_host_api *pick_host(reader *r, fake_host *fake) {
  unsigned c = u8(r) % 6;
  if (c == 0) return NULL;
  if (c == 1) return g.host;
  memset(fake, 0, sizeof *fake);
  fake->api.abi_version = AOTRUN_ABI_VERSION;
  fake->api.struct_size = sizeof fake->api;
  fake->api.ctx = fake;
  fake->api.get_named_data = fake_get;
  fake->api.release_named_data = fake_release;
  fake->mode = u8(r);
  fake->size = u8(r) % 64;
  fake->bytes = r->p;
  if (fake->size > r->n) fake->size = r->n;
  if (c == 3) fake->api.get_named_data = NULL;
  if (c == 4) fake->api.release_named_data = NULL;
  if (c == 5) {
    switch (u8(r) % 4) {
      case 0: fake->api.struct_size = u32(r); break;
      case 1: fake->api.struct_size = 0; break;
      case 2: fake->api.abi_version = u32(r); break;
      default: fake->api.abi_version = AOTRUN_MAKE_VERSION(2, 0); break;
    }
  }
  return &fake->api;
}

/* ---- DLTensors ---------------------------------------------------------- */

#define MAX_T 4
#define MAX_DIMS 20

typedef struct tensor_slot {
  DLTensor t;
  int64_t shape[MAX_DIMS];
  int64_t strides[MAX_DIMS];
  void *buf;
  int64_t *heap_shape, *heap_strides; /* exactly ndim entries */
} tensor_slot;

static size_t itemsize_of(DLDataType d) {
  return ((size_t)d.bits * (size_t)(d.lanes ? d.lanes : 1) + 7) / 8;
}

/* Bytes the tensor spans from data (byte_offset included), or 0 when it is
 * empty, and -1 (SIZE_MAX) when too large to back with memory here. */
static size_t span_of(const DLTensor *t) {
  if (t->ndim < 0 || t->ndim > MAX_DIMS) return SIZE_MAX;
  if (t->ndim > 0 && t->shape == NULL) return SIZE_MAX;
  size_t item = itemsize_of(t->dtype);
  if (item == 0) item = 1;
  uint64_t last = 0; /* element offset of the last element */
  for (int32_t d = 0; d < t->ndim; d++) {
    int64_t n = t->shape[d];
    if (n < 0 || n > (1 << 16)) return SIZE_MAX;
    if (n == 0) return t->byte_offset; /* empty: nothing is read */
    int64_t s = t->strides ? t->strides[d] : 1;
    if (t->strides == NULL) {
      last = (last + 1) * (uint64_t)n - 1;
    } else {
      if (s < 0 || s > (1 << 16)) return SIZE_MAX;
      last += (uint64_t)(n - 1) * (uint64_t)s;
    }
    if (last > (1u << 20)) return SIZE_MAX;
  }
  return t->byte_offset + (last + 1) * item;
}

/* A well-formed x [rows, 4] / y [rows, 3] / calls [1] float32 tensor. */
static void good_tensor(tensor_slot *s, int64_t d0, int64_t d1, int32_t ndim) {
  memset(&s->t, 0, sizeof s->t);
  s->shape[0] = d0;
  s->shape[1] = d1;
  s->t.ndim = ndim;
  s->t.shape = s->shape;
  s->t.dtype = (DLDataType){kDLFloat, 32, 1};
  s->t.device = (DLDevice){kDLCPU, 0};
}

/* Mutates one field of the tensor from the input, then backs it with a heap
 * buffer of exactly the size it describes (or NULL data). */
static void mutate_and_back(reader *r, tensor_slot *s) {
  unsigned k = u8(r);
  for (int i = 0; i < MAX_DIMS; i++) s->strides[i] = 0;
  switch (k % 12) {
    case 0: break; /* well-formed */
    case 1: s->t.ndim = (int32_t)u32(r); break;
    case 2: s->t.ndim = (int32_t)(u8(r) % (MAX_DIMS + 1)); break;
    case 3: s->t.shape = NULL; break;
    case 4: s->shape[u8(r) % 2] = (int64_t)u64(r); break;
    case 5: s->shape[u8(r) % 2] = (int64_t)(u8(r) % 9) - 1; break;
    case 6:
      for (int i = 0; i < MAX_DIMS; i++) s->strides[i] = (int64_t)(u8(r) % 9) - 2;
      s->t.strides = s->strides;
      break;
    case 7:
      s->t.dtype = (DLDataType){(uint8_t)u8(r), (uint8_t)u8(r), (uint16_t)u8(r)};
      break;
    case 8: s->t.device = (DLDevice){(DLDeviceType)u8(r), (int32_t)u32(r)}; break;
    case 9: s->t.byte_offset = u8(r) % 64; break;
    case 10: s->t.data = NULL; return; /* with any shape */
    default:
      for (int i = 2; i < MAX_DIMS; i++) s->shape[i] = (int64_t)(u8(r) % 4);
      s->t.ndim = (int32_t)(u8(r) % (MAX_DIMS + 1));
      break;
  }
  /* Shape and strides arrays of exactly ndim entries, so a callee that
   * writes or reads past the rank it was given is caught. */
  if (s->t.ndim >= 0 && s->t.ndim <= MAX_DIMS) {
    size_t bytes = (size_t)s->t.ndim * sizeof(int64_t);
    if (s->t.shape != NULL) {
      s->heap_shape = malloc(bytes ? bytes : 1);
      if (s->heap_shape != NULL) memcpy(s->heap_shape, s->t.shape, bytes);
      s->t.shape = s->heap_shape;
    }
    if (s->t.strides != NULL) {
      s->heap_strides = malloc(bytes ? bytes : 1);
      if (s->heap_strides != NULL)
        memcpy(s->heap_strides, s->t.strides, bytes);
      s->t.strides = s->heap_strides;
    }
  }
  size_t span = span_of(&s->t);
  if (span == SIZE_MAX) {
    s->t.data = NULL;
    return;
  }
  s->buf = malloc(span ? span : 1);
  if (s->buf != NULL) {
    for (size_t i = 0; i < span; i++) ((uint8_t *)s->buf)[i] = (uint8_t)u8(r);
  }
  s->t.data = s->buf;
}

/* Runs execute (table or host library, or a NULL handle) with hostile
 * tensors; checks the outputs of a successful well-formed call. */
static void op_execute(reader *r) {
  tensor_slot in[MAX_T], out[MAX_T];
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  int64_t rows = (int64_t)(u8(r) % 6);
  int64_t room = (u8(r) % 4 == 0) ? (int64_t)(u8(r) % 8) : rows;
  for (int i = 0; i < MAX_T; i++) {
    good_tensor(&in[i], rows, 4, 2);
    good_tensor(&out[i], i == 0 ? room : 1, 3, i == 0 ? 2 : 1);
  }
  unsigned mut = u8(r);
  int mutate = mut % 3 != 0; /* a third of the calls are well-formed */
  for (int i = 0; i < MAX_T; i++) {
    if (mutate && u8(r) % 2) {
      mutate_and_back(r, &in[i]);
    } else {
      size_t span = span_of(&in[i].t);
      in[i].buf = malloc(span ? span : 1);
      /* Finite inputs in [-4, 4): NaN and Inf are the fixture's failure
       * hooks, reached through mutate_and_back. */
      for (size_t e = 0; in[i].buf && e < span / 4; e++)
        ((float *)in[i].buf)[e] = (float)((int)u8(r) - 128) / 32.0f;
      in[i].t.data = in[i].buf;
    }
    if (mutate && u8(r) % 2) {
      mutate_and_back(r, &out[i]);
    } else {
      size_t span = span_of(&out[i].t);
      out[i].buf = calloc(1, span ? span : 1);
      out[i].t.data = out[i].buf;
    }
  }
  size_t ni = 1, no = 2;
  const DLTensor *inputs = &in[0].t;
  DLTensor *outputs = &out[0].t;
  DLTensor in_arr[MAX_T], out_arr[MAX_T];
  for (int i = 0; i < MAX_T; i++) {
    in_arr[i] = in[i].t;
    out_arr[i] = out[i].t;
  }
  inputs = in_arr;
  outputs = out_arr;
  int counts_ok = 1;
  if (u8(r) % 4 == 0) {
    /* Wrong counts: with NULL arrays any count; with the real arrays, the
     * callee must refuse a count that differs from the method's before it
     * reads past the ones declared. */
    ni = fuzz_count(r);
    no = fuzz_count(r);
    if (u8(r) % 2) inputs = NULL;
    if (u8(r) % 2) outputs = NULL;
    counts_ok = ni == 1 && no == 2 && inputs && outputs;
  }
  unsigned who = u8(r) % 4;
  aotrun_status st;
  if (who == 0) {
    st = g.api->execute(NULL, inputs, ni, outputs, no);
    if (st == AOTRUN_OK) abort();
  } else if (who == 1) {
    st = g.api->execute(g.method, inputs, ni, outputs, no);
    touch(g.api->last_error(g.method));
  } else if (who == 2) {
    st = aotrun_host_method_execute(g.hm, inputs, ni, outputs, no);
    touch(aotrun_host_last_error());
  } else {
    st = aotrun_host_method_execute(NULL, inputs, ni, outputs, no);
    if (st == AOTRUN_OK) abort();
  }
  if (st == AOTRUN_OK && !mutate && counts_ok) {
    /* A well-formed call: y must be exactly the fixture's output. */
    int64_t n = out_arr[0].shape[0];
    if (n != rows) abort();
    float *want = malloc((size_t)(rows ? rows : 1) * 3 * sizeof(float));
    if (want != NULL) {
      program_fixture_expected(in[0].buf, rows, want);
      if (memcmp(want, out[0].buf, (size_t)rows * 3 * sizeof(float)) != 0) {
        fprintf(stderr, "execute: wrong output for a well-formed call\n");
        abort();
      }
      free(want);
    }
  }
  for (int i = 0; i < MAX_T; i++) {
    free(in[i].buf);
    free(out[i].buf);
    free(in[i].heap_shape);
    free(in[i].heap_strides);
    free(out[i].heap_shape);
    free(out[i].heap_strides);
  }
}

/* ---- the other operations ----------------------------------------------- */

static const char *pick_path(reader *r, char **owned) {
  *owned = NULL;
  switch (u8(r) % 6) {
    case 0: return NULL;
    case 1: return "";
    case 2: return g.plugin_path;
    case 3: return "/dev/null";
    case 4: return "/";
    default: {
      /* A name that never resolves to a real library (no '/'). */
      char *s = fuzz_string(r);
      if (s == NULL) return NULL;
      size_t n = strlen(s) + 16;
      char *p = malloc(n);
      if (p != NULL) {
        snprintf(p, n, "nonexistent-%s", s);
        for (char *c = p; *c; c++)
          if (*c == '/') *c = '_';
      }
      free(s);
      *owned = p;
      return p;
    }
  }
}

static uint32_t pick_version(reader *r) {
  switch (u8(r) % 5) {
    case 0: return AOTRUN_ABI_VERSION;
    case 1: return AOTRUN_MAKE_VERSION(1, u8(r));
    case 2: return AOTRUN_MAKE_VERSION(2, 0);
    case 3: return 0;
    default: return u32(r);
  }
}

static void op_open(reader *r) {
  char *owned;
  const char *path = pick_path(r, &owned);
  uint32_t v = pick_version(r);
  aotrun_backend *b = NULL;
  aotrun_status st = aotrun_backend_open(path, v, u8(r) % 5 ? &b : NULL);
  touch(aotrun_host_last_error());
  if (st == AOTRUN_OK) {
    touch(aotrun_backend_name(b));
    touch(aotrun_backend_path(b));
    (void)aotrun_backend_abi_version(b);
    char reason[8];
    (void)aotrun_backend_is_available(b, reason, sizeof reason);
  }
  aotrun_backend_close(b);
  free(owned);
}

static void op_registry(reader *r) {
  aotrun_registry *reg = NULL;
  if (u8(r) % 4) aotrun_registry_create(&reg);
  else aotrun_registry_create(NULL);
  for (unsigned i = 0, n = u8(r) % 4; i < n; i++) {
    char *owned;
    const char *path = pick_path(r, &owned);
    const aotrun_backend *b = NULL;
    aotrun_registry_load(u8(r) % 5 ? reg : NULL, path, u8(r) % 2 ? &b : NULL);
    touch(aotrun_host_last_error());
    free(owned);
  }
  char *name = fuzz_string(r);
  const aotrun_backend *found = NULL;
  switch (u8(r) % 4) {
    case 0: aotrun_registry_find(reg, name, &found); break;
    case 1: aotrun_registry_find(reg, NULL, &found); break;
    case 2: aotrun_registry_find(reg, "cpu_ref", NULL); break;
    default: aotrun_registry_find(NULL, "cpu_ref", &found); break;
  }
  touch(aotrun_host_last_error());
  (void)aotrun_registry_at(u8(r) % 2 ? reg : NULL, (size_t)u64(r));
  (void)aotrun_registry_count(u8(r) % 2 ? reg : NULL);
  free(name);
  aotrun_registry_destroy(reg);
}

static aotrun_option *pick_option(reader *r, aotrun_option *o, char **owned) {
  *owned = NULL;
  if (u8(r) % 6 == 0) return NULL;
  memset(o, 0, sizeof *o);
  switch (u8(r) % 4) {
    case 0: o->key = NULL; break;
    case 1: o->key = ""; break;
    case 2: o->key = "cuda_graphs"; break;
    default: o->key = *owned = fuzz_string(r); break;
  }
  o->type = (int32_t)(u8(r) % 5 == 0 ? u32(r) : u8(r) % 4);
  o->bool_value = (int32_t)u32(r);
  o->int_value = (int64_t)u64(r);
  o->string_value = u8(r) % 2 ? NULL : "x";
  return o;
}

static void op_option(reader *r) {
  aotrun_option o, *op;
  char *owned;
  op = pick_option(r, &o, &owned);
  aotrun_option got;
  switch (u8(r) % 7) {
    case 0: g.api->set_option(NULL, op); break;
    case 1: g.api->set_option(g.method, op); break;
    case 2:
      g.api->get_option(u8(r) % 2 ? g.method : NULL, op ? op->key : NULL,
                        u8(r) % 2 ? &got : NULL);
      break;
    case 3: aotrun_host_method_set_option(g.hm, op); break;
    case 4: aotrun_host_method_set_option(NULL, op); break;
    case 5: aotrun_backend_set_option(g.backend, op); break;
    default: aotrun_backend_set_option(NULL, op); break;
  }
  touch(g.api->last_error(NULL));
  touch(g.api->last_error(g.method));
  touch(aotrun_host_last_error());
  free(owned);
}

static void op_io(reader *r) {
  int32_t kind = u8(r) % 3 == 0 ? (int32_t)u32(r) : (int32_t)(u8(r) % 2);
  size_t index = u8(r) % 3 == 0 ? (size_t)u64(r) : u8(r) % 4;
  size_t count = 0;
  unsigned c = u8(r) % 8;
  if (c == 0) {
    g.api->get_num_io(u8(r) % 2 ? g.method : NULL, kind,
                      u8(r) % 2 ? &count : NULL);
  } else if (c == 1) {
    aotrun_host_method_num_io(u8(r) % 2 ? g.hm : NULL, kind,
                              u8(r) % 2 ? &count : NULL);
  } else if (c == 2) {
    aotrun_io_info info;
    aotrun_host_method_io_info(u8(r) % 2 ? g.hm : NULL, kind, index,
                               u8(r) % 2 ? &info : NULL);
  } else {
    /* The caller's struct is struct_size bytes (an older or newer
     * aotrun_io_info): the plugin must write no more than that. */
    uint32_t ss;
    switch (u8(r) % 5) {
      case 0: ss = 0; break;
      case 1: ss = sizeof(uint32_t); break;
      case 2: ss = (uint32_t)offsetof(aotrun_io_info, shape); break;
      case 3: ss = sizeof(aotrun_io_info) + u8(r); break;
      default: ss = u8(r) % (sizeof(aotrun_io_info) + 64); break;
    }
    size_t alloc = ss < sizeof(uint32_t) ? sizeof(uint32_t) : ss;
    aotrun_io_info *info = malloc(alloc);
    if (info != NULL) {
      memset(info, 0xA5, alloc);
      info->struct_size = ss;
      aotrun_status st = g.api->get_io_info(u8(r) % 8 ? g.method : NULL, kind,
                                            index, u8(r) % 8 ? info : NULL);
      if (st == AOTRUN_OK && ss >= offsetof(aotrun_io_info, name) +
                                       sizeof(const char *))
        touch(info->name);
      free(info);
    }
  }
  touch(g.api->last_error(g.method));
  touch(aotrun_host_last_error());
}

static void op_entry(reader *r) {
  void *lib = dlopen(g.plugin_path, RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL) abort();
  void *sym = dlsym(lib, AOTRUN_PLUGIN_ENTRY_SYMBOL);
  aotrun_plugin_get_api_fn entry;
  memcpy(&entry, &sym, sizeof entry);
  const aotrun_backend_api *t = NULL;
  uint32_t v = pick_version(r);
  aotrun_status st = entry(v, u8(r) % 4 ? &t : NULL);
  if (st == AOTRUN_OK && (t == NULL || t->struct_size < sizeof *t)) abort();
  char small[4];
  char *reason = u8(r) % 2 ? small : NULL;
  g.api->is_available(reason, reason ? sizeof small : fuzz_count(r));
  (void)aotrun_backend_is_available(u8(r) % 2 ? g.backend : NULL,
                                    u8(r) % 2 ? small : NULL,
                                    u8(r) % 2 ? sizeof small : 0);
  touch(g.api->get_name());
  touch(aotrun_backend_name(g.backend));
  (void)aotrun_backend_name(NULL);
  (void)aotrun_backend_path(NULL);
  (void)aotrun_backend_abi_version(NULL);
  (void)aotrun_backend_table(NULL);
  dlclose(lib);
}

/* Compile specs: NULL, huge counts with NULL, NULL keys and values. */
static const aotrun_key_value *pick_specs(reader *r, aotrun_key_value *kv,
                                          size_t *n, char **owned) {
  *owned = NULL;
  switch (u8(r) % 6) {
    case 0: *n = fuzz_count(r); return NULL;
    case 1: *n = 0; return kv;
    default: break;
  }
  *n = 1 + u8(r) % 3;
  for (size_t i = 0; i < *n; i++) {
    switch (u8(r) % 6) {
      case 0: kv[i] = (aotrun_key_value){NULL, "forward"}; break;
      case 1: kv[i] = (aotrun_key_value){"method", NULL}; break;
      case 2: kv[i] = (aotrun_key_value){"method", ""}; break;
      case 3:
        if (*owned == NULL) *owned = fuzz_string(r);
        kv[i] = (aotrun_key_value){"method", *owned ? *owned : "x"};
        break;
      case 4: kv[i] = (aotrun_key_value){"other", "value"}; break;
      default: kv[i] = (aotrun_key_value){"method", "forward"}; break;
    }
  }
  return kv;
}

/* The method's bytes: the real manifest, input bytes, or NULL. */
static const void *pick_processed(reader *r, size_t *size, void **owned) {
  *owned = NULL;
  switch (u8(r) % 4) {
    case 0: *size = g.prog.manifest_size; return g.prog.manifest;
    case 1: *size = fuzz_count(r); return NULL;
    case 2: *size = 0; return g.prog.manifest;
    default: {
      size_t n = u8(r) % 128;
      if (n > r->n) n = r->n;
      *owned = malloc(n ? n : 1);
      if (*owned != NULL && n) memcpy(*owned, r->p, n);
      r->p += n;
      r->n -= n;
      *size = n;
      return *owned;
    }
  }
}

static void op_init(reader *r) {
  fake_host fake;
  const aotrun_host_api *host = pick_host(r, &fake);
  size_t psize;
  void *pown;
  const void *processed = pick_processed(r, &psize, &pown);
  aotrun_key_value kv[3];
  size_t ns;
  char *sown;
  const aotrun_key_value *specs = pick_specs(r, kv, &ns, &sown);
  aotrun_method *m = (aotrun_method *)&fake; /* must be overwritten */
  aotrun_status st =
      g.api->init(host, processed, psize, specs, ns, u8(r) % 8 ? &m : NULL);
  touch(g.api->last_error(NULL));
  if (st == AOTRUN_OK) {
    touch(g.api->last_error(m));
    size_t count = 0;
    if (g.api->get_num_io(m, AOTRUN_IO_OUTPUT, &count) != AOTRUN_OK) abort();
    g.api->destroy(m);
  } else if (m != NULL && m != (aotrun_method *)&fake) {
    abort(); /* a failed init leaves *out NULL */
  }
  g.api->destroy(NULL);
  if (aotrun_program_dir_num_mapped(g.dir) != 0) abort(); /* all released */
  free(pown);
  free(sown);
}

static void op_host_method(reader *r) {
  fake_host fake;
  const aotrun_host_api *host = pick_host(r, &fake);
  size_t psize;
  void *pown;
  const void *processed = pick_processed(r, &psize, &pown);
  aotrun_key_value kv[3];
  size_t ns;
  char *sown;
  const aotrun_key_value *specs = pick_specs(r, kv, &ns, &sown);
  char *name = NULL;
  const char *backend = "cpu_ref";
  if (u8(r) % 4 == 0) backend = u8(r) % 2 ? NULL : (name = fuzz_string(r));
  aotrun_host_method *m = NULL;
  aotrun_status st = aotrun_host_method_open(
      u8(r) % 8 ? g.reg : NULL, backend, host, processed, psize, specs, ns,
      u8(r) % 8 ? &m : NULL);
  touch(aotrun_host_last_error());
  if (st == AOTRUN_OK) {
    if (u8(r) % 2) {
      char *to = NULL;
      const char *target = "cpu_ref";
      if (u8(r) % 2) target = u8(r) % 2 ? NULL : (to = fuzz_string(r));
      aotrun_host_method_swap_backend(m, target);
      touch(aotrun_host_last_error());
      if (aotrun_host_method_backend(m) != g.backend) abort();
      free(to);
    }
    size_t count = 0;
    if (aotrun_host_method_num_io(m, AOTRUN_IO_INPUT, &count) != AOTRUN_OK)
      abort();
  }
  aotrun_host_method_swap_backend(NULL, "cpu_ref");
  (void)aotrun_host_method_backend(NULL);
  aotrun_host_method_close(m);
  if (aotrun_program_dir_num_mapped(g.dir) != 0) abort();
  free(name);
  free(pown);
  free(sown);
}

static void op_log(reader *r) {
  char *text = u8(r) % 4 ? fuzz_string(r) : NULL;
  int32_t level = 0;
  aotrun_log_level_parse(text, u8(r) % 4 ? &level : NULL);
  touch(aotrun_log_level_name((int32_t)u32(r)));
  int32_t lv = (int32_t)u32(r);
  /* Below the threshold: exercises the call without printing. */
  if (lv < INT32_MAX) aotrun_log_stderr(lv + 1, lv, text);
  free(text);
}

static void op_named_data(reader *r) {
  aotrun_program_dir *d = NULL;
  char *s = NULL;
  const char *path;
  switch (u8(r) % 5) {
    case 0: path = NULL; break;
    case 1: path = ""; break;
    case 2: path = "/dev/null"; break;
    case 3: path = s = fuzz_string(r); break;
    default: path = g.prog.dir; break;
  }
  /* Never a directory other than the program's: fuzzed names are relative
   * to the working directory and rarely exist. */
  if (s != NULL && strchr(s, '/') != NULL) path = NULL;
  aotrun_program_dir_open(path, u8(r) % 6 ? &d : NULL);
  touch(aotrun_host_last_error());
  const aotrun_host_api *api = aotrun_program_dir_host_api(d);
  (void)aotrun_program_dir_path(d);
  aotrun_program_dir_set_log_level(d, AOTRUN_LOG_ERROR + 1);
  (void)aotrun_program_dir_num_mapped(d);
  if (api != NULL) {
    char *key = NULL;
    const char *k;
    switch (u8(r) % 6) {
      case 0: k = NULL; break;
      case 1: k = "manifest.json"; break;
      case 2: k = ".."; break;
      case 3: k = "../manifest.json"; break;
      case 4: k = "no-such-file"; break;
      default: k = key = fuzz_string(r); break;
    }
    const void *data = NULL;
    size_t size = 0;
    void *token = NULL;
    unsigned nulls = u8(r);
    aotrun_status st = api->get_named_data(
        api->ctx, k, nulls % 5 == 1 ? NULL : &data,
        nulls % 5 == 2 ? NULL : &size, nulls % 5 == 3 ? NULL : &token);
    touch(aotrun_host_last_error());
    if (st == AOTRUN_OK && size > 0) (void)((const volatile uint8_t *)data)[size - 1];
    /* Unknown and NULL tokens are ignored. */
    api->release_named_data(api->ctx, (void *)(uintptr_t)u64(r));
    api->release_named_data(api->ctx, NULL);
    if (st == AOTRUN_OK) api->release_named_data(api->ctx, token);
    free(key);
  }
  aotrun_program_dir_close(d);
  free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  for (int ops = 0; ops < 48 && r.n > 0; ops++) {
    switch (u8(&r) % 12) {
      case 0: op_open(&r); break;
      case 1: op_registry(&r); break;
      case 2: op_entry(&r); break;
      case 3: op_init(&r); break;
      case 4: case 5: op_execute(&r); break;
      case 6: op_io(&r); break;
      case 7: op_option(&r); break;
      case 8: op_host_method(&r); break;
      case 9: op_log(&r); break;
      case 10: op_named_data(&r); break;
      default:
        touch(g.api->last_error(NULL));
        touch(g.api->last_error(g.method));
        break;
    }
  }
  return 0;
}
