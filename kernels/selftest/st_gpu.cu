#include "st_gpu.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#define ST_POISON 0xffffu

__device__ __forceinline__ uint64_t st_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__device__ double st_normal(uint64_t seed, int which, uint64_t index)
{
    uint64_t h = st_mix(seed ^ st_mix(((uint64_t)which << 56) ^ index));
    double u1 = ((h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    double u2 = ((st_mix(h) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

__device__ __forceinline__ float st_load(const uint16_t *p, int bf16)
{
    __half_raw hr;
    hr.x = *p;
    if (bf16) {
        __nv_bfloat16_raw br;
        br.x = *p;
        return __bfloat162float(__nv_bfloat16(br));
    }
    return __half2float(__half(hr));
}

__device__ __forceinline__ uint16_t st_store_bits(double x, int bf16)
{
    if (bf16) {
        __nv_bfloat16_raw r = __nv_bfloat16(__double2bfloat16(x));
        return r.x;
    }
    __half_raw r = __half(__double2half(x));
    return r.x;
}

__global__ void st_fill_kernel(struct st_tensor t, int which, int kind, uint64_t seed, int bf16)
{
    const uint64_t total = (uint64_t)t.b * t.h * t.l * t.d;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const int c = (int)(i % t.d);
        const uint64_t row = i / t.d;
        const int tok = (int)(row % t.l);
        const int h = (int)((row / t.l) % t.h);
        const int b = (int)(row / ((uint64_t)t.l * t.h));
        double x = st_normal(seed, which, i);
        const uint64_t channel = ((uint64_t)b * t.h + h) * t.d + c;
        if (kind == ST_K_OFFSET && which == 1)
            x += 30.0 * st_normal(seed, 7, channel);
        else if (kind == ST_Q_X10 && which == 0)
            x *= 10.0;
        else if ((kind == ST_V_NEAR_LIMIT && which == 2) || (kind == ST_QK_NEAR_LIMIT && which < 2))
            x = fmax(-65000.0, fmin(65000.0, x * 15000.0));
        t.base[b * t.s[0] + h * t.s[1] + tok * t.s[2] + c] = st_store_bits(x, bf16);
    }
}

cudaError_t st_fill(const struct st_tensor *t, int which, enum st_kind kind, uint64_t seed,
                    int bf16, cudaStream_t s)
{
    st_fill_kernel<<<1024, 256, 0, s>>>(*t, which, (int)kind, seed, bf16);
    return cudaGetLastError();
}

#define ST_REF_THREADS 128

__device__ double st_block_max(double x, double *scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        x = fmax(x, __shfl_xor_sync(0xffffffffu, x, o));
    if (threadIdx.x % 32 == 0)
        scratch[threadIdx.x / 32] = x;
    __syncthreads();
    double r = scratch[0];
    for (int w = 1; w < ST_REF_THREADS / 32; w++)
        r = fmax(r, scratch[w]);
    __syncthreads();
    return r;
}

/* One block per (query row, head, batch). Keys go in chunks of ST_REF_THREADS: thread t scores
 * key j0 + t in fp64, then thread c accumulates column c over the chunk, with an fp64 online
 * softmax between chunks. */
__global__ void __launch_bounds__(ST_REF_THREADS)
    st_reference_kernel(struct st_tensor q, struct st_tensor k, struct st_tensor v, int causal,
                        double scale, int bf16, int row_step, float *ref_o, double *ref_lse)
{
    __shared__ double qrow[128];
    __shared__ double p[ST_REF_THREADS];
    __shared__ double scratch[ST_REF_THREADS / 32];
    const int i = blockIdx.x * row_step, h = blockIdx.y, b = blockIdx.z, tid = threadIdx.x;
    const int hk = h / (q.h / k.h);
    const int d = q.d;
    if (tid < d)
        qrow[tid] = st_load(q.base + b * q.s[0] + h * q.s[1] + i * q.s[2] + tid, bf16);
    __syncthreads();
    long nk = k.l;
    if (causal) {
        nk = (long)i + k.l - q.l + 1;
        nk = nk < 0 ? 0 : (nk > k.l ? k.l : nk);
    }
    double m = -INFINITY, l = 0.0, acc = 0.0;
    for (long j0 = 0; j0 < nk; j0 += ST_REF_THREADS) {
        const long j = j0 + tid;
        double s = -INFINITY;
        if (j < nk) {
            const uint16_t *kr = k.base + b * k.s[0] + hk * k.s[1] + j * k.s[2];
            double dot = 0.0;
            for (int c = 0; c < d; c++)
                dot += qrow[c] * (double)st_load(kr + c, bf16);
            s = dot * scale;
        }
        const double m_new = fmax(m, st_block_max(s, scratch));
        const double alpha = exp(m - m_new); /* m = -inf on the first chunk: 0 */
        p[tid] = j < nk ? exp(s - m_new) : 0.0;
        __syncthreads();
        double chunk_sum = 0.0, chunk_acc = 0.0;
        const long jn = nk - j0 < ST_REF_THREADS ? nk - j0 : ST_REF_THREADS;
        for (int jj = 0; jj < jn; jj++) {
            chunk_sum += p[jj];
            if (tid < d)
                chunk_acc +=
                    p[jj] * (double)st_load(
                                v.base + b * v.s[0] + hk * v.s[1] + (j0 + jj) * v.s[2] + tid, bf16);
        }
        __syncthreads();
        l = l * alpha + chunk_sum;
        acc = acc * alpha + chunk_acc;
        m = m_new;
    }
    const size_t row = ((size_t)b * q.h + h) * q.l + i;
    if (tid < d)
        ref_o[row * d + tid] = nk > 0 ? (float)(acc / l) : 0.0f;
    if (tid == 0 && ref_lse)
        ref_lse[row] = nk > 0 ? m + log(l) : -INFINITY;
}

cudaError_t st_reference(const struct st_tensor *q, const struct st_tensor *k,
                         const struct st_tensor *v, int causal, float sm_scale, int bf16,
                         int row_step, float *ref_o, double *ref_lse, cudaStream_t s)
{
    dim3 grid((q->l + row_step - 1) / row_step, q->h, q->b);
    st_reference_kernel<<<grid, ST_REF_THREADS, 0, s>>>(*q, *k, *v, causal, (double)sm_scale, bf16,
                                                        row_step, ref_o, ref_lse);
    return cudaGetLastError();
}

__device__ void st_atomic_max_nonneg(unsigned long long *target, double x)
{
    atomicMax(target, (unsigned long long)__double_as_longlong(x));
}

/* One block per output row; thread c handles column c (and the guard columns past d). */
__global__ void st_compare_kernel(struct st_tensor o, const float *ref_o, const float *lse,
                                  const double *ref_lse, int bf16, int guard_cols, int row_step,
                                  struct st_sums *sums)
{
    const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const bool sampled = i % row_step == 0;
    const size_t row = ((size_t)b * o.h + h) * o.l + i;
    const uint16_t *orow = o.base + b * o.s[0] + h * o.s[1] + i * o.s[2];
    double diff = 0, ref = 0, dot = 0, oo = 0, rr = 0, max_abs = 0;
    unsigned long long untouched = 0, nonfinite = 0, guard = 0;
    for (int c = threadIdx.x; c < o.d + guard_cols; c += blockDim.x) {
        const uint16_t bits = orow[c];
        if (c >= o.d) {
            guard += bits != ST_POISON;
            continue;
        }
        if (bits == ST_POISON) {
            untouched++;
            continue;
        }
        const double x = st_load(&orow[c], bf16), r = ref_o[row * o.d + c];
        if (!isfinite(x)) {
            nonfinite++;
            continue;
        }
        if (!sampled)
            continue;
        diff += fabs(x - r);
        ref += fabs(r);
        dot += x * r;
        oo += x * x;
        rr += r * r;
        max_abs = fmax(max_abs, fabs(x - r));
    }
    atomicAdd(&sums->diff_l1, diff);
    atomicAdd(&sums->ref_l1, ref);
    atomicAdd(&sums->dot, dot);
    atomicAdd(&sums->oo, oo);
    atomicAdd(&sums->rr, rr);
    st_atomic_max_nonneg(&sums->max_abs_bits, max_abs);
    if (untouched)
        atomicAdd(&sums->untouched, untouched);
    if (nonfinite)
        atomicAdd(&sums->nonfinite, nonfinite);
    if (guard)
        atomicAdd(&sums->guard_hit, guard);
    if (threadIdx.x == 0 && lse && sampled) {
        const double want = ref_lse[row], got = lse[row];
        if (isinf(want) || isinf(got) || isnan(got)) {
            if (!(isinf(want) && want < 0 && isinf(got) && got < 0))
                atomicAdd(&sums->lse_bad_inf, 1ull);
        } else {
            st_atomic_max_nonneg(&sums->lse_max_err_bits, fabs(got - want));
        }
    }
}

cudaError_t st_compare(const struct st_tensor *o, const float *ref_o, const float *lse,
                       const double *ref_lse, int bf16, int guard_cols, int row_step,
                       struct st_sums *sums, cudaStream_t s)
{
    dim3 grid(o->l, o->h, o->b);
    st_compare_kernel<<<grid, 128, 0, s>>>(*o, ref_o, lse, ref_lse, bf16, guard_cols, row_step,
                                           sums);
    return cudaGetLastError();
}
