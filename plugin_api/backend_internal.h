/* backend_internal.h: what the host library knows about a loaded plugin. */
#ifndef AOTRUN_BACKEND_INTERNAL_H
#define AOTRUN_BACKEND_INTERNAL_H

#include "plugin_api/aotrun_plugin.h"

struct aotrun_backend {
  void *lib;                     /* dlopen handle */
  char *path;                    /* the file as opened */
  char *name;                    /* copy of get_name() */
  const aotrun_backend_api *api; /* validated, owned by the plugin */
};

/* True when the plugin's table holds `field` (its struct_size covers the
 * member's last byte) and it is not NULL: every call into a plugin goes
 * through this gate (AOTRUN_TABLE_CAN of the public header). */
#define AOTRUN_BACKEND_CAN(b, field) AOTRUN_TABLE_CAN((b)->api, field)

#endif /* AOTRUN_BACKEND_INTERNAL_H */
