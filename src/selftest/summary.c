#include "selftest/summary.h"
#include "util/json.h"
#include "util/strbuf.h"

#include <string.h>

/* "int8-fp16, fp16" from the supported modes whose "safe" is want. */
static void mode_names(const cJSON *modes, int want, struct strbuf *sb)
{
    int n = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, modes)
    {
        const cJSON *safe = cJSON_GetObjectItemCaseSensitive(m, "safe");
        const cJSON *supported = cJSON_GetObjectItemCaseSensitive(m, "supported");
        const char *name = json_str(m, "mode");
        if (cJSON_IsBool(safe) && !cJSON_IsFalse(supported) && cJSON_IsTrue(safe) == want && name)
            sb_addf(sb, "%s%s", n++ ? ", " : "", name);
    }
}

static void device_line(const cJSON *d, struct strbuf *sb)
{
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(d, "index");
    const char *name = json_str(d, "name"), *rec = json_str(d, "recommended_mode");
    const char *hint = json_str(d, "build_hint");
    const cJSON *modes = cJSON_GetObjectItemCaseSensitive(d, "modes");
    sb_addf(sb, "GPU %d %s: ", cJSON_IsNumber(idx) ? idx->valueint : 0, name ? name : "?");
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "has_code"))) {
        sb_addf(sb, "no code for it%s%s", hint ? "; run: " : "", hint ? hint : "");
        return;
    }
    sb_addf(sb, "%s%s", rec ? "recommended mode " : "no mode is safe to recommend", rec ? rec : "");
    const cJSON *m;
    cJSON_ArrayForEach(m, modes)
    {
        const char *mode = json_str(m, "mode");
        const cJSON *tops = cJSON_GetObjectItemCaseSensitive(m, "tops");
        if (rec && mode && !strcmp(mode, rec) && cJSON_IsNumber(tops))
            sb_addf(sb, " (%.0f TOPS)", tops->valuedouble);
    }
    struct strbuf safe = STRBUF_INIT, unsafe = STRBUF_INIT;
    mode_names(modes, 1, &safe);
    mode_names(modes, 0, &unsafe);
    if (safe.len)
        sb_addf(sb, "; safe: %s", safe.buf);
    if (unsafe.len)
        sb_addf(sb, "; not safe: %s", unsafe.buf);
    if (!safe.len && !unsafe.len) {
        const char *verdict = json_str(d, "verdict");
        sb_addf(sb, "; %s", verdict ? verdict : "?");
    }
    sb_free(&safe);
    sb_free(&unsafe);
}

char *selftest_gpu_lines(const cJSON *devices)
{
    struct strbuf sb = STRBUF_INIT;
    const cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        if (sb.len)
            sb_adds(&sb, "\n");
        device_line(d, &sb);
    }
    return sb.len ? sb_detach(&sb) : NULL;
}
