/* run_program.c: a C host embedding libaotrun_host (docs/embedding.md).
 * usage: run_program PLUGIN.so PROGRAM_DIR
 * Loads the plugin, opens the program, runs its method "forward" on
 * x = [[1, 2, 3, 4], [0, 0, 0, 0]] and prints the outputs. Shapes are those
 * of the bundled example program: y float32 [N, 3], calls float32 [1].
 * Build: cc run_program.c $(pkg-config --cflags --libs aotrun) */
#include <stdio.h>

#include "aotrun_host.h"

/* Prints what failed with the message that names the thing; 1 if ok. */
static int ok(aotrun_status s, const char *what) {
  if (s != AOTRUN_OK)
    fprintf(stderr, "%s: %s: %s\n", what, aotrun_status_string(s),
            aotrun_host_last_error());
  return s == AOTRUN_OK;
}

/* A float32 tensor in host memory (kDLCPU), C-contiguous. */
static DLTensor f32(float *data, int32_t ndim, int64_t *shape) {
  DLTensor t = {.data = data, .device = {kDLCPU, 0}, .ndim = ndim,
                .dtype = {kDLFloat, 32, 1}, .shape = shape};
  return t;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PLUGIN.so PROGRAM_DIR\n", argv[0]);
    return 2;
  }
  aotrun_registry *reg = NULL;
  const aotrun_backend *backend = NULL;
  aotrun_program_dir *dir = NULL;
  aotrun_host_method *method = NULL;
  int good = ok(aotrun_registry_create(&reg), "registry") &&
             ok(aotrun_registry_load(reg, argv[1], &backend), argv[1]) &&
             ok(aotrun_program_dir_open(argv[2], &dir), argv[2]);
  if (good) {
    /* The processed bytes are the program's manifest.json (the method
     * copies them); every other file is read through the same service. */
    const aotrun_host_api *host = aotrun_program_dir_host_api(dir);
    const void *manifest = NULL;
    size_t size = 0;
    void *token = NULL;
    const aotrun_key_value spec = {"method", "forward"};
    good = ok(host->get_named_data(host->ctx, "manifest.json", &manifest,
                                   &size, &token), "manifest.json") &&
           ok(aotrun_host_method_open(reg, aotrun_backend_name(backend), host,
                                      manifest, size, &spec, 1, &method),
              "open forward");
    if (token != NULL) host->release_named_data(host->ctx, token);
  }
  float x[8] = {1, 2, 3, 4, 0, 0, 0, 0}, y[6] = {0}, calls[1] = {0};
  int64_t x_shape[2] = {2, 4}, y_shape[2] = {2, 3}, calls_shape[1] = {1};
  DLTensor in = f32(x, 2, x_shape);
  DLTensor out[2] = {f32(y, 2, y_shape), f32(calls, 1, calls_shape)};
  if (good &&
      (good = ok(aotrun_host_method_execute(method, &in, 1, out, 2),
                 "execute"))) {
    printf("backend %s\n", aotrun_backend_name(backend));
    for (int64_t i = 0; i < y_shape[0]; i++)
      printf("y[%lld] = %g %g %g\n", (long long)i, y[i * 3], y[i * 3 + 1],
             y[i * 3 + 2]);
    printf("calls = %g\n", calls[0]);
  }
  /* Close the method before the program directory and the registry. */
  aotrun_host_method_close(method);
  aotrun_program_dir_close(dir);
  aotrun_registry_destroy(reg);
  return good ? 0 : 1;
}
