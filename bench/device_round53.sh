#!/bin/bash
# Round 53's device call (issue 13): the cyclic form (SA_HW_CYC: one unit of a head per block,
# its key tiles streamed round and round, each consumer's chunks in staggered windows) against
# the landed kernel. From the repository root, carrying REFCHECK (sageattn-refcheck and its
# library, CMake -DSAGEATTN_REFCHECK=ON) and VARIANTS (bench/build_hopper_variants.sh with
# landed cyc cyc8, at 783ee83: the form and its refcheck cases were removed from the source after
# the round, bench/results/h200-783ee83-round53.md):
#   bash bench/device_round53.sh REFCHECK VARIANTS
# 1. sageattn-refcheck with each library first on the loader's path (landed, cyc, cyc8; at
#    783ee83 with its two large cases each run took over 200 s: REFS= skips it);
# 2. bench.py's accuracy matrix without the LSE (the calls the cyclic form runs) for landed and
#    cyc, int8-fp8-wgmma;
# 3. compute-sanitizer memcheck, racecheck and synccheck over bench.py's sanitizer-sized cases
#    without the LSE, cyc's library;
# 4. bench/wave_probe.py in the order landed cyc cyc8 and back (the attention kernel's own time
#    and the call), D=128 and 64 at L=4K B=4 H=32 and L=16K B=1 H=32;
# 5. landed and cyc in turn with SDPA at L=4K and 16K (bench/device_sweep.sh, two passes).
# REFS (step 1's libraries), VARS (step 4's) and SWEEP (step 5's) change the lists; SKIP="2 3 5"
# skips steps.
# Writes $OUT/summary.txt and $OUT/round53.tgz (every raw file).
set -o pipefail
export PYTHONUNBUFFERED=1
REFCHECK=${1:?usage: bash bench/device_round53.sh REFCHECK VARIANTS}
DIR=${2:?}
OUT=${OUT:-/tmp/round53-out}
SHAPES=${SHAPES:-128:4096:4:32,64:4096:4:32,128:16384:1:32,64:16384:1:32}
mkdir -p "$OUT/w"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
skip() { case " ${SKIP:-} " in *" $1 "*) return 0 ;; esac; return 1; }
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    for v in ${REFS-landed cyc cyc8}; do
        # the variant's library under the name sageattn-refcheck asks the loader for
        mkdir -p "/tmp/r53-lib/$v"
        ln -sfn "$(cd "$DIR/$v" && pwd)/libsageattn.so" "/tmp/r53-lib/$v/libsageattn.so.1"
        LD_LIBRARY_PATH=/tmp/r53-lib/$v:$REFCHECK timeout 240 "$REFCHECK/sageattn-refcheck" \
            >"$OUT/w/refcheck-$v.txt" 2>&1
        el "refcheck $v rc=$? ($(tail -n 1 "$OUT/w/refcheck-$v.txt"))"
        grep -E "FAIL|cyclic.*wgmma|rank groups Lq128.*wgmma" "$OUT/w/refcheck-$v.txt" | head -8
    done
    if ! skip 2; then
        for v in landed cyc; do
            timeout 300 python3 bench/bench.py --lib "$DIR/$v/libsageattn.so" \
                --modes int8-fp8-wgmma --skip-speed --no-sdpa --no-lse \
                --out "$OUT/w/acc-$v.json" >"$OUT/w/acc-$v.txt" 2>&1
            el "accuracy $v rc=$?"
        done
        python3 - "$OUT/w/acc-landed.json" "$OUT/w/acc-cyc.json" <<'EOF'
import json, sys
rows = [json.load(open(p))["accuracy"] for p in sys.argv[1:3]]
for a, b in zip(*rows):
    print("  %-20s landed cos %.6f rel_l1 %.5f nan %s | cyc cos %.6f rel_l1 %.5f nan %s" % (
        a["case"], a.get("cos", -1), a.get("rel_l1", -1), a.get("nan_or_inf"),
        b.get("cos", -1), b.get("rel_l1", -1), b.get("nan_or_inf")))
EOF
    fi
    if ! skip 3; then
        for tool in memcheck racecheck synccheck; do
            timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 python3 bench/bench.py \
                --lib "$DIR/cyc/libsageattn.so" --modes int8-fp8-wgmma --skip-speed --sanitize \
                --no-sdpa --no-lse >"$OUT/w/san-$tool.log" 2>&1
            el "$tool cyc rc=$? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/w/san-$tool.log" | tail -n 1))"
        done
    fi
    bash bench/device_probe_ab.sh "$DIR" "${VARS:-landed cyc cyc8}" "$SHAPES" "$OUT/w"
    el "probe done"
    if ! skip 5; then
        NAMES="${SWEEP:-landed cyc}" OUT=$OUT/w/sweep BENCH_ARGS=--interleave bash bench/device_sweep.sh \
            "$DIR" 2 4096,16384 128,64
        el "sweep done"
    fi
} 2>&1 | tee "$OUT/summary.txt"
tar -czf "$OUT/round53.tgz" -C "$OUT" w && rm -rf "$OUT/w"
