/* dtype.c: dtype/device/layout codes and element sizes. */
#include "shim_lib/dtype.h"

#include "shim_lib/aotrun_shim.h"

typedef struct dtype_info {
  int32_t code;
  size_t size;
  const char *name;
  int real;
} dtype_info;

/* Indexed by the ScalarType code (a direct lookup: element sizes are read
 * on every tensor access of a call's hot path); codes without an entry
 * have no name. */
#define ENTRY(code, size, name, real) [code] = {code, size, name, real}
static const dtype_info kDtypes[] = {
    ENTRY(AOTRUN_DT_UINT8, 1, "uint8", 1),
    ENTRY(AOTRUN_DT_INT8, 1, "int8", 1),
    ENTRY(AOTRUN_DT_INT16, 2, "int16", 1),
    ENTRY(AOTRUN_DT_INT32, 4, "int32", 1),
    ENTRY(AOTRUN_DT_INT64, 8, "int64", 1),
    ENTRY(AOTRUN_DT_FLOAT16, 2, "float16", 1),
    ENTRY(AOTRUN_DT_FLOAT32, 4, "float32", 1),
    ENTRY(AOTRUN_DT_FLOAT64, 8, "float64", 1),
    ENTRY(AOTRUN_DT_COMPLEX32, 4, "complex32", 0),
    ENTRY(AOTRUN_DT_COMPLEX64, 8, "complex64", 0),
    ENTRY(AOTRUN_DT_COMPLEX128, 16, "complex128", 0),
    ENTRY(AOTRUN_DT_BOOL, 1, "bool", 1),
    ENTRY(AOTRUN_DT_BFLOAT16, 2, "bfloat16", 1),
    ENTRY(AOTRUN_DT_FLOAT8_E5M2, 1, "float8_e5m2", 0),
    ENTRY(AOTRUN_DT_FLOAT8_E4M3FN, 1, "float8_e4m3fn", 0),
    ENTRY(AOTRUN_DT_FLOAT8_E5M2FNUZ, 1, "float8_e5m2fnuz", 0),
    ENTRY(AOTRUN_DT_FLOAT8_E4M3FNUZ, 1, "float8_e4m3fnuz", 0),
    ENTRY(AOTRUN_DT_UINT16, 2, "uint16", 1),
    ENTRY(AOTRUN_DT_UINT32, 4, "uint32", 1),
    ENTRY(AOTRUN_DT_UINT64, 8, "uint64", 1),
};
#undef ENTRY

static const dtype_info *find_dtype(int32_t code) {
  if (code < 0 || (size_t)code >= sizeof kDtypes / sizeof kDtypes[0] ||
      kDtypes[code].name == NULL)
    return NULL;
  return &kDtypes[code];
}

size_t aotrun_dtype_size(int32_t dtype) {
  const dtype_info *d = find_dtype(dtype);
  return d ? d->size : 0;
}

const char *aotrun_dtype_name(int32_t dtype) {
  const dtype_info *d = find_dtype(dtype);
  return d ? d->name : "unknown";
}

int aotrun_dtype_is_real(int32_t dtype) {
  const dtype_info *d = find_dtype(dtype);
  return d ? d->real : 0;
}

const char *aotrun_device_name(int32_t device_type) {
  switch (device_type) {
    case AOTRUN_DEV_CPU: return "cpu";
    case AOTRUN_DEV_CUDA: return "cuda";
    case AOTRUN_DEV_XPU: return "xpu";
    case AOTRUN_DEV_MPS: return "mps";
    case AOTRUN_DEV_META: return "meta";
    case AOTRUN_DEV_PRIVATEUSE1: return "privateuse1";
    default: return "unknown";
  }
}

size_t aoti_torch_dtype_element_size(int32_t dtype) {
  size_t n = aotrun_dtype_size(dtype);
  if (n == 0) aotrun_shim_fail("aoti_torch_dtype_element_size: unknown dtype %d", (int)dtype);
  return n;
}

/* The getters: generated code asks for the codes instead of hard-coding. */
#define AOTRUN_CONST(name, value) \
  int32_t name(void) { return (value); }

