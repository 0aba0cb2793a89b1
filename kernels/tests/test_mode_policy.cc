/* The public API's mode policy (src/mode_policy.cu) on the CPU, for every compute capability
 * that matters: what `auto` picks, and which modes are refused and why, in a build with and
 * without the FP16-accumulator FP8 instruction (nvcc >= 12.8) and the sm_90a kernel. The table
 * below was written from the policy as it stood before its facts moved into archs/archs.def,
 * and pins it: moving facts must not change a single answer. */
#include <string.h>

#include <initializer_list>

#include "../archs/sa_archs.h"
#include "mode_policy.h"
#include "sa_check.h"

struct cc_case {
    int cc;
    const char *auto_mode;           /* what auto picks in a build with int8-fp8-f16acc */
    const char *auto_without_f16;    /* ... in a build without it (nvcc < 12.8) */
    const char *accepted;            /* the explicit modes a full build runs there, in enum order */
    const char *auto_without_hopper; /* ... in a build without sm_90a code (null: auto_mode) */
};

/* cc values the table knows, and some it does not (9.5, 12.2, 13.0, 3.0). */
static const struct cc_case cases[] = {
    {30, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {50, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {52, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {53, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {60, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {61, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {62, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {70, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {72, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {75, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {80, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {86, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {87, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {88, "int8-fp16", "int8-fp16", "int8-fp16 fp16 int8-fp16-f16acc", nullptr},
    {89, "int8-fp8-f16acc", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    /* since round 8 of issue 13: the Hopper kernel where the library has it */
    {90, "int8-fp8-wgmma", "int8-fp8-wgmma",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc int8-fp8-wgmma",
     "int8-fp16"},
    {95, "int8-fp8", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {100, "int8-fp8", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {101, "int8-fp8", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {103, "int8-fp8", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {110, "int8-fp8", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {120, "int8-fp8-f16acc", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {121, "int8-fp8-f16acc", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {122, "int8-fp8", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
    {130, "int8-fp8", "int8-fp8",
     "int8-fp16 int8-fp8 fp16 int8-fp8-bs int8-fp8-f16acc int8-fp16-f16acc", nullptr},
};

#define FIRST_MODE SAGEATTN_MODE_INT8_FP16
#define LAST_MODE SAGEATTN_MODE_INT8_FP8_WGMMA

/* Whether the space-separated list holds `name` as a whole word. */
static int listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static int is_fp8(const char *name)
{
    return strncmp(name, "int8-fp8", 8) == 0;
}

static void check_auto(const struct cc_case *c, const struct sa_build_caps *caps, const char *want)
{
    char msg[512] = "";
    sageattn_mode got = SAGEATTN_MODE_FP16;
    sageattn_status s = sa_mode_policy(SAGEATTN_MODE_AUTO, c->cc, caps, &got, msg, sizeof msg);
    CHECK(s == SAGEATTN_OK && strcmp(sageattn_mode_name(got), want) == 0,
          "auto on %d (f16acc %d, hopper %d): status %d mode %s, want %s (%s)", c->cc,
          caps->e4m3_f16acc, caps->hopper, (int)s, sageattn_mode_name(got), want, msg);
}

/* Explicit modes in a full build: the accepted ones run as themselves; the refused ones say why
 * (FP8 tensor cores below 8.9, Hopper only for int8-fp8-wgmma). */
static void check_explicit_full(const struct cc_case *c, const struct sa_build_caps *full)
{
    for (int m = FIRST_MODE; m <= LAST_MODE; ++m) {
        const char *name = sageattn_mode_name((sageattn_mode)m);
        char msg[512] = "";
        sageattn_mode got = SAGEATTN_MODE_AUTO;
        sageattn_status s = sa_mode_policy((sageattn_mode)m, c->cc, full, &got, msg, sizeof msg);
        if (listed(c->accepted, name)) {
            CHECK(s == SAGEATTN_OK && got == (sageattn_mode)m, "%s on %d: status %d (%s)", name,
                  c->cc, (int)s, msg);
            continue;
        }
        CHECK(s == SAGEATTN_ERR_UNSUPPORTED_MODE, "%s on %d accepted", name, c->cc);
        const char *why = is_fp8(name) && !listed(c->accepted, "int8-fp8")
                              ? "needs FP8 tensor cores (compute capability 8.9 or newer)"
                              : "runs only on compute capability 9.0 (sm_90a code: H100/H200";
        CHECK(strstr(msg, why) != NULL, "%s on %d: message '%s', want '%s'", name, c->cc, msg, why);
    }
}

/* What a build without a feature refuses: int8-fp8-f16acc without nvcc 12.8 (where FP8 runs at
 * all), int8-fp8-wgmma on 9.0 without sm_90a code. */
static void check_missing_features(const struct cc_case *c)
{
    const struct sa_build_caps bare = {0, 0, "sm_80,sm_90"};
    char msg[512] = "";
    sageattn_mode got = SAGEATTN_MODE_AUTO;
    sageattn_status s =
        sa_mode_policy(SAGEATTN_MODE_INT8_FP8_F16ACC, c->cc, &bare, &got, msg, sizeof msg);
    const char *why = listed(c->accepted, "int8-fp8") ? "needs a library built with nvcc 12.8"
                                                      : "needs FP8 tensor cores";
    CHECK(s == SAGEATTN_ERR_UNSUPPORTED_MODE && strstr(msg, why) != NULL,
          "int8-fp8-f16acc on %d without the instruction: status %d '%s', want '%s'", c->cc, (int)s,
          msg, why);
    s = sa_mode_policy(SAGEATTN_MODE_INT8_FP8_WGMMA, c->cc, &bare, &got, msg, sizeof msg);
    CHECK(s == SAGEATTN_ERR_UNSUPPORTED_MODE, "int8-fp8-wgmma on %d without sm_90a code", c->cc);
    if (c->cc == 90)
        CHECK(strstr(msg, "needs a library built with sm_90a code (this one holds sm_80,sm_90)"),
              "wgmma on 9.0 without sm_90a: '%s'", msg);
    /* the modes that need neither still run */
    for (sageattn_mode m :
         {SAGEATTN_MODE_INT8_FP16, SAGEATTN_MODE_FP16, SAGEATTN_MODE_INT8_FP16_F16ACC}) {
        s = sa_mode_policy(m, c->cc, &bare, &got, msg, sizeof msg);
        CHECK(s == SAGEATTN_OK && got == m, "%s on %d in a bare build: %s", sageattn_mode_name(m),
              c->cc, msg);
    }
}

/* Every name in the table's auto_modes is a mode of sageattn.h (a misspelt one would be skipped
 * without a word), and auto in a full build runs the first one on every row's GPUs. */
static void check_table_names(const struct sa_build_caps *full)
{
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        CHECK(*r->auto_modes != '\0', "%s lists no auto mode", r->name);
        char first[64] = "";
        for (const char *p = r->auto_modes; *p;) {
            const size_t len = strcspn(p, ",");
            int known = 0;
            for (int m = FIRST_MODE; m <= LAST_MODE; ++m) {
                const char *name = sageattn_mode_name((sageattn_mode)m);
                known |= strlen(name) == len && strncmp(name, p, len) == 0;
            }
            CHECK(known, "%s: '%.*s' in auto_modes is not a mode", r->name, (int)len, p);
            if (!*first)
                snprintf(first, sizeof first, "%.*s", (int)len, p);
            p += len + (p[len] == ',');
        }
        char msg[512] = "";
        sageattn_mode got = SAGEATTN_MODE_AUTO;
        sageattn_status s = sa_mode_policy(SAGEATTN_MODE_AUTO, r->major * 10 + r->minor, full, &got,
                                           msg, sizeof msg);
        CHECK(s == SAGEATTN_OK && strcmp(sageattn_mode_name(got), first) == 0,
              "auto on %s's GPUs: %s, the table's first choice %s (%s)", r->name,
              sageattn_mode_name(got), first, msg);
    }
}

int main()
{
    const struct sa_build_caps full = {1, 1, "sm_80,sm_90,sm_90a"};
    const struct sa_build_caps old_nvcc = {0, 1, "sm_90,sm_90a"};
    const struct sa_build_caps no_hopper = {1, 0, "sm_90,sm_120a"};
    for (const struct cc_case &c : cases) {
        check_auto(&c, &full, c.auto_mode);
        check_auto(&c, &no_hopper, c.auto_without_hopper ? c.auto_without_hopper : c.auto_mode);
        check_auto(&c, &old_nvcc, c.auto_without_f16);
        check_explicit_full(&c, &full);
        check_missing_features(&c);
    }
    check_table_names(&full);
    /* values that are no mode at all */
    for (int v : {-1, LAST_MODE + 1, 99}) {
        char msg[512] = "";
        sageattn_mode got = SAGEATTN_MODE_AUTO;
        CHECK(sa_mode_policy((sageattn_mode)v, 90, &full, &got, msg, sizeof msg) ==
                      SAGEATTN_ERR_UNSUPPORTED_MODE &&
                  strstr(msg, "is not a sageattn_mode"),
              "mode value %d: %s", v, msg);
    }
    return sa_check_report("test_mode_policy");
}
