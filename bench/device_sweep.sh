#!/bin/bash
# Every variant of a bench/build_hopper_variants.sh folder at a set of lengths and head dims,
# against SDPA, in one device call (a length sweep to place a per-shape threshold):
#   bash bench/device_sweep.sh DIR [N] [LENS] [DIMS]     e.g. bash bench/device_sweep.sh \
#       .gpu/hopper27 2 4096,8192,16384 64
# Runs bench/device_repeat.sh per variant into $OUT/<name>-<run>/ (variants in variants.txt
# order, then again in reverse when N > 1, so that order does not pick), then packs $OUT into
# $OUT.tgz (a device call returns a limited number of files). NAMES="a b" runs only those
# variants of the folder, in that order.
set -o pipefail
DIR=${1:?usage: bash bench/device_sweep.sh DIR [N] [LENS] [DIMS]}
N=${2:-1}
LENS=${3:-4096,8192,16384}
DIMS=${4:-64}
OUT=${OUT:-/tmp/sweep-out}
names=${NAMES:-$(cut -d'|' -f1 "$DIR/variants.txt")}
names=$(echo "$names" | tr ' ' '\n')
order=$names
[ "$N" -gt 1 ] && order="$names $(echo "$names" | tac)"
pass=0
for n in $order; do
    pass=$((pass + 1))
    echo "== $n (run $pass)"
    OUT="$OUT/$n-$pass" bash bench/device_repeat.sh "$DIR/$n/libsageattn.so" 1 "$LENS" "$DIMS" |
        grep -E '^D=|rc='
done
tar -czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")" && rm -rf "$OUT"
echo "logs: $OUT.tgz"
