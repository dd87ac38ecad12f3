/*
 * aotrun_host.h: the host side of the aotrun plugin ABI.
 *
 * A C inference host uses this library to
 *   - load backend plugins (shared libraries exporting
 *     AOTRUN_PLUGIN_ENTRY_SYMBOL) and check their ABI version and table,
 *   - keep them in a registry by backend name,
 *   - run methods through a "host method" wrapper that can swap its backend
 *     at run time (the same processed bytes and specs are re-initialised on
 *     the new backend; a failed swap leaves the old one working),
 *   - serve a program directory through the named-data service.
 *
 * Errors: every fallible function returns an aotrun_status; the message that
 * names the thing (file, backend, member, key, both versions) is read with
 * aotrun_host_last_error() on the same thread, valid until the next failing
 * call of this library on that thread.
 *
 * Threading (docs/plugin-abi.md, "Threading rules of the host library"): a
 * registry is not locked: load plugins and destroy it while nothing else
 * uses it; lookups (find, at, count, host_method_open) may run in many
 * threads at once (host methods open and close from any thread: the count
 * of open methods per backend is atomic). A host method is used by one thread at a time (the plugin
 * ABI's rule); different host methods run concurrently. A program
 * directory's named-data service and its log level are thread-safe.
 *
 * NULL arguments: every function refuses a NULL pointer argument with
 * AOTRUN_ERR_INVALID_ARGUMENT (accessors return NULL or 0; close and destroy
 * accept NULL) instead of crashing.
 */
#ifndef AOTRUN_HOST_H
#define AOTRUN_HOST_H

#include <stddef.h>
#include <stdint.h>

/* By file name: the headers sit side by side in the repository
 * (plugin_api/) and when installed (PREFIX/include/aotrun/). */
#include "aotrun_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The message of the last failed call of this library on this thread ("" if
 * none). Static thread-local storage: never NULL, never freed. */
const char *aotrun_host_last_error(void);

/* ---- one loaded plugin --------------------------------------------------- */

typedef struct aotrun_backend aotrun_backend;

/*
 * Loads the plugin at `path` (a file path, never a library-search name: a
 * bare "libx.so" is opened as "./libx.so") with RTLD_NOW | RTLD_LOCAL, calls
 * its entry symbol with host_abi_version (normally AOTRUN_ABI_VERSION; tests
 * pass others to simulate older/newer hosts) and validates the table.
 * Errors:
 *   AOTRUN_ERR_ACCESS_FAILED     not loadable (the message holds dlerror()).
 *   AOTRUN_ERR_NOT_FOUND         no entry symbol (names the file and symbol).
 *   AOTRUN_ERR_VERSION_MISMATCH  the plugin refused the host's version, its
 *                                major differs ("plugin X has ABI 2.0, host
 *                                has 1.0"), its table is smaller than the
 *                                v1.0 table, or larger than the table of
 *                                the minor it declares (a newer minor: than
 *                                AOTRUN_TABLE_MAX_SIZE); the message names
 *                                the plugin, its version and both sizes.
 *   AOTRUN_ERR_INVALID_ARGUMENT  NULL table, a required member is NULL, or
 *                                an empty backend name.
 * *out is owned by the caller until aotrun_backend_close.
 */
aotrun_status aotrun_backend_open(const char *path, uint32_t host_abi_version,
                                  aotrun_backend **out);
/*
 * Unloads the backend: calls its deinit (ABI 1.1, when its table has one;
 * once per aotrun_backend_open, which called the entry symbol once), then
 * dlclose. Accepts NULL (AOTRUN_OK).
 * While host methods (aotrun_host_method) are open on it, nothing happens:
 * AOTRUN_ERR_INVALID_ARGUMENT names the backend and the count, and the
 * backend stays loaded and usable; close the methods and call again.
 * Methods a caller created itself through aotrun_backend_table() are not
 * counted: destroy them before closing (the plugin's deinit may free what
 * they use).
 */
aotrun_status aotrun_backend_close(aotrun_backend *backend);

/*
 * Several backends per library (ABI 1.1, AOTRUN_PLUGIN_LIST_SYMBOL).
 *
 * aotrun_backend_open opens ONE backend: the entry symbol's table when the
 * library exports it; a library with only the list symbol when it lists
 * exactly one backend; otherwise AOTRUN_ERR_INVALID_ARGUMENT naming the
 * backends it offers.
 *
 * aotrun_backend_open_all opens EVERY backend of the library: the list
 * symbol's tables (each checked like the entry symbol's: version, sizes,
 * required members, a non-empty name; names distinct; the message names
 * the table, "plugin X, backend 2 of 3: ...") or, without the list symbol,
 * the entry symbol's one table. All or nothing. *out is a malloc'd array
 * of *count backends in the library's order, which share the loaded
 * library (it is unloaded when the last of them closes); each may be
 * closed alone, or all and the array with aotrun_backend_close_all.
 */
