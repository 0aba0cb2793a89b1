#!/bin/bash
# Round 51's third device call (issue 13): where rank groups start, with round 51's rank kernel.
# From the repository root, carrying VARIANTS (bench/build_hopper_variants.sh DIR landed causal4k
# causal2k min1k):
#   bash bench/device_round51c.sh VARIANTS
# (VARIANTS also holding c2d64, built alike). Each variant in turn with SDPA
# (bench/device_repeat.sh --interleave) at the lengths and head dims where it differs from landed
# (landed at L=1K..16K, D=128 and 64), full and causal; two passes, the
# second in reverse order. Writes $OUT/<variant>-<pass>/rep1.{json,log}, packed into $OUT.tgz.
set -o pipefail
DIR=${1:?usage: bash bench/device_round51c.sh VARIANTS}
OUT=${OUT:-/tmp/round51c-out}
mkdir -p "$OUT"
T0=$SECONDS
lens_of() {
    case $1 in
    landed) echo 1024,2048,4096,8192,16384 ;;
    causal4k) echo 4096 ;;
    causal2k) echo 2048,4096 ;;
    min1k) echo 1024 ;;
    c2d64) echo 1024,4096,16384 ;;
    esac
}
dims_of() {
    case $1 in
    c2d64) echo 64 ;;
    *) echo 128,64 ;;
    esac
}
order="landed causal4k causal2k min1k c2d64"
pass=0
for names in "$order" "$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')"; do
    pass=$((pass + 1))
    for n in $names; do
        echo "== $n (pass $pass, $((SECONDS - T0))s)"
        OUT="$OUT/$n-$pass" BENCH_ARGS=--interleave bash bench/device_repeat.sh \
            "$DIR/$n/libsageattn.so" 1 "$(lens_of "$n")" "$(dims_of "$n")" | grep -E '^D=|rc='
    done
done
tar -czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")" && rm -rf "$OUT"
echo "[$((SECONDS - T0))s] logs: $OUT.tgz"
