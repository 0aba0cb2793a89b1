/* The mode policy of the public API (mode_policy.h) and the modes' names. Host code only. The
 * facts of each compute capability (FP8 tensor cores, what auto runs, where the wgmma family
 * runs) are archs/archs.def's; what this build holds comes in as sa_build_caps. */
#include <stdio.h>
#include <string.h>

#include "../archs/sa_archs.h"
#include "mode_policy.h"
#include "sa_internal.h"

struct sa_build_caps sa_this_build(void)
{
    struct sa_build_caps caps = {SA_HAS_E4M3_F16ACC, SA_WITH_HOPPER, SA_BUILT_ARCHS};
    return caps;
}

/* The mode of this name, or AUTO when no mode has it. */
static sageattn_mode sa_mode_named(const char *name, size_t len)
{
    for (int m = SAGEATTN_MODE_INT8_FP16; m <= SAGEATTN_MODE_INT8_FP8_WGMMA; ++m) {
        const char *known = sageattn_mode_name((sageattn_mode)m);
        if (strlen(known) == len && strncmp(known, name, len) == 0)
            return (sageattn_mode)m;
    }
    return SAGEATTN_MODE_AUTO;
}

/* Whether an explicit mode runs on cc; else the status with the reason in msg[n]. */
static sageattn_status sa_mode_runs(sageattn_mode requested, int cc,
                                    const struct sa_build_caps *caps, char *msg, size_t n)
{
    if (requested <= SAGEATTN_MODE_AUTO || requested > SAGEATTN_MODE_INT8_FP8_WGMMA) {
        snprintf(msg, n, "mode %d is not a sageattn_mode", (int)requested);
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    const int major = cc / 10, minor = cc % 10;
    if (sa_mode_pv_fp8(requested) && !sa_cc_has_fp8(major, minor)) {
        const struct sa_arch *oldest = sa_arch_oldest_fp8();
        snprintf(msg, n,
                 "mode %s needs FP8 tensor cores (compute capability %d.%d or newer); this "
                 "GPU is %d.%d: use int8-fp16 or auto",
                 sageattn_mode_name(requested), oldest ? oldest->major : 0,
                 oldest ? oldest->minor : 0, major, minor);
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    if (requested == SAGEATTN_MODE_INT8_FP8_WGMMA &&
        (!sa_family_runs_on(SA_FAMILY_WGMMA, major, minor) || !caps->hopper)) {
        const struct sa_arch *w = sa_arch_with_family(SA_FAMILY_WGMMA);
        if (!sa_family_runs_on(SA_FAMILY_WGMMA, major, minor))
            snprintf(msg, n,
                     "mode int8-fp8-wgmma runs only on compute capability %d.%d (%s code: %s); "
                     "this GPU is %d.%d: use int8-fp8 or auto",
                     w ? w->major : 0, w ? w->minor : 0, w ? w->name : "no", w ? w->products : "",
                     major, minor);
        else
            snprintf(msg, n,
                     "mode int8-fp8-wgmma needs a library built with %s code (this one holds "
                     "%s): rebuild with %s among the archs, or use auto",
                     w->name, caps->archs, w->name);
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    if (requested == SAGEATTN_MODE_INT8_FP8_F16ACC && !caps->e4m3_f16acc) {
        snprintf(msg, n,
                 "mode int8-fp8-f16acc needs a library built with nvcc 12.8 or newer (the FP16-"
                 "accumulator FP8 mma.sync); use int8-fp8 or auto");
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    return SAGEATTN_OK;
}

sageattn_status sa_mode_policy(sageattn_mode requested, int cc, const struct sa_build_caps *caps,
                               sageattn_mode *out, char *msg, size_t n)
{
    if (requested != SAGEATTN_MODE_AUTO) {
        const sageattn_status s = sa_mode_runs(requested, cc, caps, msg, n);
        if (s == SAGEATTN_OK)
            *out = requested;
        return s;
    }
    /* auto: the first mode of the arch table's list for this compute capability that runs */
    const char *list = sa_cc_auto_modes(cc / 10, cc % 10);
    char why[256] = "";
    for (const char *p = list; *p;) {
        const size_t len = strcspn(p, ",");
        const sageattn_mode m = sa_mode_named(p, len);
        if (m != SAGEATTN_MODE_AUTO && sa_mode_runs(m, cc, caps, why, sizeof why) == SAGEATTN_OK) {
            *out = m;
            return SAGEATTN_OK;
        }
        p += len + (p[len] == ',');
    }
    snprintf(msg, n,
             "auto has no mode for compute capability %d.%d in this library: archs.def lists "
             "'%s'%s%s",
             cc / 10, cc % 10, list, *why ? ", and the last one: " : "", why);
    return SAGEATTN_ERR_UNSUPPORTED_MODE;
}

sageattn_status sa_mode_for_cc(sageattn_mode requested, int cc, sageattn_mode *out, char *msg,
                               size_t n)
{
    const struct sa_build_caps caps = sa_this_build();
    return sa_mode_policy(requested, cc, &caps, out, msg, n);
}

extern "C" int sageattn_cc_has_fp8(int cc_major, int cc_minor)
{
    return sa_cc_has_fp8(cc_major, cc_minor);
}
