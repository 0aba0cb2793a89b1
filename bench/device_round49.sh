#!/bin/bash
# Round 49's last device call (issue 13: rank groups), from the repository root, carrying
# REFCHECK (sageattn-refcheck of a CMake build of kernels/, -DSAGEATTN_REFCHECK=ON; the library
# from there or PRODUCT's), PRODUCT (`sagebuild build
# --arch sm_90,sm_90a --out` output: lib/ and bin/sageattn-selftest), VARIANTS (a
# bench/build_hopper_variants.sh folder, here landed / pertoken / product) and MORE (another one,
# timed at L=16K only):
#   bash bench/device_round49.sh REFCHECK PRODUCT VARIANTS MORE
# 1. sageattn-refcheck (every mode's kernels against the C reference);
# 2. the product's self-test over its full matrix (sageattn-selftest --full, as `sagebuild
#    selftest --full` runs it) and its per-kernel GPU times (bench.py --profile-shapes);
# 3. VARIANTS in turn with SDPA at L=1K..16K, D=128 and 64, one pass (bench/device_sweep.sh);
# 4. the VARIANTS named in SEQ (default: the first and the last) sequentially (bench.py's default
#    protocol), L=16K, two passes;
# 5. MORE (optional) in turn at L=16K.
# Writes $OUT/{refcheck.txt,selftest-full.txt,profile.json,profile.log}, $OUT/{il,seq,more}.tgz.
# LENS (default 1024,2048,4096,16384) sets step 3's lengths. Round 50 (causal rank groups) ran
# it without MORE:
#   SEQ="causalpt landed" bash bench/device_round49.sh .gpu/rc50c .gpu/st50 .gpu/h50
set -o pipefail
export PYTHONUNBUFFERED=1
REFCHECK=${1:?usage: bash bench/device_round49.sh REFCHECK PRODUCT VARIANTS [MORE]}
PRODUCT=${2:?}
DIR=${3:?}
MORE=${4:-}
OUT=${OUT:-/tmp/round49-out}
mkdir -p "$OUT"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
LD_LIBRARY_PATH=$REFCHECK:$PRODUCT/lib timeout 240 "$REFCHECK/sageattn-refcheck" >"$OUT/refcheck.txt" 2>&1
el "refcheck rc=$? ($(tail -n 1 "$OUT/refcheck.txt"))"
grep -E "wgmma|FAIL" "$OUT/refcheck.txt"
timeout 200 "$PRODUCT/bin/sageattn-selftest" --full >"$OUT/selftest-full.txt" 2>&1
el "selftest --full rc=$?"
grep -E "int8-fp8-wgmma|verdict|recommended" "$OUT/selftest-full.txt" | head -8
timeout 120 python3 bench/bench.py --lib "$PRODUCT/lib/libsageattn.so" --modes int8-fp8-wgmma \
    --skip-speed --skip-accuracy --no-sdpa --out "$OUT/profile.json" \
    --profile-shapes 128:1024:16,64:1024:16,128:4096:4,64:4096:4,128:16384:1,64:16384:1 \
    >"$OUT/profile.log" 2>&1
el "profile rc=$?"
grep '^profile' "$OUT/profile.log" | cut -c1-330
OUT=$OUT/il BENCH_ARGS=--interleave bash bench/device_sweep.sh "$DIR" 1 \
    "${LENS:-1024,2048,4096,16384}" 128,64
el "in turn done"
SEQ=${SEQ:-"$(head -n 1 "$DIR/variants.txt" | cut -d'|' -f1) $(tail -n 1 "$DIR/variants.txt" | cut -d'|' -f1)"}
mkdir -p /tmp/seqdir
: >/tmp/seqdir/variants.txt
for n in $SEQ; do
    grep "^$n|" "$DIR/variants.txt" >>/tmp/seqdir/variants.txt
    ln -sfn "$(cd "$DIR" && pwd)/$n" "/tmp/seqdir/$n"
done
OUT=$OUT/seq bash bench/device_sweep.sh /tmp/seqdir 2 16384 128,64
el "sequential done"
if [ -n "$MORE" ]; then
    OUT=$OUT/more BENCH_ARGS=--interleave bash bench/device_sweep.sh "$MORE" 1 16384 128,64
    el "more done"
fi
