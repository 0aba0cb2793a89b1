#include "st_run.h"

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "sageattn.h"
#include "st_gpu.h"

#define ST_SEED 0x5a6e5e1f7e57ull

/* A CUDA failure in the self-test's own work: recorded on the device, ends its tests. */
#define ST_TRY(d, call)                                                                            \
    do {                                                                                           \
        cudaError_t st_e_ = (call);                                                                \
        if (st_e_ != cudaSuccess) {                                                                \
            snprintf((d)->error, sizeof((d)->error), "%s: %s (%s)", #call,                         \
                     cudaGetErrorString(st_e_), cudaGetErrorName(st_e_));                          \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

static struct st_tensor make_tensor(uint16_t *base, int b, int h, int l, int d, int pitch, int nhd)
{
    struct st_tensor t;
    t.base = base;
    t.b = b;
    t.h = h;
    t.l = l;
    t.d = d;
    st_strides(t.s, h, l, pitch, nhd);
    return t;
}

/* Device memory that grows on demand and is freed with its owner. */
struct st_buf {
    void *p = nullptr;
    size_t bytes = 0;
    cudaError_t ensure(size_t n)
    {
        if (n <= bytes)
            return cudaSuccess;
        cudaFree(p);
        p = nullptr;
        bytes = 0;
        cudaError_t e = cudaMalloc(&p, n);
        if (e == cudaSuccess)
            bytes = n;
        return e;
    }
    ~st_buf()
    {
        cudaFree(p);
    }
};

struct st_ctx {
    int device;
    cudaStream_t stream;
    st_buf q, k, v, o, lse, ref_o, ref_lse, sums, ws;
};

static void fill_params(sageattn_params *p, const struct st_case *c, const struct st_tensor *q,
                        const struct st_tensor *k, const struct st_tensor *v,
                        const struct st_tensor *o, float *lse, int mode)
{
    sageattn_params_init(p, c->b, c->hq, c->hkv, c->lq, c->lkv, c->d);
    p->dtype = c->bf16 ? SAGEATTN_DTYPE_BF16 : SAGEATTN_DTYPE_FP16;
    p->q = q->base;
    p->k = k->base;
    p->v = v->base;
    p->o = o->base;
    memcpy(p->q_stride, q->s, sizeof p->q_stride);
    memcpy(p->k_stride, k->s, sizeof p->k_stride);
    memcpy(p->v_stride, v->s, sizeof p->v_stride);
    memcpy(p->o_stride, o->s, sizeof p->o_stride);
    p->lse = lse;
    p->causal = c->causal;
    p->mode = (sageattn_mode)mode;
}

static void api_error(char *out, size_t n, sageattn_status s)
{
    const char *detail = sageattn_last_error();
    snprintf(out, n, "%s%s%s", sageattn_status_string(s), detail && *detail ? ": " : "",
             detail ? detail : "");
}

/* One case through every mode: reference once, then per mode poison, run, compare. */
static int run_case(struct st_ctx *x, const struct st_case *c, uint64_t seed,
                    struct st_device_out *d)
{
    const int pitch = (c->d + 7) / 8 * 8 + 8; /* O rows get >= 8 guard elements */
    const size_t qn = (size_t)c->b * c->hq * c->lq * c->d,
                 kn = (size_t)c->b * c->hkv * c->lkv * c->d;
    const size_t on = (size_t)c->b * c->hq * c->lq * pitch, rows = (size_t)c->b * c->hq * c->lq;
    ST_TRY(d, x->q.ensure(qn * 2));
    ST_TRY(d, x->k.ensure(kn * 2));
    ST_TRY(d, x->v.ensure(kn * 2));
    ST_TRY(d, x->o.ensure(on * 2));
    ST_TRY(d, x->lse.ensure(rows * sizeof(float)));
    ST_TRY(d, x->ref_o.ensure(qn * sizeof(float)));
    ST_TRY(d, x->ref_lse.ensure(rows * sizeof(double)));
    ST_TRY(d, x->sums.ensure(sizeof(struct st_sums)));
    struct st_tensor q = make_tensor((uint16_t *)x->q.p, c->b, c->hq, c->lq, c->d, c->d, c->nhd);
    struct st_tensor k = make_tensor((uint16_t *)x->k.p, c->b, c->hkv, c->lkv, c->d, c->d, c->nhd);
    struct st_tensor v = make_tensor((uint16_t *)x->v.p, c->b, c->hkv, c->lkv, c->d, c->d, c->nhd);
    struct st_tensor o = make_tensor((uint16_t *)x->o.p, c->b, c->hq, c->lq, c->d, pitch, c->nhd);
    ST_TRY(d, st_fill(&q, 0, c->kind, seed, c->bf16, x->stream));
    ST_TRY(d, st_fill(&k, 1, c->kind, seed, c->bf16, x->stream));
    ST_TRY(d, st_fill(&v, 2, c->kind, seed, c->bf16, x->stream));
    const float sm_scale = 1.0f / sqrtf((float)c->d);
    /* The fp64 reference costs b·hq·lq·lkv·d loads: beyond 2^24 row-key pairs, compare every
     * row_step-th query row only (coverage and NaN checks still see every row). */
    const double pairs = (double)c->b * c->hq * c->lq * c->lkv;
    int row_step = 1;
    while (pairs / row_step > 16777216.0 && row_step < c->lq / 64)
        row_step *= 2;
    ST_TRY(d, st_reference(&q, &k, &v, c->causal, sm_scale, c->bf16, row_step, (float *)x->ref_o.p,
                           (double *)x->ref_lse.p, x->stream));
    for (int mi = 0; mi < d->nmodes; mi++) {
        struct st_mode_out *m = &d->modes[mi];
        if (!m->supported || m->ncases >= ST_MAX_CASES)
            continue;
        struct st_case_out *co = &m->cases[m->ncases++];
        memset(co, 0, sizeof *co);
        co->c = *c;
        co->r.lse_err = -1.0;
        co->r.lse_inf_ok = 1;
        ST_TRY(d, cudaMemsetAsync(x->o.p, 0xff, on * 2, x->stream));
        ST_TRY(d, cudaMemsetAsync(x->lse.p, 0xff, rows * sizeof(float), x->stream));
        sageattn_params p;
        fill_params(&p, c, &q, &k, &v, &o, c->lse ? (float *)x->lse.p : nullptr, m->mode);
        size_t ws_bytes = 0;
        sageattn_status s = sageattn_workspace_size(&p, x->device, &ws_bytes);
        if (s == SAGEATTN_OK) {
            ST_TRY(d, x->ws.ensure(ws_bytes ? ws_bytes : 1));
            s = sageattn_run(&p, x->ws.p, x->ws.bytes, x->stream);
        }
        if (s != SAGEATTN_OK) {
            /* A build for fewer native head dims (sagebuild build --head-dims) may refuse
             * some: that is the build's choice, not a fault of the mode. */
            co->r.skipped = s == SAGEATTN_ERR_UNSUPPORTED_HEAD_DIM && c->d <= 128;
            api_error(co->error, sizeof co->error, s);
            continue;
        }
        ST_TRY(d, cudaStreamSynchronize(x->stream));
        co->r.api_ok = 1;
        ST_TRY(d, cudaMemsetAsync(x->sums.p, 0, sizeof(struct st_sums), x->stream));
        ST_TRY(d,
               st_compare(&o, (const float *)x->ref_o.p, c->lse ? (const float *)x->lse.p : nullptr,
                          (const double *)x->ref_lse.p, c->bf16, pitch - c->d, row_step,
                          (struct st_sums *)x->sums.p, x->stream));
        struct st_sums h;
        ST_TRY(d, cudaMemcpyAsync(&h, x->sums.p, sizeof h, cudaMemcpyDeviceToHost, x->stream));
        ST_TRY(d, cudaStreamSynchronize(x->stream));
        double max_abs, lse_err;
        memcpy(&max_abs, &h.max_abs_bits, sizeof max_abs);
        memcpy(&lse_err, &h.lse_max_err_bits, sizeof lse_err);
        co->r.coverage_ok = h.untouched == 0 && h.guard_hit == 0;
        co->r.nonfinite = (long)h.nonfinite;
        co->r.rel_l1 = h.ref_l1 > 0 ? h.diff_l1 / h.ref_l1 : (h.diff_l1 > 0 ? INFINITY : 0.0);
        co->r.cos = (h.oo > 0 && h.rr > 0) ? h.dot / sqrt(h.oo * h.rr) : (h.oo == h.rr ? 1.0 : 0.0);
        co->r.max_abs = max_abs;
        if (c->lse) {
            co->r.lse_err = lse_err;
            co->r.lse_inf_ok = h.lse_bad_inf == 0;
        }
        if (h.untouched || h.guard_hit)
            snprintf(co->error, sizeof co->error,
                     "%llu outputs not written, %llu written outside O", h.untouched, h.guard_hit);
    }
    return 0;
}

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? NAN : v[v.size() / 2];
}

/* TOPS of each mode on one shape: inputs rotate over sets that together exceed twice the L2,
 * warm-up, then the median of timed runs (CUDA events around each call). */
static int run_speed(struct st_ctx *x, const struct st_options *o, const struct st_speed_shape *sh,
                     size_t slot, struct st_device_out *d)
{
    int l2 = 0;
    ST_TRY(d, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, x->device));
    const size_t tensor = (size_t)sh->b * sh->h * sh->l * sh->d * 2, set = 4 * tensor;
    size_t nsets = std::min<size_t>(8, std::max<size_t>(2, (2 * (size_t)l2) / set + 2));
    size_t free_b = 0, total_b = 0;
    ST_TRY(d, cudaMemGetInfo(&free_b, &total_b));
    while (nsets > 2 && nsets * set > free_b / 2)
        nsets--;
    st_buf sets;
    ST_TRY(d, sets.ensure(nsets * set));
    struct st_case c;
    memset(&c, 0, sizeof c);
    c.b = sh->b;
    c.hq = c.hkv = sh->h;
    c.lq = c.lkv = sh->l;
    c.d = sh->d;
    c.causal = sh->causal;
    std::vector<sageattn_params> params(nsets);
    const int runs = o->full ? 50 : 20, warmup = 5;
    double fp16_ms = -1.0;
    int filled = 0;
    for (int mi = 0; mi < d->nmodes; mi++) {
        struct st_mode_out *m = &d->modes[mi];
        if (!m->supported)
            continue;
        struct st_speed_out *so = &m->speed[slot];
        memset(so, 0, sizeof *so);
        so->s = *sh;
        m->nspeed = slot + 1;
        size_t ws_need = 0;
        for (size_t i = 0; i < nsets; i++) {
            uint16_t *base = (uint16_t *)((char *)sets.p + i * set);
            struct st_tensor q = make_tensor(base, c.b, c.hq, c.lq, c.d, c.d, 0);
            struct st_tensor k = make_tensor(base + tensor / 2, c.b, c.hkv, c.lkv, c.d, c.d, 0);
            struct st_tensor v = make_tensor(base + tensor, c.b, c.hkv, c.lkv, c.d, c.d, 0);
            struct st_tensor out =
                make_tensor(base + 3 * (tensor / 2), c.b, c.hq, c.lq, c.d, c.d, 0);
            if (!filled) {
                ST_TRY(d, st_fill(&q, 0, ST_RANDOM, ST_SEED + i, 0, x->stream));
                ST_TRY(d, st_fill(&k, 1, ST_RANDOM, ST_SEED + i, 0, x->stream));
                ST_TRY(d, st_fill(&v, 2, ST_RANDOM, ST_SEED + i, 0, x->stream));
            }
            fill_params(&params[i], &c, &q, &k, &v, &out, nullptr, m->mode);
            size_t need = 0;
            if (sageattn_workspace_size(&params[i], x->device, &need) != SAGEATTN_OK)
                need = 0;
            ws_need = std::max(ws_need, need);
        }
        filled = 1;
        ST_TRY(d, x->ws.ensure(ws_need ? ws_need : 1));
        std::vector<cudaEvent_t> ev(2 * (size_t)runs);
        for (auto &e : ev)
            ST_TRY(d, cudaEventCreate(&e));
        sageattn_status s = SAGEATTN_OK;
        for (int r = 0; r < warmup + runs && s == SAGEATTN_OK; r++) {
            const sageattn_params *p = &params[(size_t)r % nsets];
            if (r >= warmup)
                cudaEventRecord(ev[2 * (size_t)(r - warmup)], x->stream);
            s = sageattn_run(p, x->ws.p, x->ws.bytes, x->stream);
            if (r >= warmup)
                cudaEventRecord(ev[2 * (size_t)(r - warmup) + 1], x->stream);
        }
        cudaError_t e = cudaStreamSynchronize(x->stream);
        std::vector<float> ms;
        for (int r = 0; r < runs && s == SAGEATTN_OK && e == cudaSuccess; r++) {
            float t = 0;
            if (cudaEventElapsedTime(&t, ev[2 * (size_t)r], ev[2 * (size_t)r + 1]) == cudaSuccess)
                ms.push_back(t);
        }
        for (auto &ev_i : ev)
            cudaEventDestroy(ev_i);
        ST_TRY(d, e);
        if (s != SAGEATTN_OK || ms.empty())
            continue;
        so->ok = 1;
        so->ms = median(ms);
        const double ops =
            4.0 * sh->b * sh->h * (double)sh->l * sh->l * sh->d / (sh->causal ? 2 : 1);
        so->tops = ops / (so->ms * 1e-3) / 1e12;
        if (m->mode == SAGEATTN_MODE_FP16)
            fp16_ms = so->ms;
        so->speedup_vs_fp16 = -1.0;
    }
    for (int mi = 0; mi < d->nmodes && fp16_ms > 0; mi++) {
        struct st_speed_out *so = &d->modes[mi].speed[slot];
        if (d->modes[mi].supported && so->ok)
            so->speedup_vs_fp16 = fp16_ms / so->ms;
    }
    return 0;
}

