/* int8-fp8-wgmma, warp-specialized form (SA_H_WS=1; included by attn_hopper.cu after the shared
 * pieces: sa_htile, sa_h_rows, sa_h_softmax). One block = 1 + NC warpgroups:
 *
 *  - warpgroup 0, the producer: gives most of its registers back (setmaxnreg.dec) and one thread
 *    issues the bulk copies: the block's Q rows once, then each 64-key stage (int8 K, E4M3 Vᵀ,
 *    K scales) into a ring of SA_HW_STAGES stages as soon as the consumers have released it
 *    (an "empty" mbarrier per stage, next to the "full" one the copies complete on);
 *  - warpgroups 1..NC, the consumers: 64 query rows each (the block: 64·NC rows), more registers
 *    (setmaxnreg.inc), all reading the same K/V stages (one copy per 64·NC rows instead of 64).
 *
 * Per consumer and tile j (SA_HW_OVERLAP): issue Q·Kᵀ(j) and P·V(j−1) back to back, then wait
 * for Q·Kᵀ(j) only and run tile j's softmax while P·V(j−1) is on the tensor cores; then either
 * fold P·V(j−1)'s fresh fp32 tile accumulator into O (two-level accumulation, SA_HW_FOLDN 1 or 2)
 * or, where P·V accumulates in O itself (SA_HW_FOLDN 0, the default: the registers it frees fit
 * three consumers at D=128, four at D=64), rescale O to tile j's max. With SA_HW_PINGPONG the
 * consumers take turns issuing (named barriers in a ring), so one warpgroup's softmax runs while
 * the next one's wgmma batch does.
 *
 * Row sums (SA_HW_ROWSUM_MMA): each stage carries, right after its Vᵀ tile, one n8 group of E4M3
 * ones; P·V runs as n = D + 8 and the extra columns are P's row sums, accumulated like O (one FFMA
 * per row per tile instead of one FADD per score), and consistent with the E4M3 P that O used;
 * with SA_HW_ROWSUM_SEP (D=128) by their own n8 wgmma into a fresh accumulator per tile. */
#ifndef SA_HOPPER_WS_CUH
#define SA_HOPPER_WS_CUH

#include <type_traits>

#ifndef SA_HW_STAGES
#define SA_HW_STAGES 8 /* a power of two: the slot is a mask, the parity a shift */
#endif
/* 1: consumers take turns issuing their wgmma batches. Measured no gain: round 2 (two consumers,
 * 568.8 TOPS without against 566.5 with) and round 10 (three at D=128: 708.9 without against
 * 699.2 with, bench/results/h200-6b81a5d-hopper10-variants.md), so off. */
#ifndef SA_HW_PINGPONG
#define SA_HW_PINGPONG 0
#endif
#ifndef SA_HW_OVERLAP
#define SA_HW_OVERLAP 1
#endif
/* 1: each consumer keeps its Q tile in registers (the wgmma A fragment, D/8 registers) instead
 * of having every Q·Kᵀ wgmma read it from shared memory again (halves Q·Kᵀ's shared reads;
 * measured +3 % at D=128 and D=64, L=16K). */
#ifndef SA_HW_QREG
#define SA_HW_QREG 1
#endif
#ifndef SA_HW_ROWSUM_MMA
#define SA_HW_ROWSUM_MMA 1
#endif
/* 1: the consumers quantize their Q rows from the caller's fp16/bf16 Q (needs SA_HW_QREG; calls
 * without LSE: the LSE's q·k̄ term comes from the pre-pass), and the pre-pass leaves Q out: one
 * read of Q and no int8 Q round trip through memory (~0.06 ms of a D=128 L=1K B=16 call).
 * Per head dim (the H200 round-3 call, bench/results/h200-2e09e54-hopper3-variants.md): on at
 * D=128 (with SA_HW_CTAS128=2 and SA_HW_FOLDN128=2 the fastest there), off at D=64 (no gain at
 * L=16K, 422.9 against 423.0; D=64 up to 4K keys then ran the one-warpgroup kernel, which has its
 * own switch, SA_H_QFUSE, since round 19). On at D=64 too since round 41b (h200-37bfd66-round41.md:
 * with round 29's faster quantizer, D=64 L=4K +0.9 % and causal +1 % in two interleaved passes
 * each, L=16K within noise; bench.py's matrix the same in all 20 cases, memcheck clean).
 * SA_HW_QFUSE, when given, sets both (the variant builds). */
#ifdef SA_HW_QFUSE
#define SA_HW_QFUSE128 SA_HW_QFUSE
#define SA_HW_QFUSE64 SA_HW_QFUSE
#endif
#ifndef SA_HW_QFUSE128
#define SA_HW_QFUSE128 1
#endif
#ifndef SA_HW_QFUSE64
#define SA_HW_QFUSE64 1
#endif
/* P·V's fold interval: the tiles whose P·V accumulate in the same fp32 tile accumulator before it
 * is folded into O (one fold, 68 FFMA at D=128, per SA_HW_FOLDN tiles): 1, 2 (the FP8 accumulator
 * holds 128 keys, four k32 steps, the interval DeepSeek-V3 promotes FP8 GEMM sums at on Hopper)
 * or 0: never folded (the tile accumulator is O itself; O's columns stay as accurate as with the
 * fold, round 9b). A row max that moves between folds rescales the held tile first: with 2 by a
 * conditional multiply after the fresh tile; with 0, where the accumulator carries, as
 * SA_HW_LAZY_RESCALE says (the same multiply written in C between two accumulating wgmma makes
 * ptxas serialize every wgmma, C7513). Needs SA_HW_OVERLAP. Per head dim, as
 * SA_HW_QFUSE: 0 at D=128, where the freed registers make room for a third consumer
 * (SA_HW_NC128; round 10, bench/results/h200-6b81a5d-hopper10-variants.md: 708.9 TOPS at L=16K
 * against 628.4 with 2 and two blocks of one consumer, same accuracy); 0 at D=64 too since
 * round 14, where it makes room for a fourth consumer (SA_HW_NC64; with three, round 11: 0 gave
 * 425.0 against 428.3 for 1; round 3: 2 gave 416.0 against 423.0). 0 needs
 * SA_HW_ROWSUM_SEP or the row sums by FADD (see there). SA_HW_FOLD2=1/0 (older variant builds)
 * means 2/1 at both. */
#ifdef SA_HW_FOLD2
#define SA_HW_FOLDN (SA_HW_FOLD2 ? 2 : 1)
#endif
#ifdef SA_HW_FOLDN
#define SA_HW_FOLDN128 SA_HW_FOLDN
#define SA_HW_FOLDN64 SA_HW_FOLDN
#endif
#ifndef SA_HW_FOLDN128
#define SA_HW_FOLDN128 0
#endif
#ifndef SA_HW_FOLDN64
#define SA_HW_FOLDN64 0
#endif
/* 1 (where SA_HW_FOLDN is 0, with SA_HW_ROWSUM_MMA): P's row sums by their own n8 wgmma against
 * the stage's ones into a fresh 4-register accumulator per tile, added to the fp32 sums after it,
 * instead of ones columns carried in O's accumulator. Hopper's FP8 wgmma accumulator loses the
 * small late terms of a long sum (round 9, bench/results/h200-3052730-hopper9-variants.md: the
 * ones columns carried across 16K keys, rel-L1 0.32), while O's columns keep the accuracy of
 * the per-tile fold (round 9b: the same rel-L1 with the row sums by FADD). */
#ifndef SA_HW_ROWSUM_SEP
#define SA_HW_ROWSUM_SEP 1
#endif
/* 1: where the tile accumulator carries (SA_HW_FOLDN 0), O is brought to tile j's max only when
 * some row of the warp moved (a warp-uniform branch around in-place multiplies, sa_wg_scale),
 * instead of by 64 multiplies every tile; rare after the first tiles, and the same values (the
 * rows that did not move have α = 1 exactly). Round 12
 * (bench/results/h200-c651a20-hopper12-variants.md): 741.0 against 706.3 TOPS at D=128 L=16K, 640.1
 * against 618.2 causal, bench.py's accuracy metrics identical in all 15 cases; at D=64 with P·V in
 * O and three consumers 416.1 against 426.8 for the per-tile fold; with four (since round 14) it
 * is part of the faster whole. */
