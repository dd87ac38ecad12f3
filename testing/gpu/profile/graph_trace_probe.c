/* graph_trace_probe.c: makes three traced CUDA calls, then prints
 * "probe ok"; with no GPU each fails, and graph_trace still prints them. */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void) {
  void *p = NULL;
  (void)cudaMalloc(&p, 256);
  (void)cudaStreamBeginCapture(NULL, cudaStreamCaptureModeRelaxed);
  (void)cudaGraphLaunch(NULL, NULL);
  puts("probe ok");
  return 0;
}
