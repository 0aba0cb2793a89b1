#!/bin/bash
# bench/wave_probe.py over libraries of a bench/build_hopper_variants.sh folder, in the order
# given and then back (so that order does not pick), on the GPU machine from the repository root:
#   bash bench/device_probe_ab.sh DIR "NAME..." SHAPES OUTDIR
# Writes OUTDIR/probe-<name>-<pass>.{json,txt}; prints each pass's per-shape lines (the attention
# kernel's own time, and the call in turn with the other shapes). Used by the round 52 scripts.
set -o pipefail
DIR=${1:?usage: bash bench/device_probe_ab.sh DIR "NAME..." SHAPES OUTDIR}
NAMES=${2:?}
SHAPES=${3:?}
OUTDIR=${4:?}
mkdir -p "$OUTDIR"
T0=$SECONDS
pass=0
# shellcheck disable=SC2046 # the names and their reverse, as words
for v in $NAMES $(echo "$NAMES" | tr ' ' '\n' | tac); do
    pass=$((pass + 1))
    timeout 120 python3 bench/wave_probe.py --lib "$DIR/$v/libsageattn.so" --shapes "$SHAPES" \
        --out "$OUTDIR/probe-$v-$pass.json" >"$OUTDIR/probe-$v-$pass.txt" 2>&1
    echo "[$((SECONDS - T0))s] $v (pass $pass) rc=$?"
    grep -E "^D=[0-9]+ L=[0-9]+ B=|call .* in turn" "$OUTDIR/probe-$v-$pass.txt"
done