#ifndef SA_HW_LAZY_RESCALE
#define SA_HW_LAZY_RESCALE 1
#endif
/* 1: the key loop's softmax converts P to E4M3 at the end of each exponential form, in that
 * form's basic block (sa_h_softmax_w's PACK_IN_EXP: ptxas then places the conversions among
 * the MUFU stretch, where one warp waits 8 cycles between its exponentials, and writes both
 * halves of a word with F2FP.PACK_AB_MERGE_C instead of joining them with a PRMT), instead of
 * once after the forms join; the same conversions, so the same bits. Per head dim (round 43,
 * bench/results/h200-1105aab-round43.md, two interleaved passes each): at D=128 +1.3 % at L=16K,
 * +1.5 % causal, +1.6 % at L=4K; at D=64 -0.8 % in the 128-key steps (L=16K), so off there (in
 * D=64's SA_H_SPEC instance never: the three copies spill 56 bytes there). */
#ifndef SA_HW_PACK_IN_EXP128
#define SA_HW_PACK_IN_EXP128 1
#endif
#ifndef SA_HW_PACK_IN_EXP64
#define SA_HW_PACK_IN_EXP64 0
#endif
/* 1: the fold of P·V(j-1) into O issued beside tile j's exponentials (in their basic block),
 * where its FFMAs fill the MUFU-bound stretch, instead of after the softmax. Per head dim
 * (round 8, bench/results/h200-458e33a-hopper8-variants.md, with SA_H_KGROUP=1): +2.9 % at
 * D=64, where every key step folds (485.7 against 471.8 TOPS at L=16K), none at D=128, where
 * the two-tile fold leaves one fold per two steps (681.0 against 682.2). Off by default with
 * the per-token K scales, with which it was not measured. SA_HW_FOLD_IN_EXP sets both. */
#ifdef SA_HW_FOLD_IN_EXP
#define SA_HW_FOLD_IN_EXP128 SA_HW_FOLD_IN_EXP
#define SA_HW_FOLD_IN_EXP64 SA_HW_FOLD_IN_EXP
#endif
#ifndef SA_HW_FOLD_IN_EXP128
#define SA_HW_FOLD_IN_EXP128 0
#endif
#ifndef SA_HW_FOLD_IN_EXP64
#define SA_HW_FOLD_IN_EXP64 0
#endif
/* 1: in the key loop, Q·Kᵀ's accumulators get their float-bias start values (SA_INT_FLOAT_BIAS)
 * by eight broadcast 16-byte shared loads at the start of the step, before the stage's wait,
 * instead of 32 register moves between the wait and the wgmma issue (the peeled first steps keep
 * the moves). Round 9 measured such loads placed after the wait: slower (their latency before
 * the issue). Per head dim, as SA_HW_QFUSE. Round 14 (bench/results/h200-0739beb-hopper14-
 * variants.md, each shape's faster of two passes; the loads then sat at the end of the previous
 * step, the same place in program order): at D=64 with four consumers 468.3 against 446.5 TOPS
 * at L=16K, same accuracy; at D=128 763.4 against 754.0, but loads issued in the peeled step
 * made ptxas keep six of its values in local memory (48 bytes), which the loads at the start of
 * the loop's steps do not: round 15 (h200-c03e06d-hopper15-variants.md), 765.3 against 752.2. */
#ifdef SA_HW_BIAS_PRELOAD
#define SA_HW_BIAS_PRELOAD128 SA_HW_BIAS_PRELOAD
#define SA_HW_BIAS_PRELOAD64 SA_HW_BIAS_PRELOAD
#endif
#ifndef SA_HW_BIAS_PRELOAD128
#define SA_HW_BIAS_PRELOAD128 1
#endif
#ifndef SA_HW_BIAS_PRELOAD64
#define SA_HW_BIAS_PRELOAD64 1
#endif
/* 1: a persistent grid (one block per SM looping over the work tiles) instead of one block per
 * tile; the next tile's copies then overlap the previous tile's last P·V and epilogue. */
#ifndef SA_HW_PERSIST
#define SA_HW_PERSIST 0
#endif
/* 1: each consumer runs only its own key tiles and releases the block's others unread: none
 * when its 64 rows all lie past lq (the last block of a head: at D=128 L=1K two of its three
 * consumers), and in causal calls those up to its rows' diagonal (the block runs up to its last
 * consumer's, NC - 1 tiles further). At D=128 L=1K causal that is 47 of the 183 consumer tiles
 * per head (15 fully masked, 32 on rows past lq); non-causal 32 of 288. The tiles past its own
 * are waited for and released in order, so the ring's protocol is unchanged. Round 13's idle
 * skip (rows past lq, by an early exit) changed ptxas's key loop; this form keeps it (572
 * against 570 instructions at D=128). Round 21 (h200-484a63e-hopper21-variants.md): D=128 L=1K
 * causal 216.8-217.2 against 196.6-201.7 TOPS (ncu: 407 against 450 us), L=16K causal 705.1
 * against 695.5, the rest within noise; memcheck and racecheck clean. Needs SA_HW_PINGPONG 0. */
#ifndef SA_HW_CAUSAL_TRIM
#define SA_HW_CAUSAL_TRIM 1
#endif
/* Where a head's partial block goes when lq is not a multiple of a block's rows (64·NC): 0 at
 * the end (its chunks are the last rows; the other consumers' rows lie past lq), 1 at the start:
 * block tiles end at Q's last 64-row chunk, so the partial block holds the first rows and its
 * missing chunks lie before row 0. With a causal mask the first rows see the fewest keys: at
 * D=128 (192-row blocks) L=1K the partial block runs 1 key tile instead of 16, L=4K 1 instead of
 * 64; each full block runs one tile more. Without a mask the work is the same either way. Each
 * row's keys and their order are unchanged, so O and the LSE are the same bit for bit. Needs
 * SA_HW_CAUSAL_TRIM (the idle consumers). Round 29 (h200-cf95d94-hopper29-variants.md): D=128
 * L=1K causal 227.9-229.9 against 214.8-220.3 TOPS, the other shapes within noise. */
#ifndef SA_HW_Q_ALIGN_END
#define SA_HW_Q_ALIGN_END 1
#endif
/* The order of a causal call's work tiles (blocks start in blockIdx order). 0: head by head,
 * each head's q tiles heaviest first. > 0 (from SA_HW_CAUSAL_GROUP_MIN_KV keys): heads in groups
 * whose K and V (int8 K and E4M3 Vᵀ, 2·lk_pad·D bytes a head) take about this many bytes of L2,
 * and within a group the heaviest q tile of every head first, then the next: the last blocks to
 * start are the lightest, as in longest-first scheduling, where head by head each head's light
 * tiles are followed by the next head's heaviest. A model (not validated; it has no L2 term) of
 * one block per SM with blocks of 8 + n tile-times (n key tiles) puts the head-by-head order
 * 3.4-4.9 % above the ideal makespan at D=128 L=1K-16K and groups of 4-16 heads 0.7-1.5 %
 * (bench/NOTES.md, rounds 29-34). The measured gains below are the figures to rely on. The
 * launch makes the order the grid's shape (x: the head in its group, y: the q tile, z: the
 * group), so every block finds its tile from its block index alone (decoded from a flat index,
 * its divisions moved ptxas's key loops). Not used by the persistent form. Round 34
 * (measured on the H200, h200-19102d2-hopper34-variants.md): causal D=128 L=16K 687.5-714.2
 * against 664.9-675.9 TOPS, D=64 L=16K 434.9-438.4 against 419.2-426.2, D=64 L=4K 337.5-338.6
 * against 318.4-328.2; at L=1K (below SA_HW_CAUSAL_GROUP_MIN_KV) the order lost 2-5 %;
 * non-causal shapes within noise (the key loop has two more uniform instructions at D=128: 574). */
#ifndef SA_HW_CAUSAL_GROUP_BYTES /* the persistent form runs several tiles per block: off there */
#define SA_HW_CAUSAL_GROUP_BYTES (SA_HW_PERSIST ? 0 : 16 << 20)
#endif
#ifndef SA_HW_CAUSAL_GROUP_MIN_KV
#define SA_HW_CAUSAL_GROUP_MIN_KV 4096
#endif
/* Blocks per SM at D=128: 1 (the consumers share one K/V ring) or 2 (one consumer each, 232
 * registers, at most 4 stages each to fit two rings): the second form hides one block's start
 * and end behind the other block's work, which one block per SM cannot; it was the default from
 * round 3 (with the two-level fold, SA_HW_FOLDN128=2) to round 10, where P·V accumulating in O
 * (SA_HW_FOLDN128=0) fits three consumers of 160 registers in one block: 12 consumer warps per
 * SM instead of 8, issue slots 59 % busy instead of 48 % (ncu). */
