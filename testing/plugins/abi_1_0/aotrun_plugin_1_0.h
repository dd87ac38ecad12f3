/* FROZEN COPY of plugin_api/aotrun_plugin.h as released with ABI 1.0
 * (commit 8ac663a). Do not edit: the 1.0 test plugin and the 1.0 host test
 * are built against it to prove that 1.0 binaries keep working with 1.1. */
/*
 * aotrun_plugin.h: the aotrun backend plugin ABI.
 *
 * A backend plugin is a shared library that exports one C symbol,
 * aotrun_plugin_get_api (AOTRUN_PLUGIN_ENTRY_SYMBOL), which returns a table of
 * function pointers (aotrun_backend_api). A host dlopens the library, calls the
 * entry symbol with its own ABI version and uses the table to create method
 * handles (init), run them (execute) and release them (destroy). Tensors cross
 * the boundary as DLPack DLTensors.
 *
 * This header is self-contained: it includes only <stdint.h>, <stddef.h> and
 * <dlpack/dlpack.h>. A plugin needs nothing else from aotrun to be built.
 *
 * Versioning
 *   AOTRUN_ABI_VERSION packs major << 16 | minor. Within one major version,
 *   tables only grow by appending members at the end; every table starts with
 *   the frozen pair (abi_version, struct_size). A host built for minor M loads
 *   a plugin built for minor N (either order): the host calls a member only
 *   when the plugin's struct_size covers it (AOTRUN_TABLE_HAS) and the pointer
 *   is not NULL. A different major version is refused by both sides.
 *
 * Ownership phrases used below
 *   "borrowed for the call": valid only until the function returns.
 *   "copied by the callee":  the callee keeps its own copy.
 *   "owned by X until Y":    X frees it; valid until Y happens.
 *
 * Threading
 *   The table is immutable and may be read from any thread. Calls on one
 *   method handle must be serialised by the host (one call at a time); calls
 *   on different handles may run concurrently. get_name, is_available and
 *   last_error(NULL) are thread-safe.
 *
 * Status
 *   Every fallible function returns an aotrun_status: AOTRUN_OK (0) or one of
 *   the AOTRUN_ERR_* codes. The message that names what went wrong is read
 *   with last_error(handle) (or last_error(NULL) for a failed init, on the same
 *   thread). Nothing throws or aborts across this boundary.
 */
#ifndef AOTRUN_PLUGIN_H
#define AOTRUN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ------------------------------------------------------------ */

#define AOTRUN_ABI_VERSION_MAJOR 1
#define AOTRUN_ABI_VERSION_MINOR 0
#define AOTRUN_MAKE_VERSION(major, minor) \
  ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor)&0xFFFFu)))
#define AOTRUN_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define AOTRUN_VERSION_MINOR(v) ((uint32_t)(v)&0xFFFFu)
#define AOTRUN_ABI_VERSION \
  AOTRUN_MAKE_VERSION(AOTRUN_ABI_VERSION_MAJOR, AOTRUN_ABI_VERSION_MINOR)

/* True when a table of struct_size bytes contains member `field` of `type`. */
#define AOTRUN_TABLE_HAS(table, type, field) \
  ((table)->struct_size >=                   \
   offsetof(type, field) + sizeof(((type *)0)->field))

/* ---- status codes -------------------------------------------------------- */

typedef int32_t aotrun_status;

#define AOTRUN_OK 0
#define AOTRUN_ERR_INVALID_ARGUMENT 1 /* bad input: value, shape, dtype, key */
#define AOTRUN_ERR_NOT_FOUND 2        /* a named thing does not exist */
#define AOTRUN_ERR_NOT_SUPPORTED 3    /* valid request this build can't do */
#define AOTRUN_ERR_ACCESS_FAILED 4    /* file, library, device or data access */
#define AOTRUN_ERR_OUT_OF_MEMORY 5    /* host or device allocation failed */
#define AOTRUN_ERR_INTERNAL 6         /* a bug or an unexpected failure below */
#define AOTRUN_ERR_VERSION_MISMATCH 7 /* ABI major differs, or table too small */
/* New codes may be appended; a host treats unknown codes as INTERNAL. */

/* ---- log levels ---------------------------------------------------------- */

#define AOTRUN_LOG_DEBUG 0
#define AOTRUN_LOG_INFO 1
#define AOTRUN_LOG_WARNING 2
#define AOTRUN_LOG_ERROR 3

