#!/bin/bash
# Builds one libsageattn.so per int8-fp8-wgmma variant (issue 13), for one GPU call to choose
# among them (bench/device_hopper.sh):
#   bash bench/build_hopper_variants.sh OUTROOT [NAME...]      e.g. .gpu/hopper2
# Every library holds all modes for sm_90a; only attn_hopper.cu's compile flags differ (and
# quant.cu's and launch.cu's for the pre-pass's switches). The shared objects are built once (bench/build.sh
# OUTROOT/<first> sm_90a, the landed default kernel), then attn_hopper.cu is recompiled per
# variant (quant.cu and launch.cu too where the flags need them) and linked with them. Writes OUTROOT/<name>/
# {libsageattn.so,ptxas.txt}, OUTROOT/variants.txt (name, flags; the order the GPU script runs
# them in) and stops with an error if any variant spills registers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
shift
# name|flags: the candidates (kernels/src/attn/sa_hopper_ws.cuh explains each switch). The first,
# with no flags, is the landed kernel (the shared build itself); the GPU script judges the others'
# accuracy against it. Round 2's list (ws, ws_q, ws_qp, base, ws_nopp, ws_seq, ws_fadd,
# ws_q_d64nc2) and its flags are in bench/results/h200-8e04884-hopper-variants.txt.
# Names starting with dx_ are diagnostics (SA_TEST_HOPPER_DIAG: results wrong by design): the
# GPU script times them and skips their accuracy. Round 3's list (qf, c2, c2qf, f2, c2qff2, s4,
# c2s2, qp) is in bench/results/h200-2e09e54-hopper3-variants.txt.
# Round 5's (p8, p16, p24, dx_nomufu, dx_nosoftmax): bench/results/h200-816edba-hopper5-variants.md;
# round 6's (kg = SA_H_KGROUP=1): h200-1ae291d-hopper6-variants.md; round 7's (nokg, c1, nf2,
# d64ws): h200-e92804e-hopper7-variants.md; round 8's (tree, fie, treefie; the tree row max and
# round 5's polynomial exponentials are gone from the source since): h200-458e33a-hopper8-*.
# Round 9's (bz, kb, bzkb, fall, n3fall) and 9b's (fallfadd, n3fallfadd): h200-3052730-hopper9*;
# round 10's (n3ff, n3sep*, d64*, n3sepnopp): h200-6b81a5d-hopper10-variants.md; round 11's:
# the new default (landed) against round 9's default (prev), D=64 with P·V in O (d64sep):
# h200-f58fa81-hopper11-variants.md; round 12's: O's rescale only when a row of the warp moved
# (lazy; d64lazy: also D=64 with P·V in O): h200-c651a20-hopper12-variants.md. Round 13's
# (noidle, bz, d64n4, d64n4bz, qp): h200-da7dfad-hopper13-variants.md; round 14's (idle, bz,
# bzidle, d64n4, d64n4bz): h200-0739beb-hopper14-variants.md; round 15's (nobz128, ws64all):
# h200-c03e06d-hopper15-variants.md; round 16: the default after V smoothing and the rewritten
# pre-pass, alone (h200-74b908d-hopper16-final.md). Round 17: the block's start and end at
# L=1K (the kernel alone runs at 48 % of its L=16K rate there): a persistent grid (persist), two
# blocks of one consumer per SM at D=128 (c2), two consumers per block at D=128 (nc2: 128-row
# blocks divide L=1K, 192-row ones leave a third of the last block idle).
# Round 18: the epilogue's loads batched before its stores and Q's loads in one round (landed),
# with a persistent grid (persist), D=64's warp-specialized kernel at every length (ws64all).
# Round 19: the one-warpgroup kernel (D=64 up to 2K keys) quantizes Q itself (landed) against
# the pre-pass's Q (noqf), and with four K/V stages instead of three (st4).
# Round 20: the one-warpgroup kernel at every shape (base), for D=128 L=1K causal (0.82x SDPA
# flash with the warp-specialized kernel, bench/device_repeat.sh): h200-25c3859-repeat.md.
# Round 21: causal consumers stop at their own diagonal (trim), V's scales and means copied into
# shared memory by the producer for the epilogue (epismem).
# Round 21's (trim, epismem, trimepi): h200-484a63e-hopper21-variants.md (trim the default
# since; epismem removed from the source, in git at 08c3c8b).
# Round 22: K's and V's pre-pass fused for up to 2048 keys (fused: SA_PRE_FUSED=1, quant.cu),
# bit for bit the two-pass kernels' (bench/prepass_same.py --compare-smoothed):
# h200-eb8ad0c-prepass22.md. Round 23: both with V's conversion dividing by a reciprocal and one
# correction (sa_div_rn), against round 22's landed by bench/prepass_same.py.
# Round 24: V's conversion from rows staged whole in shared memory (staged), with and without
# round 23's division (staged_exactdiv, the default since; both switches gone from the source):
# h200-c69d165-vfp8-24.md. Round 25: that conversion with 2 or 8 tiles per block (vt2, vt8;
# SA_VT_TILES, default 4): within noise end to end, h200-1e10707-vfp8-25.md.
# Round 26: 128-key steps (pair: two stages per softmax; two consumers at D=128, three at D=64),
# and the same without the key loop's bias loads (pairnobz): h200-f822aa2-hopper26-variants.md.
# Round 27: D=64 in that form from SA_HW_D64_PAIR_MIN_KV keys (landed: 8192), from 2049 (wherever
# the warp-specialized kernel runs: d64pair2k) and never (d64nopair: round 26's landed):
# h200-d63ffd1-hopper27-variants.md (the landed rule since: without a causal mask only).
# Round 28: the call's kernels after the first launched as programmatic dependents (pdl:
# SA_PDL=1, the pre-pass and launch code too; landed then had SA_PDL=0): h200-74d0a2a-pdl28.md,
# the default since.
# Round 29: the per-block code at short lengths (ncu at D=128 L=1K, round 18: Q's quantization
# 11 %, the peeled first steps 9 %, the epilogue 18 % of the consumers' warp samples): a head's
# partial block at its first rows (calign: SA_HW_Q_ALIGN_END=1, causal: 1 key tile instead of
# all), the epilogue without column checks where head_dim is D and its non-finite test on the
# floats (epif: SA_H_EPI_FAST=1), Q's quantization by the pre-pass's byte rounding and a
# four-chain absmax (qff: SA_H_QF_FAST=1), and all three (all3). Each keeps O, the LSE and the
# flag bit for bit (bench/prepass_same.py): h200-cf95d94-hopper29-variants.md (calign and qff
# the default since; the SA_H_EPI_FAST and SA_H_QF_FAST switches gone from the source).
# Round 30: the pre-pass at D=128 without Q as one kernel ordered to re-read K and V from L2
# (l2, l2g6, l2g24: SA_PRE_L2=1 with groups of 12, 6, 24 MB; quant.cu at 33718ed): bit-identical,
# 2-3 % slower at L=1K, h200-33718ed-prepass30.md (removed from the source).
# Round 31: V -> E4M3 by the scale's reciprocal (the default since, SA_VT_RECIP=1; vdiv: the
# division before it), timed against each other and with their accuracy matrices:
# h200-cc4ba2e-vrecip31.md. Round 32: the finalize step inside K's quantizer and V's
# conversion up to 8 chunks (SA_FIN_INLINE_MAX, quant.cu at c4cc14c) against its kernel:
# bit-identical, 1-3 % slower at L=1K, h200-c4cc14c-fin32.md (reverted). Round 33: the
# pre-pass's tunables again now that V's conversion is memory-bound (round 31): rows of K and V
# per statistics thread's load batch (sb2, sb8; default 4), the row quantizer's block rows and
# load group (rb256, rb256g8; default 128 and 4), Vᵀ tiles per conversion block (vt2, vt8;
# default 4). Each keeps every bit: all within 2.3 us of the defaults (sb8 and rb256g8 spill),
# h200-a844677-prepasstune33.md (bench/device_prepass_tune.sh). Round 34: causal tiles
# longest-first within groups of heads whose K and V take 16 MB (cg16) or 64 MB (cg64) of L2
# (SA_HW_CAUSAL_GROUP_BYTES; thread 0 decodes the block's tile): bench/NOTES.md's model. Round
# 34b: the order as the grid's shape (x: head in group, y: q tile, z: group) from 4096 keys (g16,
# g64), and from any length (g16x, also what the sanitizers' small shapes exercise):
# h200-19102d2-hopper34-variants.md (g16 the default since; SA_HW_CAUSAL_GROUP_BYTES=0 is the
# head-by-head order).
# Round 35: a tile whose scores stay within SA_H_HEADROOM (base 2) of their rows' reference max
# takes p from that reference without exchanging the row max (SA_H_SPEC, sa_internal.h): headroom
# 0 (h0: every value the exchanging form's), 1, 3 against the kernel before it (round 35b keeps
# nothing between tiles; 35a kept the check's values and ptxas serialized the K scales' loads):
# h200-a3b61f0-hopper35-variants.md. Round 35c: the default (headroom 1, one-tile steps only,
# from key 1024 of a row) against the kernel before it (prev), from key 0 (k0), headroom 2 (h2),
# and a step that took that form skipping the rescale's vote and multiplies (skip: SA_HW_SPEC_SKIP,
# no gain, removed from the source; in git at 55cbf0e): h200-55cbf0e-hopper35c-variants.md.
# Round 37: Q·Kᵀ(j+1) issued before softmax(j) into a second S accumulator, with two D=128
# consumers of 240 registers (a2: SA_HW_QK_AHEAD128=1), and two consumers without it (nc2):
# h200-f20847d-hopper37-variants.md. Round 37b: the K scales loaded before the wait for Q·Kᵀ
# (ke: SA_HW_KS_EARLY128=1; ptxas keeps one value of the D=128 SPEC_K loop in local memory).
# Neither gained: both switches removed from the source (in git at f20847d).
# Round 38: the epilogue through shared memory, O's rows stored whole by the copy engine (es:
# SA_HW_EPI_STAGE=1): h200-a4427fb-hopper38-variants.md (the default at D=128 since). Round
# 38b: the one-warpgroup kernel's epilogue likewise (hes: SA_H_EPI_STAGE=1; the default at D=64
# since). noes: both epilogues as before round 38.
# Round 39: K's smoothing mean from every 4th / 8th key (km4, km8: SA_KMEAN_STRIDE, the
# statistics pass then reads a quarter / an eighth of K; sa_internal.h): h200-f99a1cd-kmean39.md
# (km4 the default since).
# Round 39b: the statistics thread's V rows first, eight loads in flight, then its K rows (split:
# SA_STAT_SPLIT=1), and the same with the smoothed form at four blocks per SM (split4b:
# SA_STAT_SMOOTH_MIN_BLOCKS=4): bit-identical, the statistics kernel no faster (66.2 / 61.3
# against 62.0 us at D=128 L=1K), h200-3c63ecc-round39b.md; removed from the source (in git at
# 44629cb).
# Round 40: the persistent grid again (rounds 2-3, 17-18: its key loop lost to ptxas's register
# choices, 32 bytes spilled in round 18); now its D=128 key loops are 656 / 575 instructions
# against 659 / 574 and nothing spills inside them: ps (the consumers quantize each tile's Q),
# ps0 (the pre-pass quantizes Q and the producer copies the next tile's Q while the consumers
# finish the last one: SA_HW_QFUSE128=0): both slower, causal most, h200-75ed1ec-persist40.md.
# Round 41: D=64 without a causal mask from 8K keys runs 128-key steps (three consumers; round
# 27's threshold, set before round 35's headroom form existed); nopair: four consumers of
# 64-key steps with the headroom form there too (SA_HW_D64_PAIR_MIN_KV past any length): -2 to
# -3 % at L=16K, equal at 8K (h200-37bfd66-round41.md). Round 41b: D=64's warp-specialized
# kernels quantize Q themselves (qf64: SA_HW_QFUSE64=1; the pre-pass then leaves Q out): +1 % at
# D=64 L=4K, the default since; noqf64 is the form before it. Round 42: the statistics pass's
# blocks reduce 512 rows instead of 256 (sr512: SA_STAT_ROWS=512; half the block-end reductions
# and partials per byte read): h200-a203af2-statrows42.md, the default since; sr256 is the form
# before it.
# Round 43: P's E4M3 conversion inside each exponential form's basic block (pe:
# SA_HW_PACK_IN_EXP128/64=1; D=64's SA_H_SPEC instance keeps the joined form, it spills there):
# ptxas puts the F2FP between the MUFUs (8 cycles apart per warp) and merges each word's halves
# in the F2FP (no PRMT); the same conversions, so the same bits. h200-1105aab-round43.md: the
# default at D=128 since (+1.3-1.6 % from 4K keys), not at D=64 (-0.8 % at 16K); nope128 is the
# form before it.
# Round 44: the fast and exchanging forms as one if/else (fe: SA_H_FAST_ELSE=1), and with it
# P·V(j-1)'s wait at the start of the exponentials, P straight into P·V(j)'s A registers
# (fepvb: SA_HW_PV_WAIT_IN_EXP128=1): h200-80539fb-round44.md, fe -2 to -3 % at D=128, fepvb
# within 1 % at L >= 4K and below at L=1K; both removed from the source (in git at 80539fb).
# Round 45: the producer's second warp prefetching into L2 the Q rows of the block one wave on
# (qp: SA_HW_Q_PREFETCH=1), D=64's ring of 16 stages (s16: SA_HW_STAGES64=16):
# h200-5e3500f-round45.md, qp within noise, s16 -3.2 % at D=64 L=16K; both removed from the
# source (in git at 5e3500f).
# Round 46: D=64's 128-key steps with 4 or 8 of every 32 exponentials by a degree-3 polynomial
# on the FMA pipe (p4, p8: SA_HW_EXPPOLY_PAIR): h200-7330af4-round46.md, -4 % / -9 % at D=64
# L=16K; removed from the source (in git at 7330af4).
# Round 47: D=128's P in two register buffers used in turn, P(j) straight into the one P·V(j-2)
# read (p2b: SA_HW_P2BUF128=1): h200-90e7b82-round47.md, -4 to -7 % from 4K keys, last-bit
# differences in causal cases; removed from the source (in git at 90e7b82).
# Round 48: the ceilings of the key loop as it stands: every exponential a stand-in FMUL
# (dx_nomufu), no softmax at all (dx_nosoftmax), and K scales per key group (kg, with its base
# nospec: SA_H_KGROUP needs SA_H_SPEC=0), the one measured lever the self-test rejects:
# h200-d1d9d37-round48.md (SA_H_KGROUP replaced by round 49's rank groups since).
# Round 49: K scales per rank group in calls without a causal mask (landed: SA_H_RANK_GROUPS,
# sa_internal.h; the pre-pass ranks each 1024-key window and permutes K and V) against per-token
# scales everywhere (pertoken: the default before it). Round 49b: the switches measured before
# with round 6's lane-quad scales, again on the rank-group kernels: P·V(j-1)'s fold beside the
# exponentials (fie64, fie128: SA_HW_FOLD_IN_EXP64/128=1; round 8: +2.9 % at D=64 then), and P
# packed inside each exponential form at D=64 (pe64: SA_HW_PACK_IN_EXP64=1). Measured: fie64 -1.0 %
# at D=64 L=16K (h200-2d2ea69-round49.md); fie128 and pe64 built, not timed (the call's carry
# limit).
# Round 50: rank groups in causal calls too (in 256-key windows; the row block runs its
# diagonal's window whole and masks by each key's position) against per-token scales there and
# 128-key windows: h200-4a240df-round50.md (the switch then, SA_H_RANK_WINDOW_CAUSAL, gone since).
# Round 50b: one window of 256 keys for every call, whose rows the rank kernel holds in shared
# memory (landed: causal calls ranked from SA_H_RANK_MIN_KV_CAUSAL = 8192 keys) against causal
# calls ranked from 4096 keys (causal4k), and round 50's landed library (1024-key windows without
# a mask, the rank kernel reading K twice) timed beside them; and calls without a mask ranked
# from 1024 keys (min1k; round 49 measured -2 % at D=128 L=1K with the old rank kernel).
# Round 51: the rank kernel in fewer instructions (landed) against 080d952's (prev: the product
# library, copied in), and the thresholds again with it: causal calls ranked from 4096 and 2048
# keys (causal4k, causal2k), calls without a mask from 1024 (min1k); D=64 with two blocks of two
# consumers per SM (c2d64: SA_HW_CTAS64=2; 104 registers a consumer, its key loop reloads 10
# spilled values a step) to hide a block's start and end behind the other's key loop.
# Round 52 (h200-6aa62f9-round52.md): what a block's end and start cost, by diagnostics: no
# epilogue (dx_noepi), Q not read (dx_noq), the staged epilogue without its copies to O
# (dx_nostore); the tiles in an order that runs different heads at once (dx_hfast: what one head
# per SM would ask of L2 and DRAM). Its three candidates were measured and removed from the
# source (their code is in git at 1b1e282): the Q rows of the block one wave later asked into L2
# (qpf, SA_HW_QPREFETCH), V's epilogue constants into L1 (epf, SA_HW_EPI_PREFETCH), the heads'
# partial blocks after all full ones (plast, SA_HW_PARTIAL_LAST).
# Round 53 (h200-783ee83-round53.md): the cyclic form (cyc: SA_HW_CYC=1, one block per unit of a
# head, its key tiles streamed round and round, each consumer's 64-row chunks in windows started
# a third of a window apart; cyc8: 8 stages apart): no faster at D=128 L=4K, slower elsewhere;
# removed from the source (in git at 783ee83, with its refcheck and bench.py cases: build the
# two variants there).
all_variants=(
    "landed|"
    "dx_noepi|-DSA_TEST_HOPPER_DIAG=3"
    "dx_noq|-DSA_TEST_HOPPER_DIAG=4"
    "dx_nostore|-DSA_TEST_HOPPER_DIAG=5"
    "dx_hfast|-DSA_TEST_HOPPER_HEAD_FASTEST=1"
    "causal4k|-DSA_H_RANK_MIN_KV_CAUSAL=4096"
    "causal2k|-DSA_H_RANK_MIN_KV_CAUSAL=2048"
    "c2d64|-DSA_HW_CTAS64=2"
    "min1k|-DSA_H_RANK_MIN_KV=1024"
    "pertoken|-DSA_H_RANK_GROUPS=0"
    "fie64|-DSA_HW_FOLD_IN_EXP64=1"
    "fie128|-DSA_HW_FOLD_IN_EXP128=1"
    "pe64|-DSA_HW_PACK_IN_EXP64=1"
)
# Variants allowed to spill: where ptxas keeps a few values of the peeled first key step or of
# the persistent tile loop in local memory (stored and loaded once per tile, not per key step).
# dx_nosoftmax (round 48): D=64's 64-key kernels spill there; its D=128 figures are the ones read.
# c2d64 (round 51): D=64's consumers at 104 registers spill 176-216 bytes.
# cyc, cyc8 (round 53, from git at 783ee83): D=64's rank-group instance keeps 5 values of its key
# step in local memory.
spill_ok=" dx_nosoftmax c2d64 cyc cyc8 "
want=" ${*:-} "
mkdir -p "$out"
shared=$out/${all_variants[0]%%|*}
bash "$root/bench/build.sh" "$shared" sm_90a
: >"$out/variants.txt"
# Per variant: the Hopper kernels always; the pre-pass (quant.cu) only where the flags set its
# own switches, the pre-pass and the workspace plan (launch.cu) where they set SA_HW_D64_MIN_KV
# (it decides where V is smoothed) or SA_H_RANK_GROUPS (K's quantizer and the permutation's
# part); else the shared build's objects are linked.
objs=()
for o in "$shared"/obj/*.o; do
    case "$(basename "$o" .cu.o)" in attn_hopper | quant | launch) continue ;; esac
    objs+=("$o")
done
for v in "${all_variants[@]}"; do
    name=${v%%|*}
    flags=${v#*|}
    [ "$want" = "  " ] || case "$want" in *" $name "*) ;; *) continue ;; esac
    echo "$name|$flags" >>"$out/variants.txt"
    [ -z "$flags" ] && continue # the shared build
    mkdir -p "$out/$name"
    : >"$out/$name/ptxas.txt"
    per_variant=attn_hopper
    quant_obj=$shared/obj/quant.cu.o
    launch_obj=$shared/obj/launch.cu.o
    case "$flags" in
    *SA_STAT_ROWS*) # the pre-pass and the workspace plan (launch.cu sizes the partials)
        per_variant="attn_hopper quant launch"
        quant_obj=$out/$name/quant.o
        launch_obj=$out/$name/launch.o
        ;;
    *SA_VT_* | *SA_STAT_* | *SA_RQ_* | *SA_KMEAN_*) # the pre-pass's own switches
        per_variant="attn_hopper quant"
        quant_obj=$out/$name/quant.o
        ;;
    *SA_HW_D64_MIN_KV* | *SA_H_WS* | *SA_PDL* | *SA_H_RANK_*) # V's smoothing, rank groups
        # (pre-pass, plan); PDL: every launch
        per_variant="attn_hopper quant launch"
        quant_obj=$out/$name/quant.o
        launch_obj=$out/$name/launch.o
        ;;
    esac
    for src in $per_variant; do
        # shellcheck disable=SC2086
        nvcc -std=c++17 -O3 $flags -Xcompiler -fPIC,-Wall,-Wextra,-Werror -Werror=all-warnings \
            -gencode arch=compute_90a,code=sm_90a -DSA_WITH_HOPPER=1 -DSA_BUILT_ARCHS='"sm_90a"' \
            -I"$root/kernels/include" -Xptxas -v -c "$root/kernels/src/attn/$src.cu" \
            -o "$out/$name/$src.o" >>"$out/$name/ptxas.txt" 2>&1 ||
            { cat "$out/$name/ptxas.txt"; exit 1; }
    done
    nvcc -shared -Xlinker --no-undefined -o "$out/$name/libsageattn.so" "${objs[@]}" \
        "$out/$name/attn_hopper.o" "$quant_obj" "$launch_obj"
    echo "built $out/$name/libsageattn.so ($flags; compiled: $per_variant; pre-pass: $quant_obj)"
done
for f in "$out"/*/ptxas.txt; do
    spills=$(grep -A2 "sa_hopper" "$f" | grep -E "spill" | grep -vc " 0 bytes spill stores, 0 bytes spill loads" || true)
    [ "$spills" = 0 ] && continue
    echo "$(dirname "$f"): $spills kernels spill: $(grep -o '[0-9]* bytes spill stores' "$f" | sort -u | tr '\n' ' ')"
    case "$spill_ok" in *" $(basename "$(dirname "$f")") "*) ;; *) exit 1 ;; esac
done
# (A diagnostic's wgmma may serialize where its stand-in arithmetic feeds one: it is timed at
# the shapes it was built to explain, and its ptxas output says so.)
serialized=0
for f in "$out"/*/ptxas.txt; do
    case "$f" in */dx_*) continue ;; esac
    # C7519/C7517: ptxas fenced or waited for a wgmma itself (a register the source did not)
    grep -h -E "Potential Performance Loss|wgmma.*serializ|is injected" "$f" && serialized=1
done
if [ "$serialized" = 1 ]; then
    echo "ptxas serialized wgmma in a variant (see $out/*/ptxas.txt)"
    exit 1
fi
echo "variants in $out/variants.txt: $(cut -d'|' -f1 "$out/variants.txt" | tr '\n' ' ')"