void st_run_device(const struct st_options *o, struct st_device_out *d)
{
    struct cudaDeviceProp prop;
    d->recommended = d->runner_up = d->key_speed = -1;
    cudaError_t e = cudaSetDevice(d->index);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&prop, d->index);
    if (e != cudaSuccess) {
        snprintf(d->error, sizeof d->error, "GPU %d: %s", d->index, cudaGetErrorString(e));
        return;
    }
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    st_format_uuid((const unsigned char *)prop.uuid.bytes, d->uuid, sizeof d->uuid);
    d->cc = prop.major * 10 + prop.minor;
    sageattn_mode resolved;
    sageattn_status s = sageattn_resolve_mode(SAGEATTN_MODE_FP16, d->index, &resolved);
    d->has_code = s != SAGEATTN_ERR_NO_CODE_FOR_GPU;
    if (!d->has_code) {
        char arch[16];
        st_arch_for_cc(d->cc, arch, sizeof arch);
        if (arch[0]) /* else the kernels have no arch for this GPU: no build would help */
            snprintf(d->build_hint, sizeof d->build_hint, "sagebuild build --arch %s", arch);
    }
    d->nmodes = o->nmodes;
    for (int i = 0; i < o->nmodes; i++) {
        struct st_mode_out *m = &d->modes[i];
        m->mode = o->modes[i];
        s = d->has_code ? sageattn_resolve_mode((sageattn_mode)m->mode, d->index, &resolved)
                        : SAGEATTN_ERR_NO_CODE_FOR_GPU;
        m->supported = s == SAGEATTN_OK;
        if (!m->supported)
            api_error(m->reason, sizeof m->reason, s);
    }
    if (!d->has_code)
        goto summarize;
    {
        struct st_ctx x;
        x.device = d->index;
        if ((e = cudaStreamCreateWithFlags(&x.stream, cudaStreamNonBlocking)) != cudaSuccess) {
            snprintf(d->error, sizeof d->error, "cudaStreamCreate: %s", cudaGetErrorString(e));
            goto summarize;
        }
        struct st_case cases[ST_MAX_CASES];
        size_t n = st_accuracy_cases(o->full, cases, ST_MAX_CASES);
        for (size_t i = 0; i < n; i++)
            if (run_case(&x, &cases[i], ST_SEED + 1000 * i, d) != 0)
                break;
        struct st_speed_shape shapes[ST_MAX_SPEED];
        size_t ns = d->error[0] ? 0 : st_speed_shapes(o->full, shapes, ST_MAX_SPEED);
        for (size_t i = 0; i < ns; i++)
            if (run_speed(&x, o, &shapes[i], i, d) != 0)
                break;
        cudaStreamDestroy(x.stream);
    }
summarize:
    st_judge_device(d);
}