#ifndef SA_HW_CTAS128
#define SA_HW_CTAS128 1
#endif
/* Blocks per SM at D=64: 1 (four consumers sharing one ring) or 2 (two consumers each, 104
 * registers where one block's four get 112, up to 4 stages each): one block's start and end
 * then overlap the other's key loop, as SA_HW_CTAS128 = 2 meant at D=128, with the same 16
 * consumer warps per SM. The SA_HW_PAIR form keeps one block. Round 51
 * (bench/results/h200-d6755c4-round51.md): at 104 registers the consumers spill 176-216 bytes
 * and reload 10 values each key step: -20 to -27 % from 4K keys, so 1. */
#ifndef SA_HW_CTAS64
#define SA_HW_CTAS64 1
#endif
/* 1 (with SA_HW_PERSIST): the epilogue's column offsets computed per tile (see there). */
#ifndef SA_HW_FRESH_EPI
#define SA_HW_FRESH_EPI 1
#endif
/* 1: each key step of a consumer covers two 64-key stages (128 keys): one softmax over both
 * tiles' scores, P·V over both, so the per-step work (barrier waits, row-max shuffles, the
 * rescale factors and their tests, the loop) is paid once per 128 keys, and each thread has 64
 * independent exponentials per step instead of 32. The stages and the producer are unchanged;
 * an odd tile count's first step runs one tile, its second half masked. Its registers (S 64,
 * P 2 x 16) leave room for two consumers at D=128 (240 each) and three at D=64 (160). Needs
 * P·V accumulating in O (SA_HW_FOLDN 0) with the row sums by their own wgmma. Per head dim;
 * SA_HW_PAIR sets both. */
#ifdef SA_HW_PAIR
#define SA_HW_PAIR128 SA_HW_PAIR
#define SA_HW_PAIR64 SA_HW_PAIR
#endif
#ifndef SA_HW_PAIR128
#define SA_HW_PAIR128 0
#endif
#ifndef SA_HW_PAIR64
#define SA_HW_PAIR64 0
#endif
/* D=64 without a causal mask runs the SA_HW_PAIR form (three consumers) from this many keys,
 * against the one-stage form's four consumers (TOPS, H200, lq = lkv; rounds 26 and 27:
 * bench/results/h200-f822aa2-hopper26-variants.md, h200-d63ffd1-hopper27-variants.md): L=16K
 * 489.2-496.7 against 468.5-475.8, L=8K 456.6-459.5 against 443.4-447.3, L=4K 382.3-393.1
 * against 397.0-406.7; causal no gain (L=8K 340.6-351.0 against 352.1-352.6, L=16K
 * 396.6-426.9 against 420.5-421.1), so causal calls keep four consumers. */
#ifndef SA_HW_D64_PAIR_MIN_KV
#define SA_HW_D64_PAIR_MIN_KV 8192
#endif
/* 1: where head_dim is D and O's rows are 16-byte aligned, the epilogue stages each warp's 16
 * rows of O in shared memory (stmatrix) and the copy engine stores each row whole
 * (sa_h_epilogue_staged), instead of one 4-byte store per value pair with its address, column
 * bound and non-finite tests (ncu at D=128 L=4K causal, bench/results/h200-2bb8542-ncu37.tgz:
 * the epilogue ~11 % of the kernel's warp samples). The same bits; NC·4·16 rows of D·2 + 16
 * bytes more shared memory (52 KB at D=128). Per head dim; SA_HW_EPI_STAGE sets both. Round 38
 * (H200, bench/results/h200-a4427fb-hopper38-variants.md, two runs each, TOPS end to end):
 * D=128 L=1K 369.9-379.8 against 349.6-350.3, causal 250.1-250.4 against 237.1-238.9, L=4K
 * 634.8-637.2 against 625.2-627.9, L=16K within noise; at D=64 1-2 % slower (L=4K 399.8-401.8
 * against 410.4-410.5, L=16K 490.6-491.4 against 497.7-500.9: its epilogue is half the size and
 * ptxas's key loop moved), so D=128 only. */
#ifdef SA_HW_EPI_STAGE
#define SA_HW_EPI_STAGE128 SA_HW_EPI_STAGE
#define SA_HW_EPI_STAGE64 SA_HW_EPI_STAGE
#endif
#ifndef SA_HW_EPI_STAGE128
#define SA_HW_EPI_STAGE128 1
#endif
#ifndef SA_HW_EPI_STAGE64
#define SA_HW_EPI_STAGE64 0
#endif
/* Consumer warpgroups per block, per head dim: three at D=128 (160 registers each), four at
 * D=64 (112 each, which P·V in O leaves room for: round 14, with SA_HW_FOLDN64=0 and the bias
 * loads, 468.3 against 451.6 TOPS for three at D=64 L=16K); one fewer with SA_HW_PAIR. */
#ifndef SA_HW_NC128
#define SA_HW_NC128 (SA_HW_CTAS128 == 2 ? 1 : SA_HW_PAIR128 ? 2 : 3)
#endif
#ifndef SA_HW_NC64
#define SA_HW_NC64 (SA_HW_PAIR64 ? 3 : SA_HW_CTAS64 == 2 ? 2 : 4)
#endif

/* Whether the other switches leave the SA_HW_PAIR form buildable at head dim D: it is a form of
 * the default loop (P·V in O, row sums by their own wgmma, lazy rescale, Q in registers, one
 * tile per block). A variant build that changes those (older rounds' switches) keeps D=64 in
 * the one-stage form instead of failing to compile. */
template <int D> constexpr bool sa_hw_pair_possible()
{
    return (D == 128 ? SA_HW_FOLDN128 : SA_HW_FOLDN64) == 0 && SA_HW_ROWSUM_SEP &&
           SA_HW_ROWSUM_MMA && SA_HW_LAZY_RESCALE && SA_HW_OVERLAP && SA_HW_QREG &&
           !SA_HW_PINGPONG && !SA_HW_PERSIST &&
           !(D == 128 ? SA_HW_FOLD_IN_EXP128 : SA_HW_FOLD_IN_EXP64) && SA_HW_STAGES >= 4;
}