aotrun_status aotrun_backend_open_all(const char *path,
                                      uint32_t host_abi_version,
                                      aotrun_backend ***out, size_t *count);
/* Closes backends[count-1..0] and frees the array. Accepts NULL. */
void aotrun_backend_close_all(aotrun_backend **backends, size_t count);

/* The backend's name (copied at load), the path it was loaded from, and the
 * ABI version its table declares. Owned by the backend. */
const char *aotrun_backend_name(const aotrun_backend *backend);
const char *aotrun_backend_path(const aotrun_backend *backend);
uint32_t aotrun_backend_abi_version(const aotrun_backend *backend);
/* The validated table (owned by the plugin, valid while loaded). */
const aotrun_backend_api *aotrun_backend_table(const aotrun_backend *backend);
/* 1 when available; else 0 and a NUL-terminated reason in reason[]
 * (is_available_ex(table) when the table has it, else is_available). */
int aotrun_backend_is_available(const aotrun_backend *backend, char *reason,
                                size_t reason_size);
/* Backend-wide option (applies to handles created afterwards), through
 * set_backend_option(table) when the table has it, else set_option(NULL). */
aotrun_status aotrun_backend_set_option(const aotrun_backend *backend,
                                        const aotrun_option *option);
/*
 * Reads a backend-wide option into *out; a string value is written into
 * buf[0..buf_size) and out->string_value points there, so it is the
 * caller's until it reuses buf, whatever other threads do. Through
 * get_backend_option(table, ..., buf, buf_size) when the table has it;
 * else (a 1.0 plugin) get_option(NULL, ...) and the string copied into buf
 * at once. A value that does not fit is AOTRUN_ERR_INVALID_ARGUMENT
 * (the message gives both sizes). out->key is the plugin's static copy.
 */
aotrun_status aotrun_backend_get_option_buf(const aotrun_backend *backend,
                                            const char *key,
                                            aotrun_option *out, char *buf,
                                            size_t buf_size);
/* The 1.0 form, kept: the plugin's get_option(NULL, ...). out->key and
 * out->string_value are owned by the plugin: valid until the next
 * backend-wide set_option, and, depending on the plugin, until this
 * thread's next backend-wide get_option (the CUDA and cpu_ref backends
 * keep one copy per thread) or, in a plugin that shares one buffer, until
 * ANY thread's next one. Prefer aotrun_backend_get_option_buf. */
aotrun_status aotrun_backend_get_option(const aotrun_backend *backend,
                                        const char *key, aotrun_option *out);

/*
 * Identity and devices (ABI 1.1). *out is zeroed and its struct_size set
 * by the host; on success it holds what the plugin wrote (its reported
 * struct_size, at most the host's). A plugin without the member (a 1.0
 * table, or NULL) gives AOTRUN_ERR_NOT_SUPPORTED "backend 'x' has no
 * get_info ..."; a failure of the plugin keeps its status and its
 * last_error(NULL) message. Thread-safe (the members are).
 *   get_info:     version, vendor, build: owned by the plugin, valid while
 *                 it is loaded; never NULL here ("" when the plugin has
 *                 none).
 *   device_count: devices the backend can run on (0..); without a driver
 *                 the plugin's error (the CUDA backend: ACCESS_FAILED).
 *   device_info:  device 0..count-1; name NUL-terminated.
 */
aotrun_status aotrun_backend_get_info(const aotrun_backend *backend,
                                      aotrun_backend_info *out);
aotrun_status aotrun_backend_device_count(const aotrun_backend *backend,
                                          int32_t *count);
aotrun_status aotrun_backend_device_info(const aotrun_backend *backend,
                                         int32_t device,
                                         aotrun_device_info *out);
/*
 * Whether the backend could init `processed` with `specs` (its can_run):
 * AOTRUN_OK, or the status init would give, the plugin's reason in
 * reason[0..reason_size) and the host's last error "backend 'x' cannot run
 * the program (not supported): <reason>". `host` (may be NULL) lets the
 * plugin read the program's named data (e.g. the model library's
 * kernels). Nothing is loaded onto a device. NOT_SUPPORTED naming the
 * backend and can_run when the plugin lacks it.
 */
aotrun_status aotrun_backend_can_run(const aotrun_backend *backend,
                                     const aotrun_host_api *host,
                                     const void *processed,
                                     size_t processed_size,
                                     const aotrun_key_value *specs,
                                     size_t num_specs, char *reason,
                                     size_t reason_size);
