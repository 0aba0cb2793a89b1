#include "wheel/wheelfmt.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *wheel_version(const char *cli_version)
{
    struct strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "%s+%s.", WHEEL_API_VERSION, WHEEL_LOCAL_LABEL);
    /* PEP 440 local labels hold ASCII letters, digits and '.' only ("0.1.0-rc1" → "0.1.0.rc1"). */
    int last_dot = 1;
    for (const char *p = cli_version ? cli_version : ""; *p; p++) {
        if (isalnum((unsigned char)*p)) {
            sb_add(&sb, p, 1);
            last_dot = 0;
        } else if (!last_dot) {
            sb_adds(&sb, ".");
            last_dot = 1;
        }
    }
    if (last_dot) /* nothing usable after the label, or a trailing separator */
        sb.buf[--sb.len] = '\0';
    return sb_detach(&sb);
}

int wheel_version_is_ours(const char *version)
{
    const char *plus = version ? strchr(version, '+') : NULL;
    return plus && !strncmp(plus + 1, WHEEL_LOCAL_LABEL, strlen(WHEEL_LOCAL_LABEL));
}

char *wheel_platform_tag(const char *machine)
{
    if (!machine || !*machine)
        return NULL;
    for (const char *p = machine; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return NULL;
    return xasprintf("linux_%s", machine);
}

char *wheel_tag(const char *machine)
{
    char *plat = wheel_platform_tag(machine);
    char *tag = plat ? xasprintf("py3-none-%s", plat) : NULL;
    free(plat);
    return tag;
}

char *wheel_file_name(const char *version, const char *machine)
{
    char *tag = wheel_tag(machine);
    char *name = tag && version ? xasprintf("%s-%s-%s.whl", WHEEL_DIST_NAME, version, tag) : NULL;
    free(tag);
    return name;
}

char *wheel_dist_info_dir(const char *version)
{
    return xasprintf("%s-%s.dist-info", WHEEL_DIST_NAME, version);
}

char *wheel_metadata_text(const struct wheel_meta *m)
{
    struct strbuf sb = STRBUF_INIT;
    sb_addf(&sb,
            "Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: SageAttention %s API over libsageattn, built by sagebuild %s (not the "
            "upstream package)\n"
            "Platform: linux\n"
            "Requires-Python: >=3.8\n"
            "Description-Content-Type: text/plain\n"
            "\n",
            WHEEL_DIST_NAME, m->version, WHEEL_API_VERSION, m->cli_version);
    sb_addf(&sb,
            "A drop-in `sageattention` made by sagebuild: pure Python over the C ABI of the\n"
            "libsageattn kernels shipped in sageattention/_lib/, so it does not depend on\n"
            "torch's C++ ABI.\n\n"
            "Kernels built for: %s\n",
            m->archs && *m->archs ? m->archs : "(unknown)");
    if (m->nvcc && *m->nvcc)
        sb_addf(&sb, "Compiled with nvcc %s\n", m->nvcc);
    return sb_detach(&sb);
}

char *wheel_wheel_text(const char *tag, const char *cli_version)
{
    return xasprintf("Wheel-Version: 1.0\n"
                     "Generator: sagebuild %s\n"
                     "Root-Is-Purelib: false\n"
                     "Tag: %s\n",
                     cli_version, tag);
}

char *wheel_top_level_text(void)
{
    return xstrdup(WHEEL_DIST_NAME "\n");
}

char *wheel_b64url_nopad(const unsigned char *data, size_t len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = xmalloc(len / 3 * 4 + 4 + 1);
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8 | data[i + 2];
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = alphabet[v >> 6 & 63];
        out[o++] = alphabet[v & 63];
    }
    if (len - i == 1) {
        unsigned v = (unsigned)data[i] << 16;
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
    } else if (len - i == 2) {
        unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8;
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = alphabet[v >> 6 & 63];
    }
    out[o] = '\0';
    return out;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *wheel_record_digest(const char *sha256_hex)
{
    if (!sha256_hex || strlen(sha256_hex) != 64)
        return NULL;
    unsigned char raw[32];
    for (int i = 0; i < 32; i++) {
        int hi = hex_value(sha256_hex[2 * i]), lo = hex_value(sha256_hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return NULL;
        raw[i] = (unsigned char)(hi << 4 | lo);
    }
    char *b64 = wheel_b64url_nopad(raw, sizeof raw);
    char *out = xasprintf("sha256=%s", b64);
    free(b64);
    return out;
}

int wheel_path_ok(const char *path)
{
    if (!path || !*path || path[0] == '/')
        return 0;
    for (const char *p = path; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
            return 0;
    for (const char *part = path;;) {
        size_t n = strcspn(part, "/");
        if (n == 0 || (n == 1 && part[0] == '.') || (n == 2 && !strncmp(part, "..", 2)))
            return 0;
        if (!part[n])
            return 1;
        part += n + 1;
    }
}

static void csv_field(struct strbuf *sb, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sb_adds(sb, s);
        return;
    }
    sb_adds(sb, "\"");
    for (; *s; s++)
        sb_adds(sb, *s == '"' ? "\"\"" : (char[]){*s, 0});
    sb_adds(sb, "\"");
}

char *wheel_record_text(const struct wheel_record_row *rows, size_t n)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        csv_field(&sb, rows[i].path);
        if (!rows[i].sha256) {
            sb_adds(&sb, ",,\n");
            continue;
        }
        char *digest = wheel_record_digest(rows[i].sha256);
        if (!digest || rows[i].size < 0) {
            free(digest);
            sb_free(&sb);
            return NULL;
        }
        sb_addf(&sb, ",%s,%lld\n", digest, rows[i].size);
        free(digest);
    }
    return sb_detach(&sb);
}

/* 0: a package file, 1: a dist-info file, 2: the dist-info's RECORD. */
static int entry_rank(const char *path, const char *dist_info)
{
    size_t n = strlen(dist_info);
    if (strncmp(path, dist_info, n) || path[n] != '/')
        return 0;
    return strcmp(path + n + 1, "RECORD") ? 1 : 2;
}

int wheel_entry_order(const char *a, const char *b, const char *dist_info)
{
    int ra = entry_rank(a, dist_info), rb = entry_rank(b, dist_info);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return strcmp(a, b);
}

int wheel_recommendation_fits(const char *json, const char *library_sha256, char **why)
{
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(doc, "kind");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(doc, "library_sha256");
    int rc;
    if (!cJSON_IsObject(doc) || !cJSON_IsString(kind) ||
        strcmp(kind->valuestring, "sageattn-recommendation")) {
        rc = -1;
        if (why)
            *why = xstrdup("it is not a sageattn-recommendation record");
    } else if (!cJSON_IsString(sha) || !library_sha256 ||
               strcasecmp(sha->valuestring, library_sha256)) {
        rc = 0;
        if (why)
            *why =
                xstrdup(cJSON_IsString(sha) ? "it was written for another build of the library"
                                            : "it does not say which library it was written for");
    } else {
        rc = 1;
    }
    cJSON_Delete(doc);
    return rc;
}
