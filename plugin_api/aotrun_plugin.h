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
 * Versioning (docs/plugin-abi.md section 2)
 *   AOTRUN_ABI_VERSION packs major << 16 | minor; it is the version of this
 *   header, which a table carries in abi_version and a host passes to the
 *   entry symbol. Within one major version, tables only grow by appending
 *   members at the end; every table starts with the frozen pair (abi_version,
 *   struct_size). A minor version promises exactly the members listed under
 *   its "members of version 1.N" boundary, at the offsets asserted below, and
 *   AOTRUN_<TABLE>_SIZE_1_N is the size of the table up to the end of its
 *   last member. A host built for minor M loads a plugin built for minor N
 *   (either order): a caller uses a member only when the other side's
 *   struct_size covers the member's last byte (AOTRUN_TABLE_HAS) and the
 *   pointer is not NULL (AOTRUN_TABLE_CAN). A different major version is
 *   refused by both sides.
 *
 * Ownership phrases used below
 *   "borrowed for the call": valid only until the function returns.
 *   "copied by the callee":  the callee keeps its own copy.
 *   "owned by X until Y":    X frees it; valid until Y happens.
 *
 * Threading (docs/plugin-abi.md section 4 has the rule of every call)
 *   The table is immutable and may be read from any thread. Calls on one
 *   method handle must be serialised by the host (one call at a time); calls
 *   on different handles, inits and backend-wide options may run
 *   concurrently. get_name, is_available and last_error(NULL) are
 *   thread-safe; so are the backend-wide members of 1.1 (is_available_ex,
 *   init_ex, set/get_backend_option, get_info, get_device_count,
 *   get_device_info, can_run), which report errors through
 *   last_error(NULL) on the calling thread (docs/plugin-abi.md, "Thread
 *   rules of ABI 1.1"). deinit runs alone. Host services never call back
 *   into the plugin.
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

/* 1.0: the first release. 1.1: aotrun_backend_api appends get_extension,
 * the context members (backend_data, *_ex, backend options with a caller
 * buffer), identity and devices, can_run, execute_ex (caller stream, async,
 * backend-allocated outputs, AOTRUN_ERR_OUTPUT_TOO_SMALL with the needed
 * shape), synchronize and deinit; the list symbol for several backends per
 * library; io_info's struct_size reported back as min(caller size, plugin
 * size); the layout asserts, size constants and DLPack pins below. */
#define AOTRUN_ABI_VERSION_MAJOR 1
#define AOTRUN_ABI_VERSION_MINOR 1
#define AOTRUN_MAKE_VERSION(major, minor) \
  ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor)&0xFFFFu)))
#define AOTRUN_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define AOTRUN_VERSION_MINOR(v) ((uint32_t)(v)&0xFFFFu)
#define AOTRUN_ABI_VERSION \
  AOTRUN_MAKE_VERSION(AOTRUN_ABI_VERSION_MAJOR, AOTRUN_ABI_VERSION_MINOR)

/* Offset of the first byte after `member` of `type`. */
#define AOTRUN_MEMBER_END(type, member) \
  (offsetof(type, member) + sizeof(((type *)0)->member))

/*
 * AOTRUN_TABLE_HAS(table, member): true when the struct_size of `table` (a
 * pointer to any struct that starts with, or has, a uint32_t struct_size)
 * covers the LAST byte of `member`. Testing the member's end, never sizeof
 * or the member's start, is what keeps a member appended into an older
 * struct's tail padding from being read. Nothing outside the frozen
 * struct_size is read: the member's offset is computed, not loaded.
 * `table` is evaluated more than once.
 *
 * AOTRUN_TABLE_HAS(table, type, member), the 1.0 spelling, still works.
 */
#define AOTRUN_TABLE_HAS_2_(table, member)                                \
  ((size_t)((const char *)&(table)->member - (const char *)(table)) +    \
       sizeof((table)->member) <=                                         \
   (size_t)(table)->struct_size)
#define AOTRUN_TABLE_HAS_3_(table, type, member) \
  (AOTRUN_MEMBER_END(type, member) <= (size_t)(table)->struct_size)
#define AOTRUN_PICK_3_(a, b, c, name, ...) name
#define AOTRUN_EXPAND_(x) x
#define AOTRUN_TABLE_HAS(...)                                            \
  AOTRUN_EXPAND_(AOTRUN_PICK_3_(__VA_ARGS__, AOTRUN_TABLE_HAS_3_,        \
                                AOTRUN_TABLE_HAS_2_, unused)(__VA_ARGS__))

