/* test_program_json.c: see test_program_json.h. */
#include "testing/loader/test_program_json.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

/* The child of node called `key` (an index for arrays). */
static cJSON *child(cJSON *node, const char *key) {
  if (cJSON_IsArray(node)) return cJSON_GetArrayItem(node, atoi(key));
  return cJSON_GetObjectItemCaseSensitive(node, key);
}

static void set_child(cJSON *parent, const char *key, cJSON *value) {
  if (cJSON_IsArray(parent)) {
    int i = atoi(key);
    if (value == NULL)
      cJSON_DeleteItemFromArray(parent, i);
    else if (i >= cJSON_GetArraySize(parent))
      cJSON_AddItemToArray(parent, value);
    else
      cJSON_ReplaceItemInArray(parent, i, value);
    return;
  }
  if (value == NULL) {
    cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
  } else if (cJSON_GetObjectItemCaseSensitive(parent, key) != NULL) {
    cJSON_ReplaceItemInObjectCaseSensitive(parent, key, value);
  } else {
    cJSON_AddItemToObject(parent, key, value);
  }
}

char *json_with(const char *base, const char *path, const char *value) {
  cJSON *root = cJSON_Parse(base);
  assert_non_null(root);
  char *p = strdup(path);
  assert_non_null(p);
  cJSON *node = root;
  char *key = p;
  for (char *dot; (dot = strchr(key, '.')) != NULL; key = dot + 1) {
    *dot = '\0';
    node = child(node, key);
    assert_non_null(node);
  }
  cJSON *v = NULL;
  if (value != NULL) {
    v = cJSON_Parse(value);
    assert_non_null(v);
  }
  set_child(node, key, v);
  char *text = cJSON_PrintUnformatted(root);
  assert_non_null(text);
  cJSON_Delete(root);
  free(p);
  return text;
}

void *exact_copy(const void *bytes, size_t n) {
  void *d = malloc(n ? n : 1);
  assert_non_null(d);
  if (n) memcpy(d, bytes, n);
  return d;
}