/* ---- host services ------------------------------------------------------- */

/*
 * The host's services, passed to init. Owned by the host; must outlive every
 * method handle created with it. Members are appended only; a plugin checks
 * AOTRUN_TABLE_HAS before using a member added after 1.0.
 */
typedef struct aotrun_host_api {
  uint32_t abi_version; /* AOTRUN_ABI_VERSION the host was built with */
  uint32_t struct_size; /* sizeof(aotrun_host_api) in the host's build */
  void *ctx;            /* passed back as the first argument of each member */

  /* ---- members of version 1.0 ---- */

  /* Optional (NULL: the plugin writes nothing). Receives one message without
   * a trailing newline; `message` is borrowed for the call. May be called from
   * any thread that calls into the plugin. */
  void (*log)(void *ctx, int32_t level, const char *message);

  /* Required. Looks up named data (e.g. a model library or a weights file of
   * a program) by key. On success *data and *size describe the bytes, which
   * stay valid and unchanged until release_named_data(ctx, *token) (the host
   * may mmap them). Returns AOTRUN_ERR_NOT_FOUND for an unknown key. `key` is
   * borrowed for the call. */
  aotrun_status (*get_named_data)(void *ctx, const char *key,
                                  const void **data, size_t *size,
                                  void **token);
  /* Required. Releases what get_named_data returned. Never fails. */
  void (*release_named_data)(void *ctx, void *token);

  /* Optional (NULL: the plugin uses malloc/free). Host memory for the
   * plugin's own bookkeeping; alignment is a power of two. */
  void *(*alloc)(void *ctx, size_t size, size_t alignment);
  void (*free)(void *ctx, void *ptr);

  /* ---- end of version 1.0: new members are appended below ---- */
} aotrun_host_api;

/* ---- compile specs and options ------------------------------------------- */

/* One compile spec for init: both strings borrowed for the call. */
typedef struct aotrun_key_value {
  const char *key;
  const char *value;
} aotrun_key_value;

#define AOTRUN_OPTION_BOOL 1
#define AOTRUN_OPTION_INT 2
#define AOTRUN_OPTION_STRING 3

/* A typed option value for set_option/get_option. */
typedef struct aotrun_option {
  const char *key;     /* borrowed for the call */
  int32_t type;        /* AOTRUN_OPTION_* */
  int32_t bool_value;  /* 0 or 1, for AOTRUN_OPTION_BOOL */
  int64_t int_value;   /* for AOTRUN_OPTION_INT */
  /* For AOTRUN_OPTION_STRING. In set_option: borrowed for the call (copied by
   * the callee). In get_option: owned by the plugin, valid until the next
   * set_option on the same target. */
  const char *string_value;
} aotrun_option;

/* ---- method introspection ------------------------------------------------ */

#define AOTRUN_IO_INPUT 0
#define AOTRUN_IO_OUTPUT 1
#define AOTRUN_MAX_DIMS 16
#define AOTRUN_DYNAMIC_DIM (-1)

/* What a method declares for one input or output. Filled by get_io_info. */
typedef struct aotrun_io_info {
  uint32_t struct_size; /* set by the caller to sizeof(aotrun_io_info) */
  int32_t ndim;         /* rank, 0..AOTRUN_MAX_DIMS */
  const char *name;     /* owned by the method handle, valid while it lives */
  DLDataType dtype;
  int64_t shape[AOTRUN_MAX_DIMS]; /* AOTRUN_DYNAMIC_DIM for dynamic dims */
} aotrun_io_info;

/* Opaque per-method state created by init. */
typedef struct aotrun_method aotrun_method;

/* ---- the backend table --------------------------------------------------- */