/* AOTRUN_TABLE_CAN(table, member): the table holds `member` (a function
 * pointer) and it is not NULL: the gate before every optional call. */
#define AOTRUN_TABLE_CAN(table, member) \
  (AOTRUN_TABLE_HAS_2_(table, member) && (table)->member != NULL)

/* ---- DLPack: the version the ABI uses ------------------------------------ */

/*
 * Tensors cross the boundary as DLPack 0.6 DLTensor / DLDevice / DLDataType
 * (Debian's libdlpack-dev 0.6 ships <dlpack/dlpack.h> with DLPACK_VERSION
 * 60). Their layout is unchanged in DLPack 0.7 to 1.x, so a plugin may build
 * against any of those headers; the asserts below check the layout. The
 * DLPack 1.x managed/versioned structs are not used by ABI 1.x.
 */
#define AOTRUN_DLPACK_MAJOR 0
#define AOTRUN_DLPACK_MINOR 6
#if defined(DLPACK_MAJOR_VERSION)
/* DLPack >= 1.0: same DLTensor layout. */
#elif defined(DLPACK_VERSION)
#if DLPACK_VERSION < 60
#error "aotrun_plugin.h needs <dlpack/dlpack.h> 0.6 or newer"
#endif
#else
#error "<dlpack/dlpack.h> defines no version: not a DLPack header"
#endif

/*
 * dtype codes newer than DLPack 0.6, with the numbers DLPack later gave them
 * (bool from 0.8, float8 from 1.1). An ABI dtype is {code, bits, lanes}:
 *   bool        {AOTRUN_DL_BOOL, 8, 1}   (one byte, 0 or 1)
 *   bfloat16    {kDLBfloat, 16, 1}
 *   float8_*    {AOTRUN_DL_FLOAT8_*, 8, 1}
 * and kDLInt / kDLUInt / kDLFloat / kDLComplex as in DLPack 0.6.
 */
#define AOTRUN_DL_BOOL 6u
#define AOTRUN_DL_FLOAT8_E4M3FN 10u
#define AOTRUN_DL_FLOAT8_E4M3FNUZ 11u
#define AOTRUN_DL_FLOAT8_E5M2 12u
#define AOTRUN_DL_FLOAT8_E5M2FNUZ 13u

/*
 * Strides. A DLTensor's `strides` may be NULL, which means compact row-major
 * (DLPack's own rule). When not NULL it must equal the compact row-major
 * strides, except that a dim of size 1 may have any stride and a tensor with
 * a zero-size dim may have any strides. Other layouts (transposed, sliced,
 * broadcast) are not part of ABI 1.x: the host library refuses them before
 * execute with AOTRUN_ERR_NOT_SUPPORTED, and a plugin may do the same.
 * Returns 1 when (ndim, shape, strides) satisfies this rule, 0 otherwise
 * (also for a negative size, a NULL shape of rank > 0, or strides whose
 * row-major products would overflow int64).
 */
static inline int aotrun_strides_are_row_major(int32_t ndim,
                                               const int64_t *shape,
                                               const int64_t *strides) {
  if (strides == NULL) return 1;
  if (ndim < 0 || (ndim > 0 && shape == NULL)) return 0;
  for (int32_t d = 0; d < ndim; d++) {
    if (shape[d] < 0) return 0;
    if (shape[d] == 0) return 1; /* empty: strides are never used */
  }
  int64_t expect = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (shape[d] != 1 && strides[d] != expect) return 0;
    if (d > 0) {
      if (expect > INT64_MAX / shape[d]) return 0;
      expect *= shape[d];
    }
  }
  return 1;
}

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
#define AOTRUN_ERR_OUTPUT_TOO_SMALL 8 /* 1.1: an output's buffer cannot hold the
                                         result; execute_ex reports the shape */
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
   * any thread (the host's threads in a call, and the plugin's own threads)
   * while a handle made with this host lives: the host makes it
   * thread-safe and never calls back into the plugin from it. */
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

/*
 * A typed option value for set_option/get_option. Its layout is frozen at
 * 1.0 (AOTRUN_OPTION_SIZE_1_0) and it never grows: get_option writes
 * exactly sizeof(aotrun_option), which is the same in every 1.x build. A
 * typed value that needs more room will come as a new struct that starts
 * with a struct_size, through new table members.
 */
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

