/*
 * cuda_device_scope.h: runs a piece of work on one CUDA device and gives
 * the calling thread its current device back afterwards (a method's work
 * runs on the device its "device" spec chose; the host's thread keeps the
 * device it had).
 */
#ifndef AOTRUN_CUDA_DEVICE_SCOPE_H
#define AOTRUN_CUDA_DEVICE_SCOPE_H

#include "aot_loader/aotrun_error.h"

typedef struct aotrun_cuda_device_scope {
  int previous;
  int changed; /* leave sets `previous` again */
} aotrun_cuda_device_scope;

/* Makes `device` current (nothing to do when it already is).
 * AOTRUN_ERR_ACCESS_FAILED naming the device and the CUDA error. */
aotrun_status aotrun_cuda_device_enter(int device,
                                       aotrun_cuda_device_scope *scope,
                                       aotrun_error *err);
/* Restores the device current before enter. Never fails. */
void aotrun_cuda_device_leave(aotrun_cuda_device_scope *scope);

#endif /* AOTRUN_CUDA_DEVICE_SCOPE_H */
