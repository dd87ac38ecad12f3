/*
 * abi_layout_dump.c: prints, as one JSON object, the size and member
 * offsets of the ABI structs the Python binding mirrors with ctypes
 * (python/aotrun/_lib.py, _dlpack.py), as this platform's C compiler lays
 * them out from aotrun_plugin.h. test_abi_layout.py compares them.
 */
#include <stddef.h>
#include <stdio.h>

#include "plugin_api/aotrun_plugin.h"

#define FIELD(type, m) \
  printf("%s\"%s\": %zu", first++ ? ", " : "", #m, offsetof(type, m))

static int first;

#define BEGIN(type, name)                                     \
  do {                                                        \
    first = 0;                                                \
    printf("\"%s\": {\"size\": %zu, \"offsets\": {", name,    \
           sizeof(type));                                     \
  } while (0)
#define END(last) printf("}}%s\n", last ? "" : ",")

int main(void) {
  printf("{\"abi_version_minor\": %d,\n", AOTRUN_ABI_VERSION_MINOR);
  BEGIN(aotrun_execute_args, "ExecuteArgs");
  FIELD(aotrun_execute_args, struct_size);
  FIELD(aotrun_execute_args, flags);
  FIELD(aotrun_execute_args, inputs);
  FIELD(aotrun_execute_args, num_inputs);
  FIELD(aotrun_execute_args, outputs);
  FIELD(aotrun_execute_args, num_outputs);
  FIELD(aotrun_execute_args, stream);
  FIELD(aotrun_execute_args, managed_outputs);
  FIELD(aotrun_execute_args, too_small_output);
  FIELD(aotrun_execute_args, needed_ndim);
  FIELD(aotrun_execute_args, reserved_);
  FIELD(aotrun_execute_args, needed_shape);
  END(0);
  BEGIN(aotrun_backend_api, "BackendApi");
  FIELD(aotrun_backend_api, abi_version);
  FIELD(aotrun_backend_api, struct_size);
  FIELD(aotrun_backend_api, get_name);
  FIELD(aotrun_backend_api, is_available);
  FIELD(aotrun_backend_api, init);
  FIELD(aotrun_backend_api, execute);
  FIELD(aotrun_backend_api, destroy);
  FIELD(aotrun_backend_api, set_option);
  FIELD(aotrun_backend_api, get_option);
  FIELD(aotrun_backend_api, get_num_io);
  FIELD(aotrun_backend_api, get_io_info);
  FIELD(aotrun_backend_api, last_error);
  FIELD(aotrun_backend_api, get_extension);
  FIELD(aotrun_backend_api, backend_data);
  FIELD(aotrun_backend_api, is_available_ex);
  FIELD(aotrun_backend_api, init_ex);
  FIELD(aotrun_backend_api, set_backend_option);
  FIELD(aotrun_backend_api, get_backend_option);
  FIELD(aotrun_backend_api, get_info);
  FIELD(aotrun_backend_api, get_device_count);
  FIELD(aotrun_backend_api, get_device_info);
  FIELD(aotrun_backend_api, can_run);
  FIELD(aotrun_backend_api, execute_ex);
  FIELD(aotrun_backend_api, synchronize);
  FIELD(aotrun_backend_api, deinit);
  END(0);
  BEGIN(aotrun_host_api, "HostApi");
  FIELD(aotrun_host_api, abi_version);
  FIELD(aotrun_host_api, struct_size);
  FIELD(aotrun_host_api, ctx);
  FIELD(aotrun_host_api, log);
  FIELD(aotrun_host_api, get_named_data);
  FIELD(aotrun_host_api, release_named_data);
  FIELD(aotrun_host_api, alloc);
  FIELD(aotrun_host_api, free);
  END(0);
  BEGIN(aotrun_io_info, "IoInfo");
  FIELD(aotrun_io_info, struct_size);
  FIELD(aotrun_io_info, ndim);
  FIELD(aotrun_io_info, name);
  FIELD(aotrun_io_info, dtype);
  FIELD(aotrun_io_info, shape);
  END(0);
  BEGIN(aotrun_option, "Option");
  FIELD(aotrun_option, key);
  FIELD(aotrun_option, type);
  FIELD(aotrun_option, bool_value);
  FIELD(aotrun_option, int_value);
  FIELD(aotrun_option, string_value);
  END(0);
  BEGIN(DLTensor, "DLTensor");
  FIELD(DLTensor, data);
  FIELD(DLTensor, device);
  FIELD(DLTensor, ndim);
  FIELD(DLTensor, dtype);
  FIELD(DLTensor, shape);
  FIELD(DLTensor, strides);
  FIELD(DLTensor, byte_offset);
  END(0);
  BEGIN(DLManagedTensor, "DLManagedTensor");
  FIELD(DLManagedTensor, dl_tensor);
  FIELD(DLManagedTensor, manager_ctx);
  FIELD(DLManagedTensor, deleter);
  END(1);
  printf("}\n");
  return 0;
}
