/* dims_text.c: sizes and strides as text for error messages. */
#include "aot_loader/dims_text.h"

#include <stdio.h>

const char *aotrun_dims_text(const int64_t *dims, int32_t ndim, char *buf,
                             size_t size) {
  if (size == 0) return buf;
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int32_t i = 0; i < ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld",
                             i ? ", " : "", (long long)dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}
