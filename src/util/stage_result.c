#include "util/json.h"
#include "util/stage_result.h"
#include "util/exitcodes.h"
#include "util/strbuf.h"

#include <string.h>

enum stage_status stage_status_of_exit(int exit_code)
{
    switch (exit_code) {
    case SB_EXIT_OK:
        return STAGE_OK;
    case SB_EXIT_WARN:
        return STAGE_WARN;
    case SB_EXIT_SKIPPED:
        return STAGE_SKIPPED;
    default:
        return STAGE_ERROR;
    }
}

static const char *const status_names[] = {"ok", "warn", "error", "skipped"};

const char *stage_status_name(enum stage_status s)
{
    return (unsigned)s < 4 ? status_names[s] : "error";
}

void stage_result_add(cJSON *doc, const char *command, int exit_code, const char *summary,
                      const char *fix, cJSON *payload)
{
    cJSON *r = cJSON_AddObjectToObject(doc, "result");
    cJSON_AddNumberToObject(r, "schema", STAGE_RESULT_SCHEMA);
    cJSON_AddStringToObject(r, "command", command);
    cJSON_AddStringToObject(r, "status", stage_status_name(stage_status_of_exit(exit_code)));
    cJSON_AddNumberToObject(r, "exit_code", exit_code);
    cJSON_AddStringToObject(r, "summary", summary ? summary : "");
    cJSON_AddItemToObject(r, "fix", json_str_or_null(fix));
    cJSON_AddItemToObject(r, "payload", payload ? payload : cJSON_CreateObject());
}

static int fail(char **error, char *why)
{
    *error = why;
    return -1;
}

int stage_result_read(const cJSON *doc, const char *command, struct stage_result *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(doc, "result");
    if (!cJSON_IsObject(r))
        return fail(error, xstrdup("its JSON has no \"result\" object"));
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
    if (!cJSON_IsNumber(schema) || schema->valuedouble != STAGE_RESULT_SCHEMA)
        return fail(error, xasprintf("its result is not schema %d", STAGE_RESULT_SCHEMA));
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(r, "command");
    if (!cJSON_IsString(cmd) || strcmp(cmd->valuestring, command))
        return fail(error, xasprintf("its result is not from %s", command));
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "exit_code");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(r, "status");
    if (!cJSON_IsNumber(code) || !cJSON_IsString(status))
        return fail(error, xstrdup("its result lacks \"status\" or \"exit_code\""));
    out->exit_code = code->valueint;
    out->status = stage_status_of_exit(out->exit_code);
    if (strcmp(status->valuestring, stage_status_name(out->status)))
        return fail(error, xasprintf("its result says \"%s\" with exit code %d",
                                     status->valuestring, out->exit_code));
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(r, "summary");
    const cJSON *fix = cJSON_GetObjectItemCaseSensitive(r, "fix");
    const cJSON *payload = cJSON_GetObjectItemCaseSensitive(r, "payload");
    if (!cJSON_IsString(summary) || !(cJSON_IsString(fix) || cJSON_IsNull(fix)) ||
        !cJSON_IsObject(payload))
        return fail(error, xstrdup("its result lacks \"summary\", \"fix\" or \"payload\""));
    out->command = cmd->valuestring;
    out->summary = summary->valuestring;
    out->fix = cJSON_IsString(fix) ? fix->valuestring : NULL;
    out->payload = payload;
    return 0;
}

const char *stage_payload_str(const struct stage_result *r, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->payload, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
