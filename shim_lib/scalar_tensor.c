/* scalar_tensor.c: aoti_torch_scalar_to_tensor_*: a new 0-d CPU tensor
 * holding one value (libtorch's at::scalar_tensor). */
#include <string.h>

#include "shim_lib/dtype.h"
#include "shim_lib/tensor.h"

static AOTITorchError make_scalar(const char *fn, int32_t dtype,
                                  const void *bytes, AtenTensorHandle *ret) {
  if (!ret) return aotrun_shim_fail("%s: ret_new_tensor is NULL", fn);
  *ret = NULL;
  aotrun_storage *s;
  if (aotrun_storage_new(fn, AOTRUN_DEV_CPU, -1, aotrun_dtype_size(dtype), 0, &s))
    return AOTI_TORCH_FAILURE;
  memcpy(s->data, bytes, aotrun_dtype_size(dtype));
  AOTITorchError err = aotrun_tensor_new(fn, s, 0, NULL, NULL, 0, dtype, ret);
  aotrun_storage_release(s);
  return err;
}

#define SCALAR_TO_TENSOR(name, ctype, code)                                  \
  AOTITorchError aoti_torch_scalar_to_tensor_##name(ctype value,             \
                                                    AtenTensorHandle *ret) { \
    return make_scalar("aoti_torch_scalar_to_tensor_" #name, (code), &value, \
                       ret);                                                 \
  }

SCALAR_TO_TENSOR(float32, float, AOTRUN_DT_FLOAT32)
SCALAR_TO_TENSOR(float64, double, AOTRUN_DT_FLOAT64)
SCALAR_TO_TENSOR(uint8, uint8_t, AOTRUN_DT_UINT8)
SCALAR_TO_TENSOR(uint16, uint16_t, AOTRUN_DT_UINT16)
SCALAR_TO_TENSOR(uint32, uint32_t, AOTRUN_DT_UINT32)
SCALAR_TO_TENSOR(uint64, uint64_t, AOTRUN_DT_UINT64)
SCALAR_TO_TENSOR(int8, int8_t, AOTRUN_DT_INT8)
SCALAR_TO_TENSOR(int16, int16_t, AOTRUN_DT_INT16)
SCALAR_TO_TENSOR(int32, int32_t, AOTRUN_DT_INT32)
SCALAR_TO_TENSOR(int64, int64_t, AOTRUN_DT_INT64)
SCALAR_TO_TENSOR(complex64, aotrun_complex64, AOTRUN_DT_COMPLEX64)
SCALAR_TO_TENSOR(complex128, aotrun_complex128, AOTRUN_DT_COMPLEX128)

AOTITorchError aoti_torch_scalar_to_tensor_bool(AOTRUN_SHIM_BOOL value,
                                                AtenTensorHandle *ret) {
  uint8_t byte = value ? 1 : 0; /* one canonical byte */
  return make_scalar("aoti_torch_scalar_to_tensor_bool", AOTRUN_DT_BOOL, &byte, ret);
}