/* PAIR_K: the SA_HW_PAIR form whatever the switches say (D=64 from SA_HW_D64_PAIR_MIN_KV keys). */
template <int D, bool PAIR_K = false> struct sa_hw_cfg {
    static constexpr int NC = PAIR_K ? (D == 128 ? 2 : 3) : D == 128 ? SA_HW_NC128 : SA_HW_NC64;
    static constexpr int CTAS = D == 128 ? SA_HW_CTAS128 : PAIR_K ? 1 : SA_HW_CTAS64; /* per SM */
    static constexpr int THREADS = 128 * (NC + 1);
    static constexpr int ROWS = 64 * NC;
    static constexpr bool PINGPONG = SA_HW_PINGPONG && NC >= 2;
    static constexpr bool QFUSE = D == 128 ? SA_HW_QFUSE128 : SA_HW_QFUSE64;
    static constexpr int FOLDN = D == 128 ? SA_HW_FOLDN128 : SA_HW_FOLDN64;
    static constexpr bool ROWSUM_SEP = SA_HW_ROWSUM_SEP && SA_HW_ROWSUM_MMA && FOLDN == 0;
    static constexpr bool FOLD_IN_EXP = D == 128 ? SA_HW_FOLD_IN_EXP128 : SA_HW_FOLD_IN_EXP64;
    static constexpr bool BIAS_PRELOAD = D == 128 ? SA_HW_BIAS_PRELOAD128 : SA_HW_BIAS_PRELOAD64;
    static constexpr bool PAIR = PAIR_K || (D == 128 ? SA_HW_PAIR128 : SA_HW_PAIR64);
    static constexpr bool PACK_IN_EXP = D == 128 ? SA_HW_PACK_IN_EXP128 : SA_HW_PACK_IN_EXP64;
    /* Registers: every thread starts with the entry count, 65536 / (THREADS * CTAS) rounded down
     * to a multiple of 8 (what ptxas allocates: the block owns only that many); the producer drops
     * to 24 and the consumers share the rest, in multiples of 8. Asking for more than the block
     * owns makes setmaxnreg.inc wait for ever: four D=64 consumers (entry 96, not 102) hung so in
     * round 10. */
    static constexpr int PRODUCER_REGS = 24;
    static constexpr int ENTRY_REGS = 65536 / CTAS / THREADS / 8 * 8;
    static constexpr int SHARE = ((ENTRY_REGS * (NC + 1) - PRODUCER_REGS) / NC) / 8 * 8;
    static constexpr int CONSUMER_REGS = SHARE > 240 ? 240 : SHARE;
    static constexpr int Q_BYTES = ROWS * D;
    static constexpr int K_BYTES = SA_CTA_K * D;
    static constexpr int V_BYTES = D * SA_CTA_K;
    static constexpr int ONES_BYTES = SA_HW_ROWSUM_MMA ? 8 * SA_CTA_K : 0;
    static constexpr int STAGE_BYTES = K_BYTES + V_BYTES + ONES_BYTES + sa_htile<D>::KS_SLOT;
    static constexpr int STAGES = CTAS > 1 && SA_HW_STAGES > 4 ? 4 : SA_HW_STAGES;
    static constexpr int BAR_OFF = Q_BYTES + STAGES * STAGE_BYTES;
    static constexpr int BIAS_OFF = BAR_OFF + 8 * (2 * STAGES + 2); /* 16-byte aligned */
    static constexpr bool EPI_STAGE = D == 128 ? SA_HW_EPI_STAGE128 : SA_HW_EPI_STAGE64;
    static constexpr int EPI_OFF = BIAS_OFF + (BIAS_PRELOAD ? 16 : 0);  /* 16-byte aligned */
    static constexpr int EPI_WARP_BYTES = 16 * sa_h_epi_row_bytes<D>(); /* a warp's 16 rows */
    static constexpr int SMEM_BYTES = EPI_OFF + (EPI_STAGE ? NC * 4 * EPI_WARP_BYTES : 0);
    static constexpr int OT = SA_HW_ROWSUM_MMA && !ROWSUM_SEP ? D / 2 + 4 : D / 2; /* P·V acc. */
    static_assert(STAGE_BYTES % 128 == 0, "stages stay 128-byte aligned");
    static_assert((STAGES & (STAGES - 1)) == 0, "SA_HW_STAGES: a power of two");
    static_assert(!SA_H_SWAP_LBO_SBO, "the warp-specialized kernel has no descriptor test hook");
    static_assert(FOLDN >= 0 && FOLDN <= 2, "SA_HW_FOLDN: 0, 1 or 2");
    static_assert(!BIAS_PRELOAD || (SA_HW_QREG && SA_HW_OVERLAP),
                  "SA_HW_BIAS_PRELOAD is a form of the overlapped loop with Q in registers");
    static_assert(FOLDN == 1 || SA_HW_OVERLAP, "SA_HW_FOLDN is a form of the overlapped loop");
    static_assert(SA_HW_CAUSAL_GROUP_BYTES == 0 || !SA_HW_PERSIST,
                  "SA_HW_CAUSAL_GROUP_BYTES: one tile per block, its grid shaped by the order");
    static_assert(!SA_HW_Q_ALIGN_END || SA_HW_CAUSAL_TRIM,
                  "SA_HW_Q_ALIGN_END: consumers whose rows lie before row 0 idle as trimmed ones");
    static_assert(!(SA_HW_CAUSAL_TRIM && PINGPONG),
                  "SA_HW_CAUSAL_TRIM: a consumer that stops early would break the issue ring");
    /* round 9: ones columns carried in O's FP8 accumulator across 16K keys, rel-L1 0.32 */
    static_assert(FOLDN != 0 || !SA_HW_ROWSUM_MMA || ROWSUM_SEP,
                  "SA_HW_FOLDN 0 needs SA_HW_ROWSUM_SEP (or SA_HW_ROWSUM_MMA 0)");
    static_assert(CTAS * (SMEM_BYTES + 1024) <= 228 * 1024, "CTAS blocks fit an SM (H100/H200)");
    static_assert(!PAIR || sa_hw_pair_possible<D>(),
                  "SA_HW_PAIR is a form of the default loop (P·V in O, row sums by their own "
                  "wgmma, lazy rescale, Q in registers, one tile per block)");
    static_assert(PRODUCER_REGS + NC * CONSUMER_REGS <= (NC + 1) * ENTRY_REGS,
                  "setmaxnreg asks for no more registers than the block owns (else it hangs)");
};

/* Descriptors by their two 32-bit halves: the low half (start address >> 4, LBO) is the only
 * one that moves between stages and k steps, by (bytes >> 4); shared memory < 256 KB keeps the
 * address field from carrying into LBO. One uniform add per wgmma instead of mask/shift/or. */
__device__ __forceinline__ uint32_t sa_hw_desc_lo(uint32_t smem_addr)
{
    return ((smem_addr & 0x3FFFFu) >> 4) | ((128u >> 4) << 16); /* LBO: K-direction, 128 */
}
__device__ __forceinline__ uint64_t sa_hw_desc(uint32_t lo, uint32_t sbo)
{
    return ((uint64_t)(sbo >> 4) << 32) | lo;
}

/* P·V of one tile into ot: fresh (the first k step does not accumulate) unless carry, onto a
 * tile held there (SA_HW_FOLDN; a compile-time constant at every call); v_lo: the low half of
 * the Vᵀ tile's descriptor. With SA_HW_ROWSUM_SEP the row sums in ls likewise: fresh unless
 * ls_carry (SA_HW_PAIR's second tile). */
template <int D, typename C = sa_hw_cfg<D>>
__device__ __forceinline__ void sa_hw_issue_pv(float (&ot)[C::OT], float (&ls)[4],
                                               const uint32_t (&pa)[2][4], uint32_t v_lo, int carry,
                                               int ls_carry = 0)
{
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
        const uint64_t vd = sa_hw_desc(v_lo + kk * (256 >> 4), sa_htile<D>::V_SBO);
        const int accumulate = kk ? 1 : carry;
        if constexpr (C::ROWSUM_SEP) { /* the ones: the n8 group after Vᵀ, fresh */
            sa_wg_pv_e4m3_n8(
                ls, pa[kk],
                sa_hw_desc(v_lo + (C::V_BYTES >> 4) + kk * (256 >> 4), sa_htile<D>::V_SBO),
                kk ? 1 : ls_carry);
            if constexpr (D == 128)
                sa_wg_pv_e4m3_n128(ot, pa[kk], vd, accumulate);
            else
                sa_wg_pv_e4m3_n64(ot, pa[kk], vd, accumulate);
        } else if constexpr (D == 128 && SA_HW_ROWSUM_MMA)
            sa_wg_pv_e4m3_n136(ot, pa[kk], vd, accumulate);
        else if constexpr (D == 128)
            sa_wg_pv_e4m3_n128(ot, pa[kk], vd, accumulate);
        else if constexpr (SA_HW_ROWSUM_MMA)
            sa_wg_pv_e4m3_n72(ot, pa[kk], vd, accumulate);
        else
            sa_wg_pv_e4m3_n64(ot, pa[kk], vd, accumulate);
    }
}

/* S = Q·Kᵀ for one 64-key tile, Q from shared memory (q_lo) or, with qa, from registers;
 * committed as one wgmma group. The int32 accumulators start at the float-bias bits. */
template <int D>
__device__ __forceinline__ void sa_hw_issue_qk(int32_t (&acc)[32], uint32_t q_lo, uint32_t k_lo)
{
#pragma unroll
    for (int i = 0; i < 32; ++i)
        acc[i] = SA_INT_FLOAT_BIAS;
    sa_wg_fence();
#pragma unroll
    for (int kk = 0; kk < D / 32; ++kk)
        sa_wg_qk_s8(acc, sa_hw_desc(q_lo + kk * (256 >> 4), sa_htile<D>::QK_SBO),
                    sa_hw_desc(k_lo + kk * (256 >> 4), sa_htile<D>::QK_SBO));
    sa_wg_commit();
}
template <int D, bool SET_BIAS>
__device__ __forceinline__ void sa_hw_issue_qk_ra(int32_t (&acc)[32],
                                                  const uint32_t (&qa)[D / 32][4], uint32_t k_lo)
{
    if (SET_BIAS) { /* else acc holds it already (SA_HW_BIAS_PRELOAD) */
#pragma unroll
        for (int i = 0; i < 32; ++i)
            acc[i] = SA_INT_FLOAT_BIAS;
    }
    sa_wg_fence();
#pragma unroll
    for (int kk = 0; kk < D / 32; ++kk)
        sa_wg_qk_s8_ra(acc, qa[kk], sa_hw_desc(k_lo + kk * (256 >> 4), sa_htile<D>::QK_SBO));
    sa_wg_commit();
}

/* SA_HW_BIAS_PRELOAD: acc = the bias, by eight broadcast loads of the 16 bytes at bias_addr
 * (.volatile: else ptxas merges them into one load and 28 register moves). */
