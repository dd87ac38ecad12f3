/*
 * program.h: the parsed and validated program manifest (manifest.json, see
 * docs/program-format.md): its methods, their inputs/outputs and the FQN
 * weight metadata of their constants.
 *
 * Parsing checks everything the manifest can check by itself (types, ranges,
 * names, dtype sizes, views fitting their storage, overflow). What needs the
 * model library or the weights file is checked by method_weights.h.
 */
#ifndef AOTRUN_PROGRAM_H
#define AOTRUN_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"

/* The newest format_version this loader reads. */
#define AOTRUN_PROGRAM_FORMAT_VERSION 1
/* Most dims an input, output or constant may have. */
#define AOTRUN_PROGRAM_MAX_DIMS 16

/* Size limits (docs/program-format.md, "Limits"): parsing is linear in the
 * manifest's size, and these bound its memory and time. */
#define AOTRUN_PROGRAM_MAX_BYTES (128u << 20)   /* manifest.json: 128 MiB */
#define AOTRUN_PROGRAM_MAX_METHODS 4096         /* methods per program */
#define AOTRUN_PROGRAM_MAX_IO 65536    /* inputs, and outputs, per method */
#define AOTRUN_PROGRAM_MAX_CONSTANTS 262144     /* constants per method */
#define AOTRUN_PROGRAM_MAX_SYMBOLS 4096 /* entries of a method's "symbols" */

/* DeviceType codes (DESIGN.md §2.3) used for constants. */
#define AOTRUN_DEVICE_TYPE_CPU 0
#define AOTRUN_DEVICE_TYPE_CUDA 1

/* ConstantType codes (DESIGN.md §2.3). */
#define AOTRUN_CONSTANT_TYPE_UNKNOWN 0
#define AOTRUN_CONSTANT_TYPE_PARAMETER 1
#define AOTRUN_CONSTANT_TYPE_BUFFER 2
#define AOTRUN_CONSTANT_TYPE_TENSOR_CONSTANT 3

/* "max" of a symbol without an upper bound. */
#define AOTRUN_PROGRAM_NO_MAX INT64_MAX

/* One entry of a method's optional "symbols": the values a symbolic dim
 * may take (docs/program-format.md, "Dynamic-dim ranges"). */
typedef struct aotrun_program_symbol {
  char *name;
  int64_t min;
  int64_t max;  /* AOTRUN_PROGRAM_NO_MAX when unbounded */
  int64_t hint; /* the export example's value, in [min, max]; -1 if absent */
} aotrun_program_symbol;

/* An input dim's size as scale * symbol + offset, over one entry of the
 * method's symbols; symbol -1 when the dim has no expression (static, or
 * a symbol without a declared range). */
typedef struct aotrun_dim_expr {
  int32_t symbol; /* index into aotrun_program_method.symbols, or -1 */
  int64_t scale;  /* >= 1 */
  int64_t offset;
} aotrun_dim_expr;

/* One input or output. dims[i] is -1 for a symbolic dim, whose name is
 * symbols[i] (NULL for static dims). exprs[] is set for inputs only. */
typedef struct aotrun_program_io {
  char *name;
  int32_t dtype; /* ScalarType */
  int32_t ndim;
  int64_t dims[AOTRUN_PROGRAM_MAX_DIMS];
  char *symbols[AOTRUN_PROGRAM_MAX_DIMS];
  aotrun_dim_expr exprs[AOTRUN_PROGRAM_MAX_DIMS];
} aotrun_program_io;

/* One constant's FQN weight metadata. */
typedef struct aotrun_program_constant {
  char *name;          /* the library's internal name */
  char *fqn;           /* key in the weights file */
  int32_t type;        /* AOTRUN_CONSTANT_TYPE_* */
  int32_t dtype;       /* ScalarType */
  int32_t device_type; /* AOTRUN_DEVICE_TYPE_CPU or _CUDA */
  int32_t ndim;
  int64_t sizes[AOTRUN_PROGRAM_MAX_DIMS];
  int64_t strides[AOTRUN_PROGRAM_MAX_DIMS]; /* elements */
  int64_t storage_offset;                   /* elements */
  uint64_t nbytes; /* byte size of the whole storage */
} aotrun_program_constant;

typedef struct aotrun_program_method {
  char *name;
  char *library; /* named-data key of the model library */
  size_t num_inputs;
  aotrun_program_io *inputs;
  size_t num_outputs;
  aotrun_program_io *outputs;
  size_t num_constants; /* library index order, folded constants excluded */
  aotrun_program_constant *constants;
  size_t num_symbols; /* "symbols" (optional; 0 when absent) */
  aotrun_program_symbol *symbols;
} aotrun_program_method;

typedef struct aotrun_program {
  int32_t format_version;
  char *producer; /* NULL when absent */
  char *weights;  /* named-data key of the weights file; NULL when absent */
  size_t num_methods;
  aotrun_program_method *methods; /* in manifest order */
} aotrun_program;

/* Parses and validates `size` bytes of manifest.json (borrowed for the call;
 * need not be NUL-terminated). On success *out owns everything it points to.
 * Errors: AOTRUN_ERR_INVALID_ARGUMENT with "malformed manifest: ..." or
 * "malformed FQN weight metadata: ..." (naming the field, method or constant
 * and both values); AOTRUN_ERR_NOT_SUPPORTED for a format_version newer than
 * AOTRUN_PROGRAM_FORMAT_VERSION; AOTRUN_ERR_OUT_OF_MEMORY. */
aotrun_status aotrun_program_parse(const void *bytes, size_t size,
                                   aotrun_program **out, aotrun_error *err);

/* Frees the program. Accepts NULL. */
void aotrun_program_destroy(aotrun_program *program);

/* Finds a method by name. AOTRUN_ERR_NOT_FOUND names the method and lists
 * the available ones. */
aotrun_status aotrun_program_find_method(const aotrun_program *program,
                                         const char *name,
                                         const aotrun_program_method **out,
                                         aotrun_error *err);

/* Writes a dim expression as the manifest's shape strings do ("s0",
 * "2*s0", "s0 + 1", "2*s0 - 1") into buf (returned). */
const char *aotrun_dim_expr_format(const aotrun_program_method *m,
                                   const aotrun_dim_expr *e, char *buf,
                                   size_t size);

/* The manifest name of a constant type ("parameter", ...) or of a device
 * type ("cuda", "cpu"). For messages. */
const char *aotrun_program_constant_type_name(int32_t type);
const char *aotrun_program_device_type_name(int32_t device_type);

#endif /* AOTRUN_PROGRAM_H */