/*
 * What a method declares for one input or output. Filled by get_io_info.
 * The caller sets struct_size to the size of its struct (sizeof in its
 * build) and zeroes the rest; the plugin writes at most
 * min(caller struct_size, its own sizeof) bytes and, from 1.1 on, sets
 * struct_size to that minimum (a 1.0 plugin leaves the caller's value). A
 * caller reads a member added after 1.0 only if AOTRUN_TABLE_HAS(info,
 * member). Every member below is 1.0 (AOTRUN_IO_INFO_SIZE_1_0).
 */
typedef struct aotrun_io_info {
  uint32_t struct_size; /* in: the caller's size; out: min(caller, plugin) */
  int32_t ndim;         /* rank, 0..AOTRUN_MAX_DIMS */
  const char *name;     /* owned by the method handle, valid while it lives */
  DLDataType dtype;
  int64_t shape[AOTRUN_MAX_DIMS]; /* AOTRUN_DYNAMIC_DIM for dynamic dims */
} aotrun_io_info;

/* Opaque per-method state created by init. */
typedef struct aotrun_method aotrun_method;

/* ---- 1.1: identity, devices, execute arguments ---------------------------- */

/*
 * Callee-filled structs of 1.1 (get_info, get_device_info) follow io_info's
 * rule: the caller sets struct_size to its sizeof and zeroes the rest; the
 * plugin writes at most min(caller size, own size) bytes and sets
 * struct_size to that minimum. Strings are owned by the plugin and valid
 * until the library is unloaded (get_info) or copied into the struct
 * (get_device_info: name[] is NUL-terminated, truncated).
 */
typedef struct aotrun_backend_info {
  uint32_t struct_size;
  uint32_t reserved_;      /* 0 */
  const char *version;     /* the backend's own version, e.g. "0.3.0" */
  const char *vendor;      /* who built it, e.g. "aotrun" */
  const char *build;       /* build details, e.g. "CUDA 13.0, cuDNN 9" */
} aotrun_backend_info;

#define AOTRUN_DEVICE_NAME_SIZE 256
typedef struct aotrun_device_info {
  uint32_t struct_size;
  int32_t device_type;     /* DLDeviceType, e.g. kDLCUDA */
  int32_t device_id;       /* the index get_device_info was called with */
  int32_t compute_major;   /* compute capability (CUDA); 0 where none */
  int32_t compute_minor;
  int32_t reserved_;       /* 0 */
  uint64_t total_memory;   /* bytes */
  uint64_t free_memory;    /* bytes, when the call was made */
  char name[AOTRUN_DEVICE_NAME_SIZE];
} aotrun_device_info;

/* execute_ex flags. */
/* Return once the work is queued: outputs are complete only after the
 * caller's stream (or synchronize(method)) has finished it. Without the
 * flag execute_ex returns after the outputs are written, as execute. */
#define AOTRUN_EXECUTE_ASYNC 1u

/*
 * The arguments of execute_ex. The caller sets struct_size to its sizeof
 * and zeroes what it does not use; the plugin reads only what
 * AOTRUN_TABLE_HAS(args, member) covers and writes the "out" members
 * likewise.
 */
