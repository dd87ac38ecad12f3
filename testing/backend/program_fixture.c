/* program_fixture.c: see program_fixture.h. */
#include "testing/backend/program_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const float kFixtureWeight[3][4] = {
    {0.5f, -0.25f, 1.0f, 2.0f},
    {-1.5f, 0.75f, 0.125f, -0.5f},
    {3.0f, 1.0f, -2.0f, 0.25f},
};
const float kFixtureBias[3] = {0.5f, -1.0f, 2.0f};
const double kFixtureScale = 2.0;

static const char kManifest[] =
    "{\"format\": \"aotrun-program\", \"format_version\": 1,\n"
    " \"producer\": \"testing/backend program_fixture\",\n"
    " \"weights\": \"weights.safetensors\",\n"
    " \"methods\": {\"forward\": {\"library\": \"forward.so\",\n"
    "  \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", "
    "\"shape\": [\"s0\", 4]}],\n"
    "  \"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", "
    "\"shape\": [\"s0\", 3]},\n"
    "              {\"name\": \"calls\", \"dtype\": \"float32\", "
    "\"shape\": [1]}],\n"
    "  \"constants\": [\n"
    "   {\"name\": \"weight\", \"fqn\": \"lin.weight\", \"type\": "
    "\"parameter\", \"dtype\": \"float32\", \"device\": \"%1$s\", "
    "\"sizes\": [3, 4], \"strides\": [4, 1], \"storage_offset\": 0, "
    "\"nbytes\": 48},\n"
    "   {\"name\": \"bias\", \"fqn\": \"lin.bias\", \"type\": \"parameter\", "
    "\"dtype\": \"float32\", \"device\": \"%1$s\", \"sizes\": [3], "
    "\"strides\": [1], \"storage_offset\": 0, \"nbytes\": 12},\n"
    "   {\"name\": \"scale64\", \"fqn\": \"scale\", \"type\": \"buffer\", "
    "\"dtype\": \"float64\", \"device\": \"%1$s\", \"sizes\": [1], "
    "\"strides\": [1], \"storage_offset\": 0, \"nbytes\": 8},\n"
    "   {\"name\": \"calls\", \"fqn\": \"calls\", \"type\": \"buffer\", "
    "\"dtype\": \"float32\", \"device\": \"%1$s\", \"sizes\": [1], "
    "\"strides\": [1], \"storage_offset\": 0, \"nbytes\": 4}]}}}\n";

static const char kHeader[] =
    "{\"lin.weight\":{\"dtype\":\"F32\",\"shape\":[3,4],"
    "\"data_offsets\":[0,48]},"
    "\"lin.bias\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[48,60]},"
    "\"scale\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[64,72]},"
    "\"calls\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[72,76]}}";

static int write_file(const char *dir, const char *name, const void *data,
                      size_t size) {
  char path[640];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  size_t n = fwrite(data, 1, size, f);
  return (fclose(f) == 0 && n == size) ? 0 : -1;
}

static int copy_file(const char *from, const char *dir, const char *name) {
  FILE *f = fopen(from, "rb");
  if (f == NULL) return -1;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(size > 0 ? (size_t)size : 1);
  size_t n = buf ? fread(buf, 1, (size_t)size, f) : 0;
  fclose(f);
  int rc = (buf && n == (size_t)size) ? write_file(dir, name, buf, n) : -1;
  free(buf);
  return rc;
}

/* The safetensors file: 8-byte length, padded header, 76 data bytes. */
static int write_weights(const char *dir) {
  size_t hlen = (sizeof kHeader - 1 + 7) / 8 * 8;
  size_t total = 8 + hlen + 76;
  unsigned char *buf = calloc(1, total);
  if (buf == NULL) return -1;
  for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(hlen >> (8 * i));
  memset(buf + 8, ' ', hlen);
  memcpy(buf + 8, kHeader, sizeof kHeader - 1);
  unsigned char *data = buf + 8 + hlen;
  memcpy(data, kFixtureWeight, 48);
  memcpy(data + 48, kFixtureBias, 12);
  memcpy(data + 64, &kFixtureScale, 8);
  float zero = 0.0f;
  memcpy(data + 72, &zero, 4);
  int rc = write_file(dir, "weights.safetensors", buf, total);
  free(buf);
  return rc;
}

int program_fixture_create(program_fixture *p, const char *model_so_path,
                           const char *constant_device) {
  memset(p, 0, sizeof *p);
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(p->dir, sizeof p->dir, "%s/aotrun-program-XXXXXX",
           tmp ? tmp : "/tmp");
  if (mkdtemp(p->dir) == NULL) return -1;
  size_t cap = sizeof kManifest + 64;
  p->manifest = malloc(cap);
  if (p->manifest == NULL) return -1;
  int n = snprintf(p->manifest, cap, kManifest, constant_device);
  if (n < 0 || (size_t)n >= cap) return -1;
  p->manifest_size = (size_t)n;
  if (write_file(p->dir, "manifest.json", p->manifest, p->manifest_size) ||
      copy_file(model_so_path, p->dir, "forward.so") || write_weights(p->dir))
    return -1;
  return 0;
}

void program_fixture_remove(program_fixture *p) {
  const char *names[] = {"manifest.json", "forward.so", "weights.safetensors"};
  char path[640];
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", p->dir, names[i]);
    unlink(path);
  }
  if (p->dir[0]) rmdir(p->dir);
  free(p->manifest);
  p->manifest = NULL;
}

void program_fixture_expected(const float *x, int64_t n, float *y) {
  for (int64_t i = 0; i < n; i++)
    for (int j = 0; j < 3; j++) {
      float acc = kFixtureBias[j];
      for (int k = 0; k < 4; k++) acc += x[i * 4 + k] * kFixtureWeight[j][k];
      y[i * 3 + j] = (float)((double)acc * kFixtureScale);
    }
}