__device__ __forceinline__ void sa_hw_bias_load(int32_t (&acc)[32], uint32_t bias_addr)
{
#pragma unroll
    for (int i = 0; i < 32; i += 4)
        asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(acc[i]), "=r"(acc[i + 1]), "=r"(acc[i + 2]), "=r"(acc[i + 3])
                     : "r"(bias_addr)
                     : "memory");
}

/* Test builds only (bench/build_hopper_variants.sh): 1 = work tiles with the heads varying
 * fastest, so that the blocks running at once belong to different heads and each head's K and V
 * are read by about one block at a time (what a persistent kernel streaming one head per SM
 * would ask of L2 and DRAM); the product runs a head's q tiles together (one read of its K and
 * V from DRAM, the rest from L2). It reorders only a grid of one row with a tile per block
 * (gridDim.x = the tiles: every call but a causal one grouped by SA_HW_CAUSAL_GROUP_BYTES, whose
 * 3-D grid keeps its own order); measured without a mask. */
#ifndef SA_TEST_HOPPER_HEAD_FASTEST
#define SA_TEST_HOPPER_HEAD_FASTEST 0
#endif
/* Work tile t of the flattened grid: (q tile, head, batch), heavy causal q tiles first. */
struct sa_hw_tile {
    int q0, h, b, n_kt;
};
template <int ROWS, bool KG>
__device__ __forceinline__ sa_hw_tile sa_hw_decode(int t, const sa_attn_args &a, int nq)
{
    sa_hw_tile w;
    int x = t % nq, rest = t / nq;
    if (SA_TEST_HOPPER_HEAD_FASTEST && gridDim.y == 1) { /* diagnostic order, see the switch */
        const int heads = (int)gridDim.x / nq;           /* a tile a block: a permutation */
        x = t / heads;
        rest = t % heads;
    }
    w.h = rest % a.hq;
    w.b = rest / a.hq;
    if (SA_HW_Q_ALIGN_END) /* the first block may start before row 0 (by up to NC - 1 chunks) */
        w.q0 = ((a.lq + 63) / 64 - (x + 1) * (ROWS / 64)) * 64;
    else
        w.q0 = (nq - 1 - x) * ROWS;
    w.n_kt = (a.lkv + SA_CTA_K - 1) / SA_CTA_K;
    if (a.causal)
        w.n_kt = sa_h_causal_tiles<KG>(min(w.q0 + ROWS, a.lq) - 1 + (a.lkv - a.lq), w.n_kt);
    return w;
}

/* One block runs work tiles blockIdx.x, blockIdx.x + gridDim.x, ... of the n_tiles of the call
 * (gridDim.x = n_tiles: one each; SA_HW_PERSIST: one block per SM, the producer loading the next
 * tile's Q and K/V stages while the consumers finish the previous tile). The ring's stage counter
 * runs on across tiles. */