typedef struct aotrun_execute_args {
  uint32_t struct_size;
  uint32_t flags;             /* AOTRUN_EXECUTE_* */
  const DLTensor *inputs;     /* as execute: borrowed for the call */
  size_t num_inputs;
  /* As execute: host-provided buffers whose shape holds the capacity and
   * receives the real shape. An output whose data is NULL is allocated by
   * the backend when managed_outputs is not NULL (see there). */
  DLTensor *outputs;
  size_t num_outputs;
  /* The caller's device stream (cudaStream_t for CUDA), or NULL for the
   * backend's own. The work is ordered after what the caller queued on it
   * before the call, and what it queues after the call sees the outputs. */
  void *stream;
  /* NULL, or an array of num_outputs entries the plugin fills: for each
   * output whose data is NULL, a tensor the backend allocated on the
   * method's device (its shape the real one, strides NULL or row-major),
   * owned by the caller, who calls its deleter once when done: from any
   * thread, also after the method is destroyed, but before the plugin
   * library is unloaded (the deleter is plugin code). NULL for the others.
   * It aliases no input and no other output. The other members of a
   * data-NULL output's DLTensor are not read. On failure every entry is
   * NULL. */
  DLManagedTensor **managed_outputs;
  /* out: with AOTRUN_ERR_OUTPUT_TOO_SMALL, the output that did not fit and
   * the shape it needs; too_small_output is -1 otherwise. The model has
   * run by then: a method that updates its buffers has advanced its state,
   * and a retry runs it again. */
  int64_t too_small_output;
  int32_t needed_ndim;
  int32_t reserved_;          /* 0 */
  int64_t needed_shape[AOTRUN_MAX_DIMS];
} aotrun_execute_args;

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
   * On failure *out is NULL, nothing is left to release (a host never passes
   * what a failed init left to destroy) and last_error(NULL) on this thread
   * says why. May run concurrently with other inits; it reads the
   * backend-wide options once, at its start. */
  aotrun_status (*init)(const aotrun_host_api *host, const void *processed,
                        size_t processed_size, const aotrun_key_value *specs,
                        size_t num_specs, aotrun_method **out);

  /* Runs the method once. inputs/outputs are borrowed for the call; their
   * data may be host or device memory (DLDevice says which). The plugin
   * writes each output's data and, for dynamic dims, its shape array (the
   * host provides shape arrays of the declared rank). An output that does not
   * fit is an error that names it. Returns after the outputs are written.
   * Inputs are never written. Outputs must not overlap inputs or each other.
   * On failure outputs may be partly written; the handle stays usable
   * (docs/plugin-abi.md, "Failure rules"). */
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

  /* ---- end of version 1.0 (AOTRUN_BACKEND_API_SIZE_1_0) ---- */
  /* ---- members of version 1.1 ---- */

  /* Optional (NULL, or a table of 1.0 size: the backend has no
   * extensions). Returns the backend-specific entry point or extension
   * table called `name`, or NULL when the backend does not offer it. What
   * the pointer points to (a function, cast back by the caller, or better a
   * static struct that starts with a uint32_t struct_size) is defined by
   * the backend that names it; a name's contract never changes, a changed
   * contract gets a new name. Names are "<backend>.<what>.v<N>", e.g.
   * "minimal.stats.v1". `name` is borrowed for the call; the result is
   * owned by the plugin and valid until the library is unloaded.
   * Thread-safe; creates no device context. @since 1.1 */
  void *(*get_extension)(const char *name);

  /* -- context: each call below gets the table it came through as `self`,
   * so one library can offer several backends (see
   * AOTRUN_PLUGIN_LIST_SYMBOL) and keep per-backend state in
   * self->backend_data instead of globals. @since 1.1 -- */

  /* The plugin's per-backend object; the host never reads through it. The
   * table stays const: state that changes (backend options) lives in the
   * object it points to, guarded by the plugin. */
  void *backend_data;
  /* Optional; the context-taking forms of is_available and init, with the
   * 1.0 members' contracts. A host calls them when present, the 1.0
   * members otherwise; a plugin that has them still fills the 1.0 members
   * (for 1.0 hosts), usually with its first backend. */
  int32_t (*is_available_ex)(const struct aotrun_backend_api *self,
                             char *reason, size_t reason_size);
  aotrun_status (*init_ex)(const struct aotrun_backend_api *self,
                           const aotrun_host_api *host, const void *processed,
                           size_t processed_size, const aotrun_key_value *specs,
                           size_t num_specs, aotrun_method **out);
  /* Optional; backend-wide options. get_backend_option writes a string
   * value into buf[0..buf_size) (out->string_value points there; too small:
   * AOTRUN_ERR_INVALID_ARGUMENT), so no call shares a buffer with another
   * thread; out->key points to the plugin's static copy of the key. Both
   * are thread-safe and may run while other threads init or execute (a
   * value set applies to methods created afterwards). Errors of these
   * calls are read with last_error(NULL) on the calling thread. */
  aotrun_status (*set_backend_option)(const struct aotrun_backend_api *self,
                                      const aotrun_option *option);
  aotrun_status (*get_backend_option)(const struct aotrun_backend_api *self,
                                      const char *key, aotrun_option *out,
                                      char *buf, size_t buf_size);

  /* -- identity, devices and can_run (optional). @since 1.1 -- */
  /* Identity: strings owned by the plugin, valid until unload (NULL:
   * unknown). Devices: the count, and one device by index 0..count-1
   * (AOTRUN_ERR_INVALID_ARGUMENT otherwise). Counting creates no device
   * context; device info may (free memory needs one). Without a driver
   * these fail with AOTRUN_ERR_ACCESS_FAILED, never abort. All are
   * thread-safe; errors go to last_error(NULL) on the calling thread. */
  aotrun_status (*get_info)(const struct aotrun_backend_api *self,
                            aotrun_backend_info *out);
  aotrun_status (*get_device_count)(const struct aotrun_backend_api *self,
                                    int32_t *count);
  aotrun_status (*get_device_info)(const struct aotrun_backend_api *self,
                                   int32_t device, aotrun_device_info *out);
  /* Whether init_ex(self, host, processed, specs) would succeed here,
   * judged without uploading weights or creating a method: AOTRUN_OK, or
   * the status init would return and a NUL-terminated reason in
   * reason[0..reason_size) (also in last_error(NULL) on this thread).
   * `host` gives the named data the program refers to (the model library,
   * whose kernels and imports are checked); it may be NULL, and then only
   * what `processed` and the specs say is checked. Everything is borrowed
   * for the call. Thread-safe. */
  aotrun_status (*can_run)(const struct aotrun_backend_api *self,
                           const aotrun_host_api *host,
                           const void *processed, size_t processed_size,
                           const aotrun_key_value *specs, size_t num_specs,
                           char *reason, size_t reason_size);

  /* -- execution (optional). @since 1.1 -- */
  /* execute with a caller stream, async completion and backend-allocated
   * outputs (aotrun_execute_args). The current device of the calling
   * thread is the same on return as on entry. */
  aotrun_status (*execute_ex)(aotrun_method *method,
                              aotrun_execute_args *args);
  /* Waits until the work execute_ex queued for `method` has finished;
   * reports a device error found then. */
  aotrun_status (*synchronize)(aotrun_method *method);

  /* -- unload (optional). @since 1.1 -- */
  /* Balances one successful entry-symbol call: the host calls it once per
   * such call, after the last method it created on the table is destroyed,
   * while no other call into the table runs, and before dlclose. A library
   * opened twice gets two calls: the plugin frees what it made for the
   * whole process (streams, library handles, workspaces, caches,
   * thread-local state, dlopen handles) at the last one, so that nothing
   * refers into it after dlclose; with handles still alive it frees
   * nothing they use. Never called for a table the host refused. After it
   * the table is used again only after a new entry-symbol call. Never
   * fails. */
  void (*deinit)(const struct aotrun_backend_api *self);

  /* ---- end of version 1.1 (AOTRUN_BACKEND_API_SIZE_1_1): new members are
   * appended below ---- */
} aotrun_backend_api;