AOTRUN_CONST(aoti_torch_device_type_cpu, AOTRUN_DEV_CPU)
AOTRUN_CONST(aoti_torch_device_type_cuda, AOTRUN_DEV_CUDA)
AOTRUN_CONST(aoti_torch_device_type_meta, AOTRUN_DEV_META)
AOTRUN_CONST(aoti_torch_device_type_xpu, AOTRUN_DEV_XPU)
AOTRUN_CONST(aoti_torch_device_type_mps, AOTRUN_DEV_MPS)
AOTRUN_CONST(aoti_torch_device_type_privateuse1, AOTRUN_DEV_PRIVATEUSE1)

AOTRUN_CONST(aoti_torch_dtype_float8_e5m2, AOTRUN_DT_FLOAT8_E5M2)
AOTRUN_CONST(aoti_torch_dtype_float8_e4m3fn, AOTRUN_DT_FLOAT8_E4M3FN)
AOTRUN_CONST(aoti_torch_dtype_float8_e5m2fnuz, AOTRUN_DT_FLOAT8_E5M2FNUZ)
AOTRUN_CONST(aoti_torch_dtype_float8_e4m3fnuz, AOTRUN_DT_FLOAT8_E4M3FNUZ)
AOTRUN_CONST(aoti_torch_dtype_bfloat16, AOTRUN_DT_BFLOAT16)
AOTRUN_CONST(aoti_torch_dtype_float16, AOTRUN_DT_FLOAT16)
AOTRUN_CONST(aoti_torch_dtype_float32, AOTRUN_DT_FLOAT32)
AOTRUN_CONST(aoti_torch_dtype_float64, AOTRUN_DT_FLOAT64)
AOTRUN_CONST(aoti_torch_dtype_uint8, AOTRUN_DT_UINT8)
AOTRUN_CONST(aoti_torch_dtype_uint16, AOTRUN_DT_UINT16)
AOTRUN_CONST(aoti_torch_dtype_uint32, AOTRUN_DT_UINT32)
AOTRUN_CONST(aoti_torch_dtype_uint64, AOTRUN_DT_UINT64)
AOTRUN_CONST(aoti_torch_dtype_int8, AOTRUN_DT_INT8)
AOTRUN_CONST(aoti_torch_dtype_int16, AOTRUN_DT_INT16)
AOTRUN_CONST(aoti_torch_dtype_int32, AOTRUN_DT_INT32)
AOTRUN_CONST(aoti_torch_dtype_int64, AOTRUN_DT_INT64)
AOTRUN_CONST(aoti_torch_dtype_bool, AOTRUN_DT_BOOL)
AOTRUN_CONST(aoti_torch_dtype_complex32, AOTRUN_DT_COMPLEX32)
AOTRUN_CONST(aoti_torch_dtype_complex64, AOTRUN_DT_COMPLEX64)
AOTRUN_CONST(aoti_torch_dtype_complex128, AOTRUN_DT_COMPLEX128)

/* c10::Layout and c10::MemoryFormat enum values. */
AOTRUN_CONST(aoti_torch_layout_strided, AOTRUN_LAYOUT_STRIDED)
AOTRUN_CONST(aoti_torch_layout_sparse_coo, 1)
AOTRUN_CONST(aoti_torch_layout_sparse_csr, 2)
AOTRUN_CONST(aoti_torch_layout__mkldnn, 3)
AOTRUN_CONST(aoti_torch_layout_sparse_csc, 4)
AOTRUN_CONST(aoti_torch_layout_sparse_bsr, 5)
AOTRUN_CONST(aoti_torch_layout_sparse_bsc, 6)
AOTRUN_CONST(aoti_torch_layout_jagged, 7)

AOTRUN_CONST(aoti_torch_memory_format_contiguous_format, 0)
AOTRUN_CONST(aoti_torch_memory_format_preserve_format, 1)
AOTRUN_CONST(aoti_torch_memory_format_channels_last, 2)
AOTRUN_CONST(aoti_torch_memory_format_channels_last_3d, 3)