/* The backend's extension `name` (its get_extension, ABI 1.1): a pointer
 * owned by the plugin, valid while it is loaded, whose meaning the backend
 * defines; NULL when the backend does not offer it, has no get_extension
 * (a 1.0 table) or name is NULL. Sets no error. */
void *aotrun_backend_get_extension(const aotrun_backend *backend,
                                   const char *name);

/* ---- the registry -------------------------------------------------------- */

typedef struct aotrun_registry aotrun_registry;

aotrun_status aotrun_registry_create(aotrun_registry **out);
/*
 * Unloads every backend (aotrun_backend_close, in reverse load order) and
 * frees the registry. Accepts NULL (AOTRUN_OK). All or nothing: while any
 * host method is open on any of its backends it fails with
 * AOTRUN_ERR_INVALID_ARGUMENT (naming the backend and the count) and
 * leaves the registry and every backend as they were; close the methods
 * and call again.
 */
aotrun_status aotrun_registry_destroy(aotrun_registry *registry);
/* aotrun_backend_open_all(path, AOTRUN_ABI_VERSION) and adds every
 * backend of the library (one, or those its list symbol offers), all or
 * nothing; a backend whose name is already registered is refused with
 * AOTRUN_ERR_INVALID_ARGUMENT naming both files. *out (may be NULL) is the
 * library's first backend, owned by the registry; the others are found by
 * name (aotrun_registry_find) or index (aotrun_registry_at). */
aotrun_status aotrun_registry_load(aotrun_registry *registry, const char *path,
                                   const aotrun_backend **out);
size_t aotrun_registry_count(const aotrun_registry *registry);
/* The index-th backend in load order (NULL when out of range). */
const aotrun_backend *aotrun_registry_at(const aotrun_registry *registry,
                                         size_t index);
/* AOTRUN_ERR_NOT_FOUND names the backend and lists the loaded ones. */
aotrun_status aotrun_registry_find(const aotrun_registry *registry,
                                   const char *name,
                                   const aotrun_backend **out);

/* ---- host method: a method handle whose backend can be swapped ----------- */

typedef struct aotrun_host_method aotrun_host_method;

/*
 * Initialises `processed` with `specs` on the backend named `backend_name`.
 * The processed bytes and specs are copied (swap_backend re-uses them);
 * `host` must outlive the method. *out is owned by the caller until close.
 * A failed init is reported with the plugin's message (an unknown status
 * as INTERNAL, its number in the message); whatever the plugin left in its
 * out pointer is never passed to destroy.
 */
aotrun_status aotrun_host_method_open(const aotrun_registry *registry,
                                      const char *backend_name,
                                      const aotrun_host_api *host,
                                      const void *processed,
                                      size_t processed_size,
                                      const aotrun_key_value *specs,
                                      size_t num_specs,
                                      aotrun_host_method **out);
/* Destroys the backend handle and the copies. Accepts NULL. Its backend
 * can be unloaded once this was the last host method on it. */
void aotrun_host_method_close(aotrun_host_method *method);

/* Checks every tensor before the plugin sees it: the counts and each
 * tensor's rank against the method's declaration (AOTRUN_ERR_INVALID_ARGUMENT),
 * rank 0..AOTRUN_MAX_DIMS, a shape array for rank > 0, and strides NULL or row-major
 * (aotrun_strides_are_row_major; AOTRUN_ERR_NOT_SUPPORTED otherwise, the
 * message naming the tensor as the backend's get_io_info names it). */
aotrun_status aotrun_host_method_execute(aotrun_host_method *method,
                                         const DLTensor *inputs,
                                         size_t num_inputs, DLTensor *outputs,
                                         size_t num_outputs);
/*
 * ABI 1.1 execute_ex (docs/plugin-abi.md, "execute_ex"): a caller stream,
 * AOTRUN_EXECUTE_ASYNC, backend-allocated outputs (an output whose data is
 * NULL, with args->managed_outputs set) and AOTRUN_ERR_OUTPUT_TOO_SMALL.
 * Before the plugin sees anything it checks what execute checks (counts
 * against the method's io_info first, then ranks, shapes, strides; outputs
 * the backend allocates are not read), args->struct_size (at least up to
 * num_outputs, at most AOTRUN_TABLE_MAX_SIZE), unknown flags
 * (AOTRUN_ERR_NOT_SUPPORTED) and an output without data when
 * managed_outputs is NULL (AOTRUN_ERR_INVALID_ARGUMENT). It sets
 * too_small_output to -1 and every managed_outputs entry to NULL first.
 * After the call: on success each entry for a data-NULL output is a tensor
 * with a deleter, rank, shape and row-major strides (else
 * AOTRUN_ERR_INTERNAL, every entry deleted); on failure every entry is NULL
 * (what a faulty plugin left is deleted) and, for OUTPUT_TOO_SMALL,
 * too_small_output / needed_ndim / needed_shape say which output needs
 * what shape (a report out of range is AOTRUN_ERR_INTERNAL).
 * A plugin without execute_ex (ABI 1.0, or the member NULL) runs through
 * its execute when that is equivalent: no stream and no output to
 * allocate (ASYNC is allowed: a synchronous call satisfies it); otherwise
 * AOTRUN_ERR_NOT_SUPPORTED names the backend and what it cannot take.
 */