/* ---- sizes of each version, and the layout asserts ----------------------- */

/*
 * The size of each released table up to the end of its last member, in
 * terms of the pointer size (P) so it holds on 32- and 64-bit targets. A
 * host refuses a table smaller than AOTRUN_BACKEND_API_SIZE_1_0, and a
 * table larger than the size of the minor it declares (when the host knows
 * that minor) or than AOTRUN_TABLE_MAX_SIZE (a newer minor).
 */
#define AOTRUN_PTR_SIZE_ sizeof(void *)
#define AOTRUN_BACKEND_API_SIZE_1_0 ((size_t)8 + 10 * AOTRUN_PTR_SIZE_)
#define AOTRUN_BACKEND_API_SIZE_1_1 ((size_t)8 + 23 * AOTRUN_PTR_SIZE_)
#define AOTRUN_BACKEND_API_SIZE AOTRUN_BACKEND_API_SIZE_1_1 /* this header */
#define AOTRUN_HOST_API_SIZE_1_0 ((size_t)8 + 6 * AOTRUN_PTR_SIZE_)
#define AOTRUN_HOST_API_SIZE AOTRUN_HOST_API_SIZE_1_0 /* unchanged in 1.1 */
/* Upper bound of any table of any 1.x minor (511 pointers on 64-bit). */
#define AOTRUN_TABLE_MAX_SIZE ((size_t)4096)

/* In-struct alignment of int64_t (4 on i386, 8 on most other targets). */
typedef struct aotrun_align_i64_ {
  char c;
  int64_t v;
} aotrun_align_i64_;
#define AOTRUN_I64_ALIGN_ offsetof(aotrun_align_i64_, v)
#define AOTRUN_ALIGN_UP_(n, a) (((size_t)(n) + (a)-1) / (a) * (a))
#define AOTRUN_MAX_(a, b) ((a) > (b) ? (a) : (b))

