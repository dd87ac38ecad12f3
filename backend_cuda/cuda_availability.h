/*
 * cuda_availability.h: whether a CUDA device can be used here, without
 * crashing or leaving state behind on machines without a driver or GPU
 * (cudaGetDeviceCount fails there, e.g. cudaErrorInsufficientDriver (35) or
 * cudaErrorNoDevice (100)).
 */
#ifndef AOTRUN_CUDA_AVAILABILITY_H
#define AOTRUN_CUDA_AVAILABILITY_H

#include <stddef.h>

/* 1 when at least one device is usable; else 0 and the reason ("no CUDA
 * device", or the cudaGetDeviceCount error with its name and code). */
int aotrun_cuda_available(char *reason, size_t reason_size);

#endif /* AOTRUN_CUDA_AVAILABILITY_H */
