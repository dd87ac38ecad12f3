/*
 * npy.c: .npy read (format 1.0/2.0) and write (1.0). The header is a
 * Python dict literal; it is parsed strictly so a malformed file is a
 * clear error, never a wrong array.
 */
#include "plugin_api/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_api/host_error.h"
#include "plugin_api/host_file.h"

static const char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* Cursor over the header text; `name` is the file for messages. */
typedef struct cursor {
  const char *p, *end, *name, *start;
} cursor;

/* "malformed .npy header in F at byte N of its M-byte header: what". */
static aotrun_status bad(const cursor *c, const char *what) {
  return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                          "malformed .npy header in %s at byte %zu of its "
                          "%zu-byte header: %s",
                          c->name, (size_t)(c->p - c->start),
                          (size_t)(c->end - c->start), what);
}

/* What the cursor is at, for "expected X, found Y". */
static void describe_next(const cursor *c, char *buf, size_t size) {
  if (c->p >= c->end)
    snprintf(buf, size, "the end of the header");
  else if (*c->p >= 0x20 && *c->p < 0x7f)
    snprintf(buf, size, "'%c'", *c->p);
  else
    snprintf(buf, size, "byte 0x%02x", (unsigned)(unsigned char)*c->p);
}

static aotrun_status expected(const cursor *c, const char *what) {
  char found[32], msg[192];
  describe_next(c, found, sizeof found);
  snprintf(msg, sizeof msg, "expected %s, found %s", what, found);
  return bad(c, msg);
}

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n'))
    c->p++;
}

static int eat(cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A quoted string ('...' or "...") into buf. */
static aotrun_status parse_string(cursor *c, char *buf, size_t size) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return expected(c, "a quoted string");
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    if (n + 1 >= size) return bad(c, "a quoted string is too long");
    buf[n++] = *c->p++;
  }
  if (c->p >= c->end) return bad(c, "unterminated string");
  c->p++;
  buf[n] = '\0';
  return AOTRUN_OK;
}

static aotrun_status parse_bool(cursor *c, int *out) {
  skip_ws(c);
  size_t left = (size_t)(c->end - c->p);
  if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
    c->p += 4;
    *out = 1;
  } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
    c->p += 5;
    *out = 0;
  } else {
    return bad(c, "fortran_order is neither True nor False");
  }
  return AOTRUN_OK;
}

static aotrun_status parse_dim(cursor *c, int64_t *out) {
  skip_ws(c);
  if (c->p >= c->end || *c->p < '0' || *c->p > '9')
    return expected(c, "a non-negative integer in shape (shape holds "
                       "something other than a non-negative integer)");
  int64_t v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    int d = *c->p++ - '0';
    if (v > (INT64_MAX - d) / 10) return bad(c, "shape dim overflows int64");
    v = v * 10 + d;
  }
  if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 writers */
  *out = v;
  return AOTRUN_OK;
}

/* "(a, b, c)", "(a,)" or "()". */
static aotrun_status parse_shape(cursor *c, aotrun_npy *a) {
  if (!eat(c, '(')) return expected(c, "a tuple for shape");
  a->ndim = 0;
  if (eat(c, ')')) return AOTRUN_OK;
  for (;;) {
    if (a->ndim == AOTRUN_MAX_DIMS)
      return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                              "%s: more than %d dims", c->name,
                              AOTRUN_MAX_DIMS);
    aotrun_status s = parse_dim(c, &a->shape[a->ndim]);
    if (s != AOTRUN_OK) return s;
    a->ndim++;
    if (eat(c, ')')) return a->ndim == 1 ? bad(c, "(n) needs a comma: (n,)")
                                         : AOTRUN_OK;
    if (!eat(c, ',')) return expected(c, "',' or ')' in shape");
    if (eat(c, ')')) return AOTRUN_OK;
  }
}

/* The header's dtype; big-endian data gets its own message (numpy writes
 * it on big-endian machines or from .astype('>f4')). */
static aotrun_status check_dtype(const char *name, const char *descr,
                                 aotrun_npy *a) {
  if (aotrun_npy_dtype(descr, &a->dtype) == AOTRUN_OK) return AOTRUN_OK;
  if (descr[0] == '>')
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "%s: dtype '%s' is not supported: the data is "
                            "big-endian (save it little-endian: "
                            "a.astype(a.dtype.newbyteorder('<')))",
                            name, descr);
  char why[AOTRUN_HOST_ERROR_SIZE]; /* aotrun_npy_dtype's, with the list */
  snprintf(why, sizeof why, "%s", aotrun_host_last_error());
  return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED, "%s: %s", name, why);
}

