/* The small cJSON idioms every command repeats: reading a field that may be missing or of
 * another type, and turning a document into the text sagebuild writes. */
#ifndef SB_UTIL_JSON_H
#define SB_UTIL_JSON_H

#include <cJSON.h>

/* o[key] when it is a string, else NULL; borrowed from o. */
const char *json_str(const cJSON *o, const char *key);
/* The same, as a heap copy. */
char *json_strdup(const cJSON *o, const char *key);
/* o[key] when it is a number, else NAN. */
double json_num(const cJSON *o, const char *key);
/* The strings of array a (other items left out) as a NULL-terminated heap list; *n their
 * number. An empty list when a is not an array. */
char **json_string_list(const cJSON *a, int *n);
/* A JSON string, or null when s is NULL. */
cJSON *json_str_or_null(const char *s);
/* Adds o[key]: v as a string, or null when v is NULL. */
void json_add_str_or_null(cJSON *o, const char *key, const char *v);
/* doc pretty-printed with a final newline, and doc deleted. Heap string. */
char *json_text(cJSON *doc);

#endif
