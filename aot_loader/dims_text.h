/* dims_text.h: sizes and strides as text for error messages. */
#ifndef AOTRUN_DIMS_TEXT_H
#define AOTRUN_DIMS_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Writes "[32, 16]" into buf (cut short when buf is) and returns buf. */
const char *aotrun_dims_text(const int64_t *dims, int32_t ndim, char *buf,
                             size_t size);

#endif