/* Parses the dict; requires exactly descr, fortran_order and shape. */
static aotrun_status parse_header(cursor *c, aotrun_npy *a) {
  int seen[3] = {0, 0, 0};
  int fortran = 0;
  if (!eat(c, '{')) return expected(c, "'{' (the header is not a dict)");
  while (!eat(c, '}')) {
    char key[32], descr[16];
    aotrun_status s = parse_string(c, key, sizeof key);
    if (s == AOTRUN_OK && !eat(c, ':')) s = expected(c, "':'");
    if (s != AOTRUN_OK) return s;
    int k = strcmp(key, "descr") == 0           ? 0
            : strcmp(key, "fortran_order") == 0 ? 1
            : strcmp(key, "shape") == 0         ? 2
                                                : -1;
    if (k < 0 || seen[k]) {
      char msg[160];
      snprintf(msg, sizeof msg, "%s key '%s' (the header has descr, "
               "fortran_order and shape)", k < 0 ? "unknown" : "repeated",
               key);
      return bad(c, msg);
    }
    seen[k] = 1;
    if (k == 0) s = parse_string(c, descr, sizeof descr);
    if (k == 0 && s == AOTRUN_OK) s = check_dtype(c->name, descr, a);
    if (k == 1) s = parse_bool(c, &fortran);
    if (k == 2) s = parse_shape(c, a);
    if (s != AOTRUN_OK) return s;
    if (!eat(c, ',')) {
      if (!eat(c, '}')) return expected(c, "',' or '}'");
      break;
    }
  }
  skip_ws(c);
  if (c->p != c->end) return bad(c, "text after the dict");
  static const char *const kKeys[3] = {"descr", "fortran_order", "shape"};
  for (int k = 0; k < 3; k++)
    if (!seen[k])
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "malformed .npy header in %s: it has no '%s' "
                              "(a header has descr, fortran_order and shape)",
                              c->name, kKeys[k]);
  if (fortran)
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "%s: fortran_order True is not supported (save "
                            "a C-order array: numpy.ascontiguousarray)",
                            c->name);
  return AOTRUN_OK;
}

/* product(shape) * itemsize without overflow. */
static aotrun_status data_size(const char *name, const aotrun_npy *a,
                               size_t *out) {
  size_t n = aotrun_dtype_size(a->dtype);
  for (int32_t i = 0; i < a->ndim; i++) {
    uint64_t d = (uint64_t)a->shape[i];
    if (d != 0 && n > SIZE_MAX / d)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "%s: shape overflows the address space (dim "
                              "%d is %lld)",
                              name, (int)i, (long long)a->shape[i]);
    n *= (size_t)d;
  }
  *out = n;
  return AOTRUN_OK;
}

/* Locates the header text [*hdr, *hdr + *hlen) after the preamble. */
static aotrun_status read_preamble(const char *name, const uint8_t *b,
                                   size_t size, size_t *hdr, size_t *hlen) {
  size_t m = size < sizeof kMagic ? size : sizeof kMagic;
  if (size == 0)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is empty (0 bytes), not a .npy file", name);
  if (memcmp(b, kMagic, m) != 0)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is not a .npy file (bad magic)", name);
  if (size < 10)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s: truncated .npy file (%zu bytes; its "
                            "preamble alone has 10)",
                            name, size);
  if (b[6] == 1 && b[7] == 0) {
    *hdr = 10;
    *hlen = (size_t)b[8] | (size_t)b[9] << 8;
  } else if (b[6] == 2 && b[7] == 0) {
    if (size < 12)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "%s: truncated .npy preamble", name);
    *hdr = 12;
    *hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
            (size_t)b[11] << 24;
  } else {
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "%s: .npy format %u.%u is not supported (1.0 and "
                            "2.0 are)",
                            name, b[6], b[7]);
  }
  if (*hlen > size - *hdr)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s: truncated .npy header (%zu bytes declared, "
                            "%zu present)",
                            name, *hlen, size - *hdr);
  return AOTRUN_OK;
}

aotrun_status aotrun_npy_parse(const char *name, const void *bytes,
                               size_t size, aotrun_npy *out) {
  memset(out, 0, sizeof *out);
  const uint8_t *b = bytes;
  size_t hdr = 0, hlen = 0, nbytes = 0;
  aotrun_status s = read_preamble(name, b, size, &hdr, &hlen);
  if (s != AOTRUN_OK) return s;
  if (memchr(b + hdr, '\0', hlen) != NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "malformed .npy header in %s: NUL byte", name);
  cursor c = {(const char *)b + hdr, (const char *)b + hdr + hlen, name,
              (const char *)b + hdr};
  aotrun_npy a;
  memset(&a, 0, sizeof a);
  s = parse_header(&c, &a);
  if (s == AOTRUN_OK) s = data_size(name, &a, &nbytes);
  if (s != AOTRUN_OK) return s;
  size_t have = size - hdr - hlen;
  if (have != nbytes)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s: data is %zu bytes, shape and dtype need %zu",
                            name, have, nbytes);
  a.data = malloc(nbytes ? nbytes : 1);
  if (a.data == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "%s: out of memory for %zu bytes", name, nbytes);
  if (nbytes) memcpy(a.data, b + hdr + hlen, nbytes);
  a.nbytes = nbytes;
  *out = a;
  return AOTRUN_OK;
}