aotrun_status aotrun_host_method_execute_ex(aotrun_host_method *method,
                                            aotrun_execute_args *args);
/* Waits for the work execute_ex queued (the plugin's synchronize). A plugin
 * without synchronize: AOTRUN_OK when nothing can be pending (no ASYNC
 * execute_ex reached it since the last synchronize), else
 * AOTRUN_ERR_NOT_SUPPORTED (wait on the stream you passed). */
aotrun_status aotrun_host_method_synchronize(aotrun_host_method *method);
aotrun_status aotrun_host_method_num_io(const aotrun_host_method *method,
                                        int32_t kind, size_t *count);
/* Sets out->struct_size itself, to sizeof(aotrun_io_info); on return it is
 * what the plugin reported (ABI 1.1: min of both sizes). A plugin that
 * reports more than the host's size or less than the 1.0 size is an
 * AOTRUN_ERR_INTERNAL naming the backend. */
aotrun_status aotrun_host_method_io_info(const aotrun_host_method *method,
                                         int32_t kind, size_t index,
                                         aotrun_io_info *out);
/* Options are set on the current backend handle only; swap_backend does not
 * carry them over (the new backend may not know them). */
aotrun_status aotrun_host_method_set_option(aotrun_host_method *method,
                                            const aotrun_option *option);
/* Reads an option of the current backend handle (e.g. a figure the backend
 * measured during the last execute). An unknown key is the plugin's status
 * (AOTRUN_ERR_NOT_FOUND); a string value is owned by the plugin, valid
 * until the next set_option on the method (see aotrun_option). */
aotrun_status aotrun_host_method_get_option(const aotrun_host_method *method,
                                            const char *key,
                                            aotrun_option *out);
/*
 * Re-initialises the method on the backend `backend_name` with the same
 * processed bytes and specs. Only when that succeeds is the old handle
 * destroyed; on failure the method keeps running on its old backend.
 */
aotrun_status aotrun_host_method_swap_backend(aotrun_host_method *method,
                                              const char *backend_name);
/* The backend currently running the method. */
const aotrun_backend *aotrun_host_method_backend(
    const aotrun_host_method *method);

/* ---- logging ------------------------------------------------------------- */

/* Prints "[aotrun LEVEL] message" to stderr when level >= threshold. */
void aotrun_log_stderr(int32_t threshold, int32_t level, const char *message);
/* "DEBUG", "INFO", "WARNING" or "ERROR"; out-of-range levels are "ERROR"
 * (a message is never dropped because of an unknown level). */
const char *aotrun_log_level_name(int32_t level);
/* Parses "debug|info|warning|error" (any case) into *level. */
aotrun_status aotrun_log_level_parse(const char *text, int32_t *level);

/* ---- named data over a program directory --------------------------------- */

typedef struct aotrun_program_dir aotrun_program_dir;

/*
 * Serves PROGRAM/<key> for get_named_data: keys are plain file names ('/',
 * "." , ".." and "" are AOTRUN_ERR_INVALID_ARGUMENT); a missing file is
 * AOTRUN_ERR_NOT_FOUND naming the path. The bytes are mmapped read-only and
 * unmapped by release_named_data (or by close, for any still mapped). The
 * table's log member prints through aotrun_log_stderr with the directory's
 * threshold (default AOTRUN_LOG_WARNING).
 */
aotrun_status aotrun_program_dir_open(const char *path,
                                      aotrun_program_dir **out);
/* Accepts NULL. Every method using its host api must be closed first. */
void aotrun_program_dir_close(aotrun_program_dir *dir);
/* The host services table; owned by the directory, valid until close. */
const aotrun_host_api *aotrun_program_dir_host_api(
    const aotrun_program_dir *dir);
const char *aotrun_program_dir_path(const aotrun_program_dir *dir);
void aotrun_program_dir_set_log_level(aotrun_program_dir *dir,
                                      int32_t threshold);
/* Number of named data currently mapped (for leak checks). */
size_t aotrun_program_dir_num_mapped(const aotrun_program_dir *dir);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_HOST_H */