/* aotrun_io_info and aotrun_option (1.0): shape / int_value at the next
 * int64_t boundary; the struct rounded up to its alignment. */
#define AOTRUN_IO_INFO_SHAPE_OFFSET_ \
  AOTRUN_ALIGN_UP_(12 + AOTRUN_PTR_SIZE_, AOTRUN_I64_ALIGN_)
#define AOTRUN_IO_INFO_SIZE_1_0                                    \
  AOTRUN_ALIGN_UP_(AOTRUN_IO_INFO_SHAPE_OFFSET_ + 8 * AOTRUN_MAX_DIMS, \
                   AOTRUN_MAX_(AOTRUN_PTR_SIZE_, AOTRUN_I64_ALIGN_))
#define AOTRUN_OPTION_INT_OFFSET_ \
  AOTRUN_ALIGN_UP_(AOTRUN_PTR_SIZE_ + 8, AOTRUN_I64_ALIGN_)
#define AOTRUN_OPTION_SIZE_1_0                                       \
  AOTRUN_ALIGN_UP_(AOTRUN_OPTION_INT_OFFSET_ + 8 + AOTRUN_PTR_SIZE_, \
                   AOTRUN_MAX_(AOTRUN_PTR_SIZE_, AOTRUN_I64_ALIGN_))

/* The 1.1 structs (backend_info, device_info, execute_args), as 1.1
 * defines them: a caller or plugin of a later minor compares struct_size
 * against these to know which members the other side has. */
#define AOTRUN_BACKEND_INFO_SIZE_1_1 ((size_t)8 + 3 * AOTRUN_PTR_SIZE_)
#define AOTRUN_DEVICE_INFO_MEMORY_OFFSET_ AOTRUN_ALIGN_UP_(24, AOTRUN_I64_ALIGN_)
#define AOTRUN_DEVICE_INFO_SIZE_1_1                                         \
  AOTRUN_ALIGN_UP_(AOTRUN_DEVICE_INFO_MEMORY_OFFSET_ + 16 +                 \
                       AOTRUN_DEVICE_NAME_SIZE,                             \
                   AOTRUN_I64_ALIGN_)
#define AOTRUN_EXECUTE_ARGS_REPORT_OFFSET_ \
  AOTRUN_ALIGN_UP_(8 + 6 * AOTRUN_PTR_SIZE_, AOTRUN_I64_ALIGN_)
#define AOTRUN_EXECUTE_ARGS_SIZE_1_1                                     \
  AOTRUN_ALIGN_UP_(AOTRUN_EXECUTE_ARGS_REPORT_OFFSET_ + 16 +             \
                       8 * AOTRUN_MAX_DIMS,                              \
                   AOTRUN_MAX_(AOTRUN_PTR_SIZE_, AOTRUN_I64_ALIGN_))

#ifdef __cplusplus
#define AOTRUN_STATIC_ASSERT_(c, m) static_assert(c, m)
#else
#define AOTRUN_STATIC_ASSERT_(c, m) _Static_assert(c, m)
#endif
#define AOTRUN_ASSERT_AT_(type, member, offset)                \
  AOTRUN_STATIC_ASSERT_(offsetof(type, member) == (offset),    \
                        "aotrun ABI: " #type "." #member       \
                        " moved: this header does not match the ABI")

/* The frozen layouts. A plugin or host built with an edited or mismatched
 * header fails here at compile time instead of at run time. */
#define AOTRUN_P_ AOTRUN_PTR_SIZE_
AOTRUN_ASSERT_AT_(aotrun_backend_api, abi_version, 0);
AOTRUN_ASSERT_AT_(aotrun_backend_api, struct_size, 4);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_name, 8);
AOTRUN_ASSERT_AT_(aotrun_backend_api, is_available, 8 + 1 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, init, 8 + 2 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, execute, 8 + 3 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, destroy, 8 + 4 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, set_option, 8 + 5 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_option, 8 + 6 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_num_io, 8 + 7 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_io_info, 8 + 8 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, last_error, 8 + 9 * AOTRUN_P_);
AOTRUN_STATIC_ASSERT_(AOTRUN_MEMBER_END(aotrun_backend_api, last_error) ==
                          AOTRUN_BACKEND_API_SIZE_1_0,
                      "aotrun ABI: backend table 1.0 size");
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_extension, 8 + 10 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, backend_data, 8 + 11 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, is_available_ex, 8 + 12 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, init_ex, 8 + 13 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, set_backend_option, 8 + 14 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_backend_option, 8 + 15 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_info, 8 + 16 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_device_count, 8 + 17 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, get_device_info, 8 + 18 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, can_run, 8 + 19 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, execute_ex, 8 + 20 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, synchronize, 8 + 21 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_api, deinit, 8 + 22 * AOTRUN_P_);
AOTRUN_STATIC_ASSERT_(AOTRUN_MEMBER_END(aotrun_backend_api, deinit) ==
                          AOTRUN_BACKEND_API_SIZE_1_1,
                      "aotrun ABI: backend table 1.1 size");
