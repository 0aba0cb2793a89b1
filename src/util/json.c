#include "util/json.h"
#include "util/strbuf.h"

#include <math.h>
#include <stdlib.h>

const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

char *json_strdup(const cJSON *o, const char *key)
{
    const char *s = json_str(o, key);
    return s ? xstrdup(s) : NULL;
}

double json_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

char **json_string_list(const cJSON *a, int *n)
{
    int cap = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    char **out = xcalloc((size_t)cap + 1, sizeof *out);
    *n = 0;
    if (!cap) /* an object's members would walk like an array's items */
        return out;
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
    {
        if (cJSON_IsString(v) && v->valuestring)
            out[(*n)++] = xstrdup(v->valuestring);
    }
    return out;
}

cJSON *json_str_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

void json_add_str_or_null(cJSON *o, const char *key, const char *v)
{
    cJSON_AddItemToObject(o, key, json_str_or_null(v));
}

char *json_text(cJSON *doc)
{
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    char *out = xasprintf("%s\n", text);
    cJSON_free(text);
    return out;
}
