#!/bin/bash
# One device call's check of a bench/build_hopper_variants.sh folder (issue 13), from the
# repository root, carrying DIR (only its libsageattn.so files and variants.txt are needed):
#   bash bench/device_variants.sh DIR [SAME] [LENS] [DIMS] [SANITIZE]
#     e.g. bash bench/device_variants.sh .gpu/h35 h0 1024,4096,16384 128,64 h1
# 1. SAME (comma-separated names): each must give the first variant's output bit for bit
#    (bench/prepass_same.py --quick: O, LSE, workspace and the non-finite flag, int8-fp8-wgmma);
# 2. every other variant (the first too; not the dx_ diagnostics): bench.py's accuracy matrix of
#    int8-fp8-wgmma (or of the modes in ACC_MODES, comma-separated), with and without the LSE (the
#    kernel quantizes Q itself only without it), into acc-NAME[-nolse].json;
# 3. SANITIZE (a name, default the second variant; - for none): compute-sanitizer memcheck over
#    bench.py's small accuracy cases, with and without the LSE;
# 4. bench/device_sweep.sh DIR 2 LENS DIMS: every variant timed against SDPA, twice, in both orders.
# Writes $OUT/{gpu.txt,same-*.log,acc-*.json,acc-*.log,memcheck-*.log} and $OUT/sweep.tgz.
set -o pipefail
export PYTHONUNBUFFERED=1
DIR=${1:?usage: bash bench/device_variants.sh DIR [SAME] [LENS] [DIMS] [SANITIZE]}
SAME=${2:-}
LENS=${3:-1024,4096,16384}
DIMS=${4:-128,64}
OUT=${OUT:-/tmp/variants-out}
mkdir -p "$OUT"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
names=$(cut -d'|' -f1 "$DIR/variants.txt")
first=$(echo "$names" | head -1)
SANITIZE=${5:-$(echo "$names" | sed -n 2p)}
lib() { echo "$DIR/$1/libsageattn.so"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
for n in $names; do
    case ",$SAME," in
    *",$n,"*)
        [ "$n" = "$first" ] && continue
        timeout 240 python3 bench/prepass_same.py --lib-a "$(lib "$first")" --lib-b "$(lib "$n")" \
            --compare-smoothed --skip-timing --quick --modes int8-fp8-wgmma >"$OUT/same-$n.log" 2>&1
        el "$n bit-identical to $first: rc=$? ($(tail -n 1 "$OUT/same-$n.log"))"
        ;;
    *)
        case "$n" in dx_*) continue ;; esac # diagnostics: wrong by design, timed only
        for lse in "" --no-lse; do
            tag=$n${lse:+-nolse}
            # shellcheck disable=SC2086
            timeout 240 python3 bench/bench.py --lib "$(lib "$n")" --modes "${ACC_MODES:-int8-fp8-wgmma}" \
                --skip-speed --no-sdpa $lse --out "$OUT/acc-$tag.json" >"$OUT/acc-$tag.log" 2>&1
            el "$tag accuracy rc=$?"
        done
        ;;
    esac
done
for lse in "" --no-lse; do
    [ "$SANITIZE" = - ] && break
    # shellcheck disable=SC2086
    timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 python3 bench/bench.py \
        --lib "$(lib "$SANITIZE")" --modes int8-fp8-wgmma --skip-speed --sanitize --no-sdpa $lse \
        >"$OUT/memcheck-$SANITIZE${lse:+-nolse}.log" 2>&1
    el "memcheck $SANITIZE $lse rc=$? ($(grep -E 'ERROR SUMMARY' "$OUT/memcheck-$SANITIZE${lse:+-nolse}.log" | tail -n 1))"
done
OUT=$OUT/sweep bash bench/device_sweep.sh "$DIR" 2 "$LENS" "$DIMS"
el "sweep done"