AOTRUN_STATIC_ASSERT_(sizeof(aotrun_backend_api) == AOTRUN_BACKEND_API_SIZE &&
                          AOTRUN_BACKEND_API_SIZE <= AOTRUN_TABLE_MAX_SIZE,
                      "aotrun ABI: the backend table ends at its last member");

AOTRUN_ASSERT_AT_(aotrun_host_api, abi_version, 0);
AOTRUN_ASSERT_AT_(aotrun_host_api, struct_size, 4);
AOTRUN_ASSERT_AT_(aotrun_host_api, ctx, 8);
AOTRUN_ASSERT_AT_(aotrun_host_api, log, 8 + 1 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_host_api, get_named_data, 8 + 2 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_host_api, release_named_data, 8 + 3 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_host_api, alloc, 8 + 4 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_host_api, free, 8 + 5 * AOTRUN_P_);
AOTRUN_STATIC_ASSERT_(AOTRUN_MEMBER_END(aotrun_host_api, free) ==
                              AOTRUN_HOST_API_SIZE_1_0 &&
                          sizeof(aotrun_host_api) == AOTRUN_HOST_API_SIZE,
                      "aotrun ABI: host table 1.0 size");

AOTRUN_ASSERT_AT_(aotrun_key_value, key, 0);
AOTRUN_ASSERT_AT_(aotrun_key_value, value, AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_option, key, 0);
AOTRUN_ASSERT_AT_(aotrun_option, type, AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_option, bool_value, AOTRUN_P_ + 4);
AOTRUN_ASSERT_AT_(aotrun_option, int_value, AOTRUN_OPTION_INT_OFFSET_);
AOTRUN_ASSERT_AT_(aotrun_option, string_value, AOTRUN_OPTION_INT_OFFSET_ + 8);
AOTRUN_STATIC_ASSERT_(sizeof(aotrun_option) == AOTRUN_OPTION_SIZE_1_0,
                      "aotrun ABI: aotrun_option is frozen at its 1.0 size");
AOTRUN_ASSERT_AT_(aotrun_io_info, struct_size, 0);
AOTRUN_ASSERT_AT_(aotrun_io_info, ndim, 4);
AOTRUN_ASSERT_AT_(aotrun_io_info, name, 8);
AOTRUN_ASSERT_AT_(aotrun_io_info, dtype, 8 + AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_io_info, shape, AOTRUN_IO_INFO_SHAPE_OFFSET_);
AOTRUN_STATIC_ASSERT_(sizeof(aotrun_io_info) == AOTRUN_IO_INFO_SIZE_1_0,
                      "aotrun ABI: io_info 1.0 size");

AOTRUN_ASSERT_AT_(aotrun_backend_info, reserved_, 4);
AOTRUN_ASSERT_AT_(aotrun_backend_info, version, 8);
AOTRUN_ASSERT_AT_(aotrun_backend_info, vendor, 8 + AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_backend_info, build, 8 + 2 * AOTRUN_P_);
AOTRUN_STATIC_ASSERT_(sizeof(aotrun_backend_info) ==
                          AOTRUN_BACKEND_INFO_SIZE_1_1,
                      "aotrun ABI: backend_info 1.1 size");
AOTRUN_ASSERT_AT_(aotrun_device_info, device_type, 4);
AOTRUN_ASSERT_AT_(aotrun_device_info, device_id, 8);
AOTRUN_ASSERT_AT_(aotrun_device_info, compute_major, 12);
AOTRUN_ASSERT_AT_(aotrun_device_info, compute_minor, 16);
AOTRUN_ASSERT_AT_(aotrun_device_info, reserved_, 20);
AOTRUN_ASSERT_AT_(aotrun_device_info, total_memory,
                  AOTRUN_DEVICE_INFO_MEMORY_OFFSET_);