typedef struct aotrun_backend_api {
  uint32_t abi_version; /* AOTRUN_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /* sizeof(aotrun_backend_api) in the plugin's build */

  /* ---- members of version 1.0 (all required unless marked optional) ---- */

  /* The backend's name, e.g. "cuda". Static string owned by the plugin. */
  const char *(*get_name)(void);

  /* Returns 1 when the backend can run here, 0 when it cannot; then writes a
   * human-readable reason ("no CUDA driver", "no device") into
   * reason[0..reason_size) (NUL-terminated, truncated). Must not fail hard or
   * leave state behind; may be called before any init. */
  int32_t (*is_available)(char *reason, size_t reason_size);

  /* Creates a method handle.
   *   host:       host services; must outlive the handle.
   *   processed:  the method's processed bytes (for the CUDA backend: the
   *               program manifest JSON); borrowed for the call.
   *   specs:      compile specs (e.g. {"method", "forward"}); borrowed.
   *   out:        receives the handle, owned by the caller until destroy.
   * On failure *out is NULL and last_error(NULL) on this thread says why. */
  aotrun_status (*init)(const aotrun_host_api *host, const void *processed,
                        size_t processed_size, const aotrun_key_value *specs,
                        size_t num_specs, aotrun_method **out);

  /* Runs the method once. inputs/outputs are borrowed for the call; their
   * data may be host or device memory (DLDevice says which). The plugin
   * writes each output's data and, for dynamic dims, its shape array (the
   * host provides shape arrays of the declared rank). An output that does not
   * fit is an error that names it. Returns after the outputs are written. */
  aotrun_status (*execute)(aotrun_method *method, const DLTensor *inputs,
                           size_t num_inputs, DLTensor *outputs,
                           size_t num_outputs);

  /* Releases a handle and everything it owns. Accepts NULL. Never fails. */
  void (*destroy)(aotrun_method *method);

  /* Sets an option. method == NULL sets a backend-wide option that applies to
   * handles created afterwards. Unknown keys return AOTRUN_ERR_NOT_FOUND; a
   * wrong type returns AOTRUN_ERR_INVALID_ARGUMENT. */
  aotrun_status (*set_option)(aotrun_method *method,
                              const aotrun_option *option);
  /* Reads an option by key into *out (out->key is set to the plugin's own
   * copy of the key). */
  aotrun_status (*get_option)(aotrun_method *method, const char *key,
                              aotrun_option *out);

  /* Number of inputs (kind AOTRUN_IO_INPUT) or outputs (AOTRUN_IO_OUTPUT). */
  aotrun_status (*get_num_io)(const aotrun_method *method, int32_t kind,
                              size_t *count);
  /* Declared dtype and shape of one input or output. out->struct_size must be
   * set by the caller; the plugin fills only what fits. */
  aotrun_status (*get_io_info)(const aotrun_method *method, int32_t kind,
                               size_t index, aotrun_io_info *out);

  /* The message of the last failed call on `method` (NULL: of the last failed
   * init on this thread). Owned by the plugin, valid until the next call on
   * the same handle (or thread). Never NULL: "" when there was no error. */
  const char *(*last_error)(const aotrun_method *method);

  /* ---- end of version 1.0: new members are appended below ---- */
} aotrun_backend_api;

/* ---- the entry symbol ---------------------------------------------------- */

#define AOTRUN_PLUGIN_ENTRY_SYMBOL "aotrun_plugin_get_api"

/*
 * The one symbol a plugin exports. host_abi_version is the host's
 * AOTRUN_ABI_VERSION. A plugin whose major version differs returns
 * AOTRUN_ERR_VERSION_MISMATCH and leaves *out NULL; otherwise it sets *out to
 * its static table (owned by the plugin, valid until the library is
 * unloaded). Thread-safe; creates no device context.
 */
typedef aotrun_status (*aotrun_plugin_get_api_fn)(
    uint32_t host_abi_version, const aotrun_backend_api **out);

#if defined(__GNUC__)
#define AOTRUN_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define AOTRUN_PLUGIN_EXPORT
#endif

/* Declares the entry symbol with C linkage and default visibility. */
#define AOTRUN_DECLARE_PLUGIN_ENTRY                                     \
  AOTRUN_PLUGIN_EXPORT aotrun_status aotrun_plugin_get_api(             \
      uint32_t host_abi_version, const aotrun_backend_api **out)

/* Human-readable name of a status code ("invalid argument", ...). Static. */
static inline const char *aotrun_status_string(aotrun_status s) {
  switch (s) {
    case AOTRUN_OK: return "ok";
    case AOTRUN_ERR_INVALID_ARGUMENT: return "invalid argument";
    case AOTRUN_ERR_NOT_FOUND: return "not found";
    case AOTRUN_ERR_NOT_SUPPORTED: return "not supported";
    case AOTRUN_ERR_ACCESS_FAILED: return "access failed";
    case AOTRUN_ERR_OUT_OF_MEMORY: return "out of memory";
    case AOTRUN_ERR_INTERNAL: return "internal error";
    case AOTRUN_ERR_VERSION_MISMATCH: return "ABI version mismatch";
    default: return "unknown status";
  }
}

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_PLUGIN_H */
