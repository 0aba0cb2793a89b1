/* The order of the fused pre-pass's work items (SA_PRE_L2, quant.cu): pure arithmetic, shared by
 * the kernel and its CPU test (kernels/tests/test_prepass_plan.c).
 *
 * The separate pre-pass kernels read K and V twice each from memory: once for the statistics
 * (K's mean; V's scale and mean), once to quantize. The fused kernel takes its work items in a
 * fixed order (a ticket per block) so that a (batch, kv head)'s quantization runs soon after its
 * statistics, while its K and V still sit in L2: the heads are cut into groups of `group`, and
 * the items run as
 *
 *   stats(0), stats(1) quant(0), stats(2) quant(1), ..., stats(n-1) quant(n-2), quant(n-1)
 *
 * where stats(g) is every statistics item of group g's heads (n_stats per head, head by head)
 * and quant(g) every quantization item of its heads (n_krows of K's row quantizer, then n_vblocks
 * of V's conversion, head by head). A quantization item waits for its head's statistics, which
 * come a whole group earlier in the order: the wait is short, and never on an item that has no
 * block yet (tickets are taken in order). */
#ifndef SA_PREPASS_PLAN_H
#define SA_PREPASS_PLAN_H

#if defined(__CUDACC__)
#define SA_PLAN_FN __host__ __device__ static inline
#else
#define SA_PLAN_FN static inline
#endif

enum sa_fused_role { SA_FUSED_STATS = 0, SA_FUSED_KQUANT = 1, SA_FUSED_VCONV = 2 };

struct sa_fused_plan {
    int heads;     /* (batch, kv head) pairs */
    int group;     /* heads per group (the last group may hold fewer) */
    int n_groups;  /* ceil(heads / group) */
    int n_stats;   /* statistics items per head */
    int n_krows;   /* K row-quantizer items per head */
    int n_vblocks; /* V conversion items per head */
    int items;     /* every item of the call */
};

struct sa_fused_item {
    int role;  /* enum sa_fused_role */
    int head;  /* (batch, kv head) index */
    int index; /* the item's block index within its role and head */
};

/* group < 1 counts as 1, group > heads as heads. heads >= 1 and every count >= 1. */
SA_PLAN_FN struct sa_fused_plan sa_fused_plan_make(int heads, int group, int n_stats, int n_krows,
                                                   int n_vblocks)
{
    struct sa_fused_plan p;
    p.heads = heads;
    p.group = group < 1 ? 1 : group > heads ? heads : group;
    p.n_groups = (heads + p.group - 1) / p.group;
    p.n_stats = n_stats;
    p.n_krows = n_krows;
    p.n_vblocks = n_vblocks;
    p.items = heads * (n_stats + n_krows + n_vblocks);
    return p;
}

/* Heads in group g. */
SA_PLAN_FN int sa_fused_group_heads(const struct sa_fused_plan *p, int g)
{
    const int left = p->heads - g * p->group;
    return left < p->group ? left : p->group;
}

/* Item `local` of stats(g) (quant = 0) or quant(g) (quant = 1). */
SA_PLAN_FN struct sa_fused_item sa_fused_in_group(const struct sa_fused_plan *p, int g, int quant,
                                                  int local)
{
    struct sa_fused_item it;
    const int per = quant ? p->n_krows + p->n_vblocks : p->n_stats;
    const int r = local % per;
    it.head = g * p->group + local / per;
    if (!quant) {
        it.role = SA_FUSED_STATS;
        it.index = r;
    } else if (r < p->n_krows) {
        it.role = SA_FUSED_KQUANT;
        it.index = r;
    } else {
        it.role = SA_FUSED_VCONV;
        it.index = r - p->n_krows;
    }
    return it;
}

/* Ticket t (0 <= t < items) to its item. Phase 0 is stats(0); phase k (1..n_groups - 1) is
 * stats(k) then quant(k - 1); the last phase is quant(n_groups - 1). Every group but the last is
 * full, so the phases before the last two have one size. */
SA_PLAN_FN struct sa_fused_item sa_fused_decode(const struct sa_fused_plan *p, int t)
{
    const int per_q = p->n_krows + p->n_vblocks, last = p->n_groups - 1;
    const int s0 = sa_fused_group_heads(p, 0) * p->n_stats;
    if (t < s0)
        return sa_fused_in_group(p, 0, 0, t);
    t -= s0;
    /* phases 1 .. last - 1: stats(k) (full unless k = last) then quant(k - 1) (full) */
    const int full_phase = p->group * (p->n_stats + per_q);
    const int n_full = last - 1 > 0 ? last - 1 : 0; /* phases 1 .. last - 1 with stats(k) full */
    if (t < n_full * full_phase) {
        const int k = 1 + t / full_phase, r = t % full_phase;
        const int sk = p->group * p->n_stats;
        return r < sk ? sa_fused_in_group(p, k, 0, r) : sa_fused_in_group(p, k - 1, 1, r - sk);
    }
    t -= n_full * full_phase;
    if (last >= 1) { /* phase `last`: stats(last), then quant(last - 1) */
        const int sl = sa_fused_group_heads(p, last) * p->n_stats;
        if (t < sl)
            return sa_fused_in_group(p, last, 0, t);
        t -= sl;
        const int ql = sa_fused_group_heads(p, last - 1) * per_q;
        if (t < ql)
            return sa_fused_in_group(p, last - 1, 1, t);
        t -= ql;
    }
    return sa_fused_in_group(p, last, 1, t); /* the final phase: quant(last) */
}

#endif
