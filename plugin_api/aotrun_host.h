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
 * threads at once. A host method is used by one thread at a time (the plugin
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
/* Unloads the library. Accepts NULL. No method of it may still be open. */
void aotrun_backend_close(aotrun_backend *backend);

/* The backend's name (copied at load), the path it was loaded from, and the
 * ABI version its table declares. Owned by the backend. */
const char *aotrun_backend_name(const aotrun_backend *backend);
const char *aotrun_backend_path(const aotrun_backend *backend);
uint32_t aotrun_backend_abi_version(const aotrun_backend *backend);
/* The validated table (owned by the plugin, valid while loaded). */
const aotrun_backend_api *aotrun_backend_table(const aotrun_backend *backend);
/* 1 when available; else 0 and a NUL-terminated reason in reason[]. */
int aotrun_backend_is_available(const aotrun_backend *backend, char *reason,
                                size_t reason_size);
/* Backend-wide option (applies to handles created afterwards). */
aotrun_status aotrun_backend_set_option(const aotrun_backend *backend,
                                        const aotrun_option *option);
/* Reads a backend-wide option into *out (the plugin's get_option(NULL, ...);
 * out->key and out->string_value are owned by the plugin, valid until the
 * next set_option on the backend). */
aotrun_status aotrun_backend_get_option(const aotrun_backend *backend,
                                        const char *key, aotrun_option *out);
/* The backend's extension `name` (its get_extension, ABI 1.1): a pointer
 * owned by the plugin, valid while it is loaded, whose meaning the backend
 * defines; NULL when the backend does not offer it, has no get_extension
 * (a 1.0 table) or name is NULL. Sets no error. */
void *aotrun_backend_get_extension(const aotrun_backend *backend,
                                   const char *name);

/* ---- the registry -------------------------------------------------------- */

typedef struct aotrun_registry aotrun_registry;

aotrun_status aotrun_registry_create(aotrun_registry **out);
/* Unloads every backend. Accepts NULL. Close all host methods first. */
void aotrun_registry_destroy(aotrun_registry *registry);
/* aotrun_backend_open(path, AOTRUN_ABI_VERSION) and adds the backend; a
 * second backend with an already registered name is refused with
 * AOTRUN_ERR_INVALID_ARGUMENT naming both files. *out (may be NULL) is owned
 * by the registry. */
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
 */
aotrun_status aotrun_host_method_open(const aotrun_registry *registry,
                                      const char *backend_name,
                                      const aotrun_host_api *host,
                                      const void *processed,
                                      size_t processed_size,
                                      const aotrun_key_value *specs,
                                      size_t num_specs,
                                      aotrun_host_method **out);
/* Destroys the backend handle and the copies. Accepts NULL. */
void aotrun_host_method_close(aotrun_host_method *method);

/* Checks every tensor before the plugin sees it: rank 0..AOTRUN_MAX_DIMS,
 * a shape array for rank > 0, and strides NULL or row-major
 * (aotrun_strides_are_row_major; AOTRUN_ERR_NOT_SUPPORTED otherwise, the
 * message naming the tensor as the backend's get_io_info names it). */
aotrun_status aotrun_host_method_execute(aotrun_host_method *method,
                                         const DLTensor *inputs,
                                         size_t num_inputs, DLTensor *outputs,
                                         size_t num_outputs);
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