AOTRUN_ASSERT_AT_(aotrun_device_info, free_memory,
                  AOTRUN_DEVICE_INFO_MEMORY_OFFSET_ + 8);
AOTRUN_ASSERT_AT_(aotrun_device_info, name,
                  AOTRUN_DEVICE_INFO_MEMORY_OFFSET_ + 16);
AOTRUN_STATIC_ASSERT_(sizeof(aotrun_device_info) ==
                          AOTRUN_DEVICE_INFO_SIZE_1_1,
                      "aotrun ABI: device_info 1.1 size");
AOTRUN_ASSERT_AT_(aotrun_execute_args, flags, 4);
AOTRUN_ASSERT_AT_(aotrun_execute_args, inputs, 8);
AOTRUN_ASSERT_AT_(aotrun_execute_args, num_inputs, 8 + AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_execute_args, outputs, 8 + 2 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_execute_args, num_outputs, 8 + 3 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_execute_args, stream, 8 + 4 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_execute_args, managed_outputs, 8 + 5 * AOTRUN_P_);
AOTRUN_ASSERT_AT_(aotrun_execute_args, too_small_output,
                  AOTRUN_EXECUTE_ARGS_REPORT_OFFSET_);
AOTRUN_ASSERT_AT_(aotrun_execute_args, needed_ndim,
                  AOTRUN_EXECUTE_ARGS_REPORT_OFFSET_ + 8);
AOTRUN_ASSERT_AT_(aotrun_execute_args, reserved_,
                  AOTRUN_EXECUTE_ARGS_REPORT_OFFSET_ + 12);
AOTRUN_ASSERT_AT_(aotrun_execute_args, needed_shape,
                  AOTRUN_EXECUTE_ARGS_REPORT_OFFSET_ + 16);
AOTRUN_STATIC_ASSERT_(sizeof(aotrun_execute_args) ==
                          AOTRUN_EXECUTE_ARGS_SIZE_1_1,
                      "aotrun ABI: execute_args 1.1 size");

/* DLPack 0.6 layout (unchanged through 1.x). */
AOTRUN_STATIC_ASSERT_(sizeof(DLDataType) == 4 && sizeof(DLDevice) == 8,
                      "aotrun ABI: DLDataType / DLDevice size");
AOTRUN_ASSERT_AT_(DLDataType, bits, 1);
AOTRUN_ASSERT_AT_(DLDataType, lanes, 2);
AOTRUN_ASSERT_AT_(DLDevice, device_id, 4);
AOTRUN_ASSERT_AT_(DLTensor, data, 0);
AOTRUN_ASSERT_AT_(DLTensor, device, AOTRUN_P_);
AOTRUN_ASSERT_AT_(DLTensor, ndim, AOTRUN_P_ + 8);
AOTRUN_ASSERT_AT_(DLTensor, dtype, AOTRUN_P_ + 12);
AOTRUN_ASSERT_AT_(DLTensor, shape, AOTRUN_P_ + 16);
AOTRUN_ASSERT_AT_(DLTensor, strides, 2 * AOTRUN_P_ + 16);
AOTRUN_ASSERT_AT_(DLTensor, byte_offset,
                  AOTRUN_ALIGN_UP_(3 * AOTRUN_P_ + 16, AOTRUN_I64_ALIGN_));
#undef AOTRUN_P_

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

/*
 * 1.1, optional: a library that offers several backends exports this symbol
 * too; a host that knows it calls it instead of the entry symbol and
 * registers each table (each validated like the entry symbol's, each under
 * its own get_name; names are distinct). *tables points to `*count` (>= 1)
 * static tables (owned by the plugin, valid until the library is
 * unloaded). Same version rule as the entry symbol; thread-safe; creates
 * no device context. Such a library should still export the entry symbol
 * (returning its first backend) so that 1.0 hosts can use it. Each
 * table's get_name (a 1.0 member without `self`) must be its own
 * function.
 */
#define AOTRUN_PLUGIN_LIST_SYMBOL "aotrun_plugin_get_backends"
typedef aotrun_status (*aotrun_plugin_get_backends_fn)(
    uint32_t host_abi_version, const aotrun_backend_api *const **tables,
    size_t *count);

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
    case AOTRUN_ERR_OUTPUT_TOO_SMALL: return "output buffer too small";
    default: return "unknown status";
  }
}

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_PLUGIN_H */