template <int D, bool BF16, bool PAIR_K = false, bool SPEC_K = false, bool KG = false>
__global__ void __launch_bounds__(sa_hw_cfg<D, PAIR_K>::THREADS, sa_hw_cfg<D, PAIR_K>::CTAS)
    sa_hopper_ws_kernel(const sa_attn_args a, int n_tiles)
{
#if SA_HOPPER_CODE
    using C = sa_hw_cfg<D, PAIR_K>;
    static_assert(!KG || (!PAIR_K && !SPEC_K), "rank groups: one-tile steps, no SA_H_SPEC form");
    constexpr int KS_BYTES = sa_h_ks_bytes<KG>(); /* copied into the stage's slot (KS_SLOT) */
    constexpr int NC = C::NC, S = C::STAGES;
    constexpr int NO = D / 8; /* n8 chunks of O */
    extern __shared__ __align__(128) char smem[];
    const int tid = threadIdx.x, wg = tid / 128;
    const int nq = (a.lq + C::ROWS - 1) / C::ROWS;
    const int diag = a.lkv - a.lq;
    /* The block's first tile: blockIdx.x, or in SA_HW_CAUSAL_GROUP_BYTES's grid (x: the head in
     * its group, y: the q tile, z: the group) that of its head and q tile; a block for a head
     * past the last (the last group may be short) has nothing to do. Compiled only with the
     * switch: computed from a variable at all, the tile index moved ptxas's key loops. */
#if SA_HW_CAUSAL_GROUP_BYTES
    int t_first = blockIdx.x;
    if (gridDim.y > 1) {
        const int head = blockIdx.z * gridDim.x + blockIdx.x;
        if (head >= n_tiles / nq)
            return;
        t_first = blockIdx.y + nq * head;
    }
#define SA_HW_FIRST_TILE t_first
#else
#define SA_HW_FIRST_TILE blockIdx.x
#endif

    const uint32_t sQ = sa_smem_addr(smem);
    const uint32_t full0 = sQ + C::BAR_OFF, empty0 = full0 + 8 * S;
    const uint32_t qfull = full0 + 16 * S, qempty = qfull + 8;
    auto stage = [&](int it) { return sQ + C::Q_BYTES + ((uint32_t)it % S) * C::STAGE_BYTES; };

    if (tid == 0) {
        for (int s = 0; s < S; ++s) {
            sa_mbar_init(full0 + 8 * s, 1);
            sa_mbar_init(empty0 + 8 * s, 128 * NC);
        }
        sa_mbar_init(qfull, 1);
        sa_mbar_init(qempty, 128 * NC);
        sa_mbar_init_fence();
        if (C::BIAS_PRELOAD)
            *(int4 *)(smem + C::BIAS_OFF) = make_int4(SA_INT_FLOAT_BIAS, SA_INT_FLOAT_BIAS,
                                                      SA_INT_FLOAT_BIAS, SA_INT_FLOAT_BIAS);
    }
    if constexpr (SA_HW_ROWSUM_MMA) {
        /* The ones after each stage's Vᵀ (E4M3 1.0 = 0x38); never overwritten by the copies. */
        constexpr int CHUNKS = C::ONES_BYTES / 16;
        for (int i = tid; i < S * CHUNKS; i += C::THREADS) {
            const int s = i / CHUNKS, off = i % CHUNKS;
            *(uint4 *)(smem + C::Q_BYTES + s * C::STAGE_BYTES + C::K_BYTES + C::V_BYTES +
                       off * 16) = make_uint4(0x38383838u, 0x38383838u, 0x38383838u, 0x38383838u);
        }
        sa_fence_proxy_async_smem();
    }
    __syncthreads();

    if (wg == 0) {
        /* ---- producer ---- */
        sa_wg_regs_dec<C::PRODUCER_REGS>();
        if (tid == 0) {
            sa_pdl_wait(); /* the pre-pass's Q, K, V and scales (SA_PDL) */
            int it = 0, nt = 0;
#if SA_HW_CAUSAL_GROUP_BYTES /* one tile per block; its grid is not n_tiles long */
            for (int t = SA_HW_FIRST_TILE; t < n_tiles; t += n_tiles, ++nt) {
#else
            for (int t = blockIdx.x; t < n_tiles; t += gridDim.x, ++nt) {
#endif
                const sa_hw_tile w = sa_hw_decode<C::ROWS, KG>(t, a, nq);
                const size_t bh = (size_t)w.b * a.hq + w.h;
                const size_t bhk = (size_t)w.b * a.hkv + w.h / a.group;
                /* Q rows in 64-row chunks that exist in the workspace (lq_pad is a multiple of
                 * 128: with NC = 3 a block's last chunk may lie past it; that consumer stores
                 * nothing). The previous tile's consumers must be done with the Q buffer. */
                if (!C::QFUSE || !a.q_src) { /* else the consumers quantize Q */
                    if (nt > 0)
                        sa_mbar_wait(qempty, (nt - 1) & 1);
                    /* SA_HW_Q_ALIGN_END: chunks before row 0 are not copied (their consumer
                     * idles) */
                    const int skip = SA_HW_Q_ALIGN_END && w.q0 < 0 ? -w.q0 / 64 : 0;
                    const int q0 = w.q0 + 64 * skip;
                    const int chunks = min(NC - skip, (a.lq_pad - q0) / 64);
                    sa_mbar_expect_tx(qfull, chunks * 64 * D);
                    sa_bulk_g2s(sQ + skip * 64 * D, (const char *)a.q + (bh * a.lq_pad + q0) * D,
                                chunks * 64 * D, qfull);
                }
                const char *kg = (const char *)a.k + bhk * a.lk_pad * D;
                const char *vg = (const char *)a.v + bhk * a.lk_pad * D;
                const float *ksg = a.kscale + sa_h_ks_index<KG>(bhk * a.lk_pad);
                for (int j = 0; j < w.n_kt; ++j, ++it) {
                    if (it >= S)
                        sa_mbar_wait(empty0 + 8 * (it % S), ((it / S) - 1) & 1);
                    const uint32_t st = stage(it), bar = full0 + 8 * ((uint32_t)it % S);
                    const size_t k0 = (size_t)j * SA_CTA_K;
                    sa_mbar_expect_tx(bar, C::K_BYTES + C::V_BYTES + KS_BYTES);
                    sa_bulk_g2s(st, kg + k0 * D, C::K_BYTES, bar);
                    sa_bulk_g2s(st + C::K_BYTES, vg + k0 * D, C::V_BYTES, bar);
                    sa_bulk_g2s(st + C::K_BYTES + C::V_BYTES + C::ONES_BYTES,
                                ksg + sa_h_ks_index<KG>(k0), KS_BYTES, bar);
                }
            }
        }
        return;
    }

    /* ---- consumers ---- */
    sa_wg_regs_inc<C::CONSUMER_REGS>();
    /* SA_PDL: the pre-pass's output (Q's scales, V's for the epilogue) and O's writes wait for
     * it; a consumer quantizing Q from the caller's tensor waits after that */
    if (!(C::QFUSE && a.q_src))
        sa_pdl_wait();
    const int c = wg - 1, warp = (tid / 32) % 4, lane = tid % 32;
    const int g = lane / 4, tq = lane % 4;
    /* Ping-pong: consumer c issues its wgmma batch after barrier 1 + c, then lets c + 1 go. */
    const int my_bar = 1 + c, next_bar = 1 + (c + 1) % NC;
    auto turn_begin = [&]() {
        if (C::PINGPONG)
            sa_named_sync(my_bar, 256);
    };
    auto turn_end = [&]() {
        if (C::PINGPONG)
            sa_named_arrive(next_bar, 256);
    };
    if (C::PINGPONG && c == NC - 1)
        sa_named_arrive(1, 256);                         /* consumer 0 goes first */
    auto slot = [](int it) { return (uint32_t)it % S; }; /* it >= 0: a mask */
    auto wait_full = [&](int it) { sa_mbar_wait(full0 + 8 * slot(it), ((uint32_t)it / S) & 1); };
    auto release = [&](int it) { sa_mbar_arrive(empty0 + 8 * slot(it)); };
    /* Descriptor low halves of stage 0's K and Vᵀ; stage s adds s·STAGE_BYTES >> 4. */
    const uint32_t k_lo0 = sa_hw_desc_lo(stage(0)), v_lo0 = k_lo0 + (C::K_BYTES >> 4);
    auto k_lo = [&](int it) { return k_lo0 + slot(it) * (C::STAGE_BYTES >> 4); };
    auto v_lo = [&](int it) { return v_lo0 + slot(it) * (C::STAGE_BYTES >> 4); };
    auto ks_of = [&](int it) {
        return (const float *)(smem + (stage(it) - sQ) + C::K_BYTES + C::V_BYTES + C::ONES_BYTES);
    };
    /* KG: this lane quad's K factor of stage it, read once its copies have landed and before
     * the wgmma wait, so the load's latency hides under the Q·Kᵀ. */
    auto kg_of = [&](int it) { return KG ? ks_of(it)[tq] : 0.0f; };

#if SA_HW_PERSIST
    int it0 = 0, nt = 0; /* the ring's counter at this tile's first stage; tiles done */
#pragma unroll 1
    for (int t = blockIdx.x; t < n_tiles; t += gridDim.x, ++nt) {
#else
    {
        constexpr int it0 = 0, nt = 0; /* one tile per block */
        const int t = SA_HW_FIRST_TILE;
#endif
        const sa_hw_tile w = sa_hw_decode<C::ROWS, KG>(t, a, nq);
        const int h = w.h, b = w.b, n_kt = w.n_kt;
        const size_t bh = (size_t)b * a.hq + h, bhk = (size_t)b * a.hkv + h / a.group;
        /* SA_HW_Q_ALIGN_END: rows before row 0 are treated as rows past lq (read as zeros, never
         * stored, no key tiles) */
        const int q0c = SA_HW_Q_ALIGN_END && w.q0 + 64 * c < 0 ? a.lq : w.q0 + 64 * c;
#if SA_HW_CAUSAL_TRIM
        /* This consumer's own key tiles: none when its rows all lie past lq; causal, up to its
         * rows' diagonal (the block's n_kt covers its last consumer's rows, up to NC - 1 tiles
         * more). See SA_HW_CAUSAL_TRIM. */
        int n_c = n_kt;
        if (q0c >= a.lq) { /* rows all past lq (the last block of a head): nothing to store */
            n_c = 0;
        } else if (a.causal) {
            n_c = sa_h_causal_tiles<KG>(min(q0c + 63, a.lq - 1) + diag, n_kt);
        }
        /* one value per warp, as the compiler can see: the key loop's counters stay in uniform
         * registers (derived from the thread index, n_c would move them to vector registers
         * and add 16 R2UR per step for the descriptors) */
        n_c = __shfl_sync(0xffffffffu, n_c, 0);
#else
        const int n_c = n_kt;
#endif

        sa_h_rows r;
        r.row0 = q0c + warp * 16 + g;
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            if (!C::QFUSE || !a.q_src)
                r.qs[hh] = a.qscale[bh * a.lq_pad + min(r.row0 + 8 * hh, a.lq_pad - 1)];
            r.mx[hh] = -INFINITY;
            r.sum[hh] = 0.0f;
        }
        float o[NO * 4];
#pragma unroll
        for (int i = 0; i < NO * 4; ++i)
            o[i] = 0.0f;
        float ot[C::OT];
#pragma unroll
        for (int i = 0; i < C::OT; ++i)
            ot[i] = 0.0f;
        float ls[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* SA_HW_ROWSUM_SEP: a tile's row sums */
        auto need_mask = [&](int k0) {
            return k0 + SA_CTA_K > a.lkv || (a.causal && sa_h_tile_last_key<KG>(k0) > q0c + diag);
        };
        /* O (and, with the ones columns, the row sums) = O·alpha + the tile's P·V. */
        auto fold = [&](const float(&al)[2]) {
#pragma unroll
            for (int i = 0; i < C::OT; ++i)
                sa_wg_touch(ot[i]);
#pragma unroll
            for (int i = 0; i < NO * 4; ++i)
                o[i] = fmaf(o[i], al[(i >> 1) & 1], ot[i]);
            if constexpr (C::ROWSUM_SEP) { /* the sums are at the last tile's max already */
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    sa_wg_touch(ls[i]);
                r.sum[0] += ls[0];
                r.sum[1] += ls[2];
            } else if (SA_HW_ROWSUM_MMA) {
                r.sum[0] = fmaf(r.sum[0], al[0], ot[NO * 4]);
                r.sum[1] = fmaf(r.sum[1], al[1], ot[NO * 4 + 2]);
            }
        };
        /* The held tile accumulator (ot: O itself where SA_HW_FOLDN is 0), its last P·V waited
         * for, brought to the new max by alpha; with SA_HW_ROWSUM_SEP that P's row sums added
         * first; O's factor alpha_prev follows. CARRY (ot carries earlier tiles): lazily, as
         * SA_HW_LAZY_RESCALE says; else only where a row moved. */
        auto rescale_held = [&](const float(&alpha)[2], float(&alpha_prev)[2], auto carry_c) {
            constexpr bool CARRY = decltype(carry_c)::value;
#pragma unroll
            for (int i = 0; i < C::OT; ++i)
                sa_wg_touch(ot[i]);
            if constexpr (CARRY && SA_HW_LAZY_RESCALE) {
                if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {
#pragma unroll
                    for (int i = 0; i < C::OT; ++i)
                        sa_wg_scale(ot[i], alpha[(i >> 1) & 1]);
                }
            } else if (CARRY || alpha[0] != 1.0f || alpha[1] != 1.0f) {
#pragma unroll
                for (int i = 0; i < C::OT; ++i)
                    ot[i] *= alpha[(i >> 1) & 1];
            }
            if constexpr (C::ROWSUM_SEP) { /* P(j-1)'s sums, then to tile j's max */
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    sa_wg_touch(ls[i]);
                r.sum[0] = (r.sum[0] + ls[0]) * alpha[0];
                r.sum[1] = (r.sum[1] + ls[2]) * alpha[1];
            }
            alpha_prev[0] *= alpha[0]; /* O's factor to tile j's max */
            alpha_prev[1] *= alpha[1];
        };

#if SA_HW_QREG
        /* The A fragment (mma.sync m16n8k32 layout, as P's): a0/a1 rows g/g+8, bytes
         * 4tq..4tq+3 of the k32 step, a2/a3 the same 16 bytes further; Q is in core-matrix
         * order. Then the Q buffer is free for the next tile. With a.q_src, quantized here from
         * the caller's Q instead (the pre-pass left Q out). */
        uint32_t qa[D / 32][4];
        if (C::QFUSE && a.q_src) {
            if (SA_TEST_HOPPER_DIAG == 4 && a.lq > 0) { /* diagnostic: Q zero, scales 1 */
#pragma unroll
                for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        qa[kk][i] = 0u;
                r.qs[0] = r.qs[1] = 1.0f;
            } else {
                sa_h_quantize_q<D, BF16>(a, b, h, r.row0, tq, qa, r.qs);
            }
            sa_pdl_wait();
        } else {
            sa_mbar_wait(qfull, nt & 1);
            /* offset(row, byte) with row = 16 warp + 8 (i & 1) + g, byte = 32 kk + 16 (i >> 1)
             * + 4 tq: a per-lane part plus immediates. The base is made opaque so the per-lane
             * addresses are not hoisted out of the tile loop (they would stay live across it). */
            uint32_t base;
            asm volatile("mov.u32 %0, %1;\n" : "=r"(base) : "r"(sQ + c * 64 * D));
            base += warp * 16 * D + g * 16 + tq * 4;
#pragma unroll
            for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    asm volatile("ld.shared.u32 %0, [%1];\n"
                                 : "=r"(qa[kk][i])
                                 : "r"(base + 8 * D * (i & 1) + 256 * kk + 128 * (i >> 1))
                                 : "memory");
            sa_mbar_arrive(qempty);
        }
        auto issue_qk = [&](int32_t(&acc)[32], int it, auto set_bias_c) {
            sa_hw_issue_qk_ra<D, decltype(set_bias_c)::value>(acc, qa, k_lo(it));
        };
#else
        sa_mbar_wait(qfull, nt & 1);
        const uint32_t q_lo = sa_hw_desc_lo(sQ + c * 64 * D);
        auto issue_qk = [&](int32_t(&acc)[32], int it, auto) { /* sets the bias itself */
                                                               sa_hw_issue_qk<D>(acc, q_lo,
                                                                                 k_lo(it));
        };
#endif
        /* How a Q·Kᵀ's accumulators get their start values: register moves (set_bias), or in
         * the key loop's steps as SA_HW_BIAS_PRELOAD says (loop_bias). */
        constexpr std::integral_constant<bool, true> set_bias{};
        constexpr std::integral_constant<bool, !C::BIAS_PRELOAD> loop_bias{};
        (void)loop_bias;
#if SA_HW_OVERLAP
#if SA_HW_QREG
        if constexpr (C::PAIR) {
            /* SA_HW_PAIR: steps of two stages (128 keys). With an odd n_c the first step runs
             * stage it0 alone (its second half reads the same stage again and is masked whole);
             * step i >= 1 covers stages it0 + 2i - odd and the next. */
            if (n_c > 0) {
                const int odd = n_c & 1, n_steps = (n_c + 1) >> 1;
                int32_t acc[2][32];
                uint32_t pa[4][4];
                float alpha_prev[2];
                auto issue_qk2 = [&](int s0, int s1, auto set_bias_c) {
                    if (decltype(set_bias_c)::value) {
#pragma unroll
                        for (int w = 0; w < 2; ++w)
#pragma unroll
                            for (int i = 0; i < 32; ++i) {
                                acc[w][i] = SA_INT_FLOAT_BIAS;
                                /* defined before the fence: else the second tile's moves sink
                                 * past it, and ptxas fences that tile's wgmma itself (C7519) */
                                sa_wg_touch(acc[w][i]);
                            }
                    }
                    sa_wg_fence();
#pragma unroll
                    for (int w = 0; w < 2; ++w)
#pragma unroll
                        for (int kk = 0; kk < D / 32; ++kk)
                            sa_wg_qk_s8_ra(acc[w], qa[kk],
                                           sa_hw_desc(k_lo(w ? s1 : s0) + kk * (256 >> 4),
                                                      sa_htile<D>::QK_SBO));
                    sa_wg_commit();
                };
                auto issue_pv2 = [&](int s0, int s1, auto carry_c) {
                    using half = const uint32_t(*)[2][4];
                    sa_hw_issue_pv<D, C>(ot, ls, *reinterpret_cast<half>(&pa[0]), v_lo(s0),
                                         decltype(carry_c)::value ? 1 : 0, 0);
                    sa_hw_issue_pv<D, C>(ot, ls, *reinterpret_cast<half>(&pa[2]), v_lo(s1), 1, 1);
                };
                auto touch_acc = [&]() {
#pragma unroll
                    for (int w = 0; w < 2; ++w)
#pragma unroll
                        for (int i = 0; i < 32; ++i)
                            sa_wg_touch(acc[w][i]);
                };
                /* P·V of stages s0, s1 waited for: their P registers and stages are free */
                auto keep_and_release = [&](int s0, int s1) {
                    sa_wg_keep(pa);
                    release(s0);
                    if (s1 != s0)
                        release(s1);
                };
                auto softmax2 = [&](uint32_t(&p)[4][4], float(&al)[2], int s0, int s1, int n_live) {
                    const float *const ks2[2] = {ks_of(s0), ks_of(s1)};
                    const int k0 = (s0 - it0) * SA_CTA_K;
                    sa_h_softmax_w<!SA_HW_ROWSUM_MMA, 2, false, C::PACK_IN_EXP>(
                        acc, p, al, r, ks2, 0.0f, k0, a, diag,
                        n_live < 2 || need_mask(k0 + SA_CTA_K), n_live, tq);
                };
                const int s1_first = odd ? it0 : it0 + 1;
                wait_full(it0);
                if (!odd)
                    wait_full(it0 + 1);
                issue_qk2(it0, s1_first, set_bias);
                sa_wg_wait<0>();
                touch_acc();
                softmax2(pa, alpha_prev, it0, s1_first, 2 - odd);
                /* One step: Q·Kᵀ of stages s0, s0 + 1 and P·V of the previous step's (p0, p1)
                 * issued, the softmax under P·V, then O (the carried accumulator) brought to the
                 * new max, as the one-stage loop's FOLDN 0 form. */
                auto step = [&](int s0, int p0, int p1, auto carry_c, auto set_bias_c) {
                    if (!decltype(set_bias_c)::value) { /* SA_HW_BIAS_PRELOAD */
                        sa_hw_bias_load(acc[0], sQ + C::BIAS_OFF);
                        sa_hw_bias_load(acc[1], sQ + C::BIAS_OFF);
                    }
                    wait_full(s0);
                    wait_full(s0 + 1);
                    issue_qk2(s0, s0 + 1, set_bias_c); /* fences, then commits group 1 */
                    issue_pv2(p0, p1, carry_c);
                    sa_wg_commit(); /* group 2: the previous step's P·V */
                    sa_wg_wait<1>();
                    touch_acc();
                    uint32_t pn[4][4];
                    float alpha[2];
                    softmax2(pn, alpha, s0, s0 + 1, 2);
                    sa_wg_wait<0>();
                    keep_and_release(p0, p1);
                    rescale_held(alpha, alpha_prev, carry_c);
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                        for (int i = 0; i < 4; ++i)
                            pa[kk][i] = pn[kk][i];
                };
                auto last = [&](int p0, int p1, auto carry_c) {
                    sa_wg_fence();
                    issue_pv2(p0, p1, carry_c);
                    sa_wg_commit();
                    sa_wg_wait<0>();
                    keep_and_release(p0, p1);
                    fold(alpha_prev);
                };
                constexpr std::integral_constant<bool, false> no{};
                constexpr std::integral_constant<bool, true> yes{};
                if (n_steps > 1) {
                    step(it0 + 2 - odd, it0, s1_first, no, set_bias);
#pragma unroll 1
                    for (int i = 2; i < n_steps; ++i) {
                        const int s0 = it0 + 2 * i - odd;
                        step(s0, s0 - 2, s0 - 1, yes, loop_bias);
                    }
                    const int sl = it0 + 2 * (n_steps - 1) - odd;
                    last(sl, sl + 1, yes);
                } else {
                    last(it0, s1_first, no);
                }
            }
        } else
#endif
            if (n_c > 0) {
            int32_t acc[32];
            uint32_t pa[2][4];
            float alpha_prev[2];
            turn_begin();
            wait_full(it0);
            issue_qk(acc, it0, set_bias);
            turn_end();
            const float kg0 = kg_of(it0);
            sa_wg_wait<0>();
#pragma unroll
            for (int i = 0; i < 32; ++i)
                sa_wg_touch(acc[i]);
            sa_h_softmax<!SA_HW_ROWSUM_MMA, false, false, KG>(acc, pa, alpha_prev, r, ks_of(it0),
                                                              kg0, 0, a, diag, need_mask(0), tq);
            /* One key step: Q·Kᵀ(j) and P·V(j-1) issued, softmax(j) under them, then P·V(j-1)
             * folded into O, or (HOLD, SA_HW_FOLDN) held in ot, brought to tile j's max, for
             * P·V(j) to accumulate onto (CARRY). Both compile-time: a run-time choice between
             * holding and folding makes ptxas serialize every wgmma (C7513). */
            auto step = [&](int j, auto carry_c, auto hold_c, auto set_bias_c) {
                constexpr bool CARRY = decltype(carry_c)::value, HOLD = decltype(hold_c)::value;
                const int it = it0 + j;
                if (!decltype(set_bias_c)::value) /* SA_HW_BIAS_PRELOAD */
                    sa_hw_bias_load(acc, sQ + C::BIAS_OFF);
                turn_begin();
                wait_full(it);
                issue_qk(acc, it, set_bias_c); /* fences, then commits group 1 */
                sa_hw_issue_pv<D, C>(ot, ls, pa, v_lo(it - 1), CARRY ? 1 : 0);
                sa_wg_commit(); /* group 2: P·V(j-1) */
                turn_end();
                const float kg = kg_of(it);
                sa_wg_wait<1>();
#pragma unroll
                for (int i = 0; i < 32; ++i)
                    sa_wg_touch(acc[i]);
                uint32_t pn[2][4];
                float alpha[2];
                /* P·V(j-1) done: its P registers and stage are free */
                auto pv_done = [&]() {
                    sa_wg_wait<0>();
                    sa_wg_keep(pa); /* read by P·V(j-1) until here */
                    release(it - 1);
                };
                if constexpr (C::FOLD_IN_EXP && !HOLD) {
                    /* the fold of P·V(j-1) beside tile j's exponentials (it needs only the
                     * previous factors) */
                    auto wait_and_fold = [&]() {
                        pv_done();
                        fold(alpha_prev);
                    };
                    sa_h_softmax<!SA_HW_ROWSUM_MMA, false, false, KG>(
                        acc, pn, alpha, r, ks_of(it), kg, j * SA_CTA_K, a, diag,
                        need_mask(j * SA_CTA_K), tq, wait_and_fold);
                    alpha_prev[0] = alpha[0];
                    alpha_prev[1] = alpha[1];
                } else {
                    /* (D=64's SA_H_SPEC instance spills with the three copies) */
                    sa_h_softmax<!SA_HW_ROWSUM_MMA, SPEC_K, C::PACK_IN_EXP && (D == 128 || !SPEC_K),
                                 KG>(acc, pn, alpha, r, ks_of(it), kg, j * SA_CTA_K, a, diag,
                                     need_mask(j * SA_CTA_K), tq);
                    pv_done();
                    if constexpr (HOLD) {
                        rescale_held(alpha, alpha_prev, carry_c);
                    } else {
                        fold(alpha_prev);
                        alpha_prev[0] = alpha[0];
                        alpha_prev[1] = alpha[1];
                    }
                }
#pragma unroll
                for (int kk = 0; kk < 2; ++kk)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        pa[kk][i] = pn[kk][i];
            };
            /* The last tile's P·V (onto a held tile with CARRY), then the last fold. */
            auto last = [&](auto carry_c) {
                constexpr bool CARRY = decltype(carry_c)::value;
                turn_begin();
                sa_wg_fence();
                sa_hw_issue_pv<D, C>(ot, ls, pa, v_lo(it0 + n_c - 1), CARRY ? 1 : 0);
                sa_wg_commit();
                turn_end();
                sa_wg_wait<0>();
                sa_wg_keep(pa);
                release(it0 + n_c - 1);
                fold(alpha_prev);
            };
            constexpr std::integral_constant<bool, false> no{};
            if constexpr (C::FOLDN == 0) {
                /* never folded: every P·V onto the held tile; O (zero) takes it at the end */
                constexpr std::integral_constant<bool, true> yes{};
                if (n_c > 1) {
                    step(1, no, yes, set_bias);
#pragma unroll 1
                    for (int j = 2; j < n_c; ++j)
                        step(j, yes, yes, loop_bias);
                    last(yes);
                } else {
                    last(no);
                }
            } else if constexpr (C::FOLDN == 2) {
                constexpr std::integral_constant<bool, true> yes{};
                int j = 1;
#pragma unroll 1
                for (; j + 1 < n_c; j += 2) {
                    step(j, no, yes, loop_bias);     /* P·V(j-1) fresh, held */
                    step(j + 1, yes, no, loop_bias); /* P·V(j) onto it, folded */
                }
                if (j < n_c) {
                    step(j, no, yes, loop_bias);
                    last(yes);
                } else {
                    last(no);
                }
            } else {
#pragma unroll 1
                for (int j = 1; j < n_c; ++j)
                    step(j, no, no, loop_bias);
                last(no);
            }
        }
#else
#pragma unroll 1
        for (int j = 0; j < n_c; ++j) {
            const int it = it0 + j;
            int32_t acc[32];
            uint32_t pa[2][4];
            float alpha[2];
            turn_begin();
            wait_full(it);
            issue_qk(acc, it, set_bias);
            turn_end();
            sa_wg_wait<0>();
#pragma unroll
            for (int i = 0; i < 32; ++i)
                sa_wg_touch(acc[i]);
            sa_h_softmax<!SA_HW_ROWSUM_MMA, false, false, KG>(acc, pa, alpha, r, ks_of(it),
                                                              kg_of(it), j * SA_CTA_K, a, diag,
                                                              need_mask(j * SA_CTA_K), tq);
            turn_begin();
            sa_wg_fence();
            sa_hw_issue_pv<D, C>(ot, ls, pa, v_lo(it), 0);
            sa_wg_commit();
            turn_end();
            sa_wg_wait<0>();
            sa_wg_keep(pa);
            release(it);
            fold(alpha);
        }
#endif
#if SA_HW_CAUSAL_TRIM
        /* The block's tiles past this consumer's diagonal: released unread, each once its copy
         * has landed (the landing says the slot's previous use was released by every consumer,
         * so this arrival counts for this tile's phase, not that one's). */
        for (int j = n_c; j < n_kt; ++j) {
            wait_full(it0 + j);
            release(it0 + j);
        }
#endif
#if !SA_HW_QREG
        sa_mbar_arrive(qempty); /* every Q·Kᵀ of this tile has completed (waited above) */
#endif
#if SA_HW_PERSIST
        it0 += n_kt;
#endif

        /* ---- epilogue: normalise, undo V's scale, store with bounds, LSE, non-finite ---- */
        /* SA_HW_PERSIST: the lane's quad index read afresh, so that ptxas cannot hoist the
         * epilogue's 16 column offsets (and their 64-bit forms) out of the tile loop, where they
         * would hold ~20 registers through every key tile of the main loop. */
        int tq_e = tq;
        if (SA_HW_PERSIST && SA_HW_FRESH_EPI)
            asm volatile("{\n.reg .u32 t;\nmov.u32 t, %%tid.x;\nand.b32 %0, t, 3;\n}\n"
                         : "=r"(tq_e));
        if (SA_TEST_HOPPER_DIAG == 3 && a.lq > 0) {
            /* diagnostic: O never written */
        } else if (C::EPI_STAGE && sa_h_epi_stage_ok<D>(a)) {
            sa_h_epilogue_staged<D, BF16, !SA_HW_ROWSUM_MMA>(
                a, o, r, b, h, bh, bhk, tq_e, lane,
                sQ + C::EPI_OFF + (c * 4 + warp) * C::EPI_WARP_BYTES);
        } else {
            sa_h_epilogue<D, BF16, !SA_HW_ROWSUM_MMA>(a, o, r, b, h, bh, bhk, tq_e, tq, lane);
        }
    }
    if (C::PINGPONG && c == 0)
        sa_named_sync(1, 256); /* the last consumer's final arrival: every barrier balanced */
#else
    (void)a, (void)n_tiles;
    __trap();
#endif
}
#undef SA_HW_FIRST_TILE

#endif