aotrun_status aotrun_npy_read(const char *path, aotrun_npy *out) {
  memset(out, 0, sizeof *out);
  void *buf = NULL;
  size_t size = 0;
  aotrun_status s =
      aotrun_host_file_read(path, ".npy file", AOTRUN_NPY_MAX_FILE_BYTES,
                            &buf, &size);
  if (s == AOTRUN_OK) s = aotrun_npy_parse(path, buf, size, out);
  free(buf);
  return s;
}

aotrun_status aotrun_npy_alloc(const char *name, aotrun_npy *a) {
  a->data = NULL;
  a->nbytes = 0;
  if (a->ndim < 0 || a->ndim > AOTRUN_MAX_DIMS)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s: rank %d is not in [0, %d]", name,
                            (int)a->ndim, AOTRUN_MAX_DIMS);
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] < 0)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "%s: dim %d is negative (%lld)", name, (int)i,
                              (long long)a->shape[i]);
  size_t nbytes = 0;
  aotrun_status s = data_size(name, a, &nbytes);
  if (s != AOTRUN_OK) return s;
  a->data = calloc(1, nbytes ? nbytes : 1);
  if (a->data == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "%s: out of memory for %zu bytes", name, nbytes);
  a->nbytes = nbytes;
  return AOTRUN_OK;
}

void aotrun_npy_free(aotrun_npy *a) {
  if (a == NULL) return;
  free(a->data);
  memset(a, 0, sizeof *a);
}

/* The 1.0 header: dict, spaces, '\n', total length a multiple of 64. */
static aotrun_status format_header(const char *path, const char *descr,
                                   int32_t ndim, const int64_t *shape,
                                   char *h, size_t cap, size_t *len) {
  int n = snprintf(h, cap, "{'descr': '%s', 'fortran_order': False, "
                           "'shape': (", descr);
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "writing %s: dim %d is negative (%lld)", path,
                              (int)i, (long long)shape[i]);
    n += snprintf(h + n, cap - (size_t)n, "%lld%s", (long long)shape[i],
                  (ndim == 1 || i + 1 < ndim) ? "," : "");
    if (i + 1 < ndim) n += snprintf(h + n, cap - (size_t)n, " ");
  }
  n += snprintf(h + n, cap - (size_t)n, "), }");
  size_t total = 10 + (size_t)n + 1;
  size_t padded = (total + 63) / 64 * 64;
  memset(h + n, ' ', padded - total);
  h[padded - 10 - 1] = '\n';
  *len = padded - 10;
  return AOTRUN_OK;
}

static aotrun_status write_all(const char *path, FILE *f, const void *p,
                               size_t n) {
  if (n != 0 && fwrite(p, 1, n, f) != n)
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "error writing %s: %s",
                            path, strerror(errno));
  return AOTRUN_OK;
}

aotrun_status aotrun_npy_write(const char *path, DLDataType dtype,
                               int32_t ndim, const int64_t *shape,
                               const void *data) {
  const char *descr = aotrun_npy_descr(dtype);
  if (descr == NULL)
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "writing %s: dtype %s (code %u, %u bits, %u "
                            "lanes) has no .npy form",
                            path, aotrun_dtype_name(dtype), dtype.code,
                            dtype.bits, dtype.lanes);
  if (ndim < 0 || ndim > AOTRUN_MAX_DIMS || (ndim > 0 && shape == NULL))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "writing %s: bad rank %d", path, (int)ndim);
  char h[640]; /* 16 dims * 21 chars + keys, rounded up to 64 */
  size_t hlen = 0, nbytes = 0;
  aotrun_status s = format_header(path, descr, ndim, shape, h, sizeof h,
                                  &hlen);
  aotrun_npy probe = {.dtype = dtype, .ndim = ndim};
  if (ndim > 0) memcpy(probe.shape, shape, (size_t)ndim * sizeof *shape);
  if (s == AOTRUN_OK) s = data_size(path, &probe, &nbytes);
  if (s != AOTRUN_OK) return s;
  if (data == NULL && nbytes != 0)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "writing %s: NULL data for %zu bytes", path,
                            nbytes);
  FILE *f = NULL;
  if ((s = aotrun_host_file_create(path, &f)) != AOTRUN_OK) return s;
  uint8_t pre[10];
  memcpy(pre, kMagic, sizeof kMagic);
  pre[6] = 1;
  pre[7] = 0;
  pre[8] = (uint8_t)(hlen & 0xFF);
  pre[9] = (uint8_t)(hlen >> 8);
  s = write_all(path, f, pre, sizeof pre);
  if (s == AOTRUN_OK) s = write_all(path, f, h, hlen);
  if (s == AOTRUN_OK) s = write_all(path, f, data, nbytes);
  if (fclose(f) != 0 && s == AOTRUN_OK)
    s = aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "error writing %s: %s",
                         path, strerror(errno));
  if (s != AOTRUN_OK) unlink(path); /* leave nothing half-written behind */
  return s;
}
