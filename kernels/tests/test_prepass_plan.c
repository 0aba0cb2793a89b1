/* The fused pre-pass's item order (src/attn/sa_prepass_plan.h) on the CPU: for head counts,
 * group sizes and item counts around every boundary (one group, a partial last group, groups of
 * one head, a group larger than the heads), every ticket decodes to a valid item, every item comes
 * out exactly once, and each quantization item comes after all of its head's statistics items
 * (the kernel's waits rely on that: a wait on an item no block has taken could never end) and, the
 * point of the order, after the statistics of the next group's heads too, where there is one. */
#include <stdlib.h>
#include <string.h>

#include "attn/sa_prepass_plan.h"
#include "sa_check.h"

static void check_plan(int heads, int group, int n_stats, int n_krows, int n_vblocks)
{
    const struct sa_fused_plan p = sa_fused_plan_make(heads, group, n_stats, n_krows, n_vblocks);
    const int per = n_stats + n_krows + n_vblocks;
    CHECK(p.items == heads * per, "heads %d per %d: items %d", heads, per, p.items);
    /* seen[head][slot]: slot = stats index, then n_stats + K row index, then V block index */
    int *seen = calloc((size_t)p.items, sizeof *seen);
    /* the ticket of each head's last statistics item and of its first quantization item */
    int *last_stats = malloc(sizeof(int) * (size_t)heads);
    int *first_quant = malloc(sizeof(int) * (size_t)heads);
    if (!seen || !last_stats || !first_quant) {
        CHECK(0, "out of memory");
        free(seen), free(last_stats), free(first_quant);
        return;
    }
    for (int h = 0; h < heads; h++)
        last_stats[h] = -1, first_quant[h] = p.items;
    int bad = 0;
    for (int t = 0; t < p.items && bad < 5; t++) {
        const struct sa_fused_item it = sa_fused_decode(&p, t);
        int slot = -1;
        if (it.role == SA_FUSED_STATS && it.index >= 0 && it.index < n_stats)
            slot = it.index;
        else if (it.role == SA_FUSED_KQUANT && it.index >= 0 && it.index < n_krows)
            slot = n_stats + it.index;
        else if (it.role == SA_FUSED_VCONV && it.index >= 0 && it.index < n_vblocks)
            slot = n_stats + n_krows + it.index;
        if (slot < 0 || it.head < 0 || it.head >= heads) {
            CHECK(0, "heads %d group %d: ticket %d -> role %d head %d index %d", heads, group, t,
                  it.role, it.head, it.index);
            bad++;
            continue;
        }
        seen[it.head * per + slot]++;
        if (it.role == SA_FUSED_STATS)
            last_stats[it.head] = t;
        else if (t < first_quant[it.head])
            first_quant[it.head] = t;
    }
    int missing = 0;
    for (int i = 0; i < p.items; i++)
        missing += seen[i] != 1;
    CHECK(missing == 0, "heads %d group %d stats %d krows %d vblocks %d: %d items not seen once",
          heads, group, n_stats, n_krows, n_vblocks, missing);
    for (int h = 0; h < heads; h++) {
        CHECK(last_stats[h] < first_quant[h],
              "heads %d group %d: head %d's stats end at %d, its "
              "quantization starts at %d",
              heads, group, h, last_stats[h], first_quant[h]);
        /* the next group's statistics run before this head's quantization */
        const int g = h / p.group, next_last = (g + 2) * p.group - 1;
        if (g + 1 < p.n_groups) {
            const int nl = next_last < heads ? next_last : heads - 1;
            CHECK(last_stats[nl] < first_quant[h],
                  "heads %d group %d: head %d quantized at %d "
                  "before group %d's stats end (%d)",
                  heads, group, h, first_quant[h], g + 1, last_stats[nl]);
        }
    }
    free(seen);
    free(last_stats);
    free(first_quant);
}

int main(void)
{
    static const int heads[] = {1, 2, 3, 7, 8, 24, 25, 47, 128, 512};
    static const int groups[] = {0, 1, 2, 3, 8, 24, 1000};
    static const int counts[][3] = {{1, 1, 1}, {4, 8, 4}, {64, 128, 64}, {2, 1, 3}};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        for (size_t j = 0; j < sizeof groups / sizeof groups[0]; j++)
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
                check_plan(heads[i], groups[j], counts[k][0], counts[k][1], counts[k][2]);
    /* the group size is clamped into 1..heads */
    const struct sa_fused_plan p0 = sa_fused_plan_make(5, 0, 1, 1, 1);
    const struct sa_fused_plan p9 = sa_fused_plan_make(5, 9, 1, 1, 1);
    CHECK(p0.group == 1 && p0.n_groups == 5, "group 0 -> %d (%d groups)", p0.group, p0.n_groups);
    CHECK(p9.group == 5 && p9.n_groups == 1, "group 9 -> %d (%d groups)", p9.group, p9.n_groups);
    return sa_check_report("test_prepass_plan");
}
