#!/bin/bash
# int8-fp8-wgmma against SDPA (flash, cuDNN) at the same shapes, N times over in one device call,
# to tell a difference from the run-to-run spread (SDPA at L=1K moved 5-12 % between two calls
# eight minutes apart in round 19). From the repository root, carrying the library's folder:
#   bash bench/device_repeat.sh LIB [N] [LENS] [DIMS]      e.g. bash bench/device_repeat.sh \
#       .gpu/hopper19/landed/libsageattn.so 3 1024 128,64
# Each repetition is one bench.py process (full and causal at every LENS x DIMS, B = 16384 / L,
# H = 32); writes $OUT/rep<i>.json and .log and prints each repetition's table, then per shape and
# implementation the median and range over the repetitions. BENCH_ARGS adds bench.py flags
# (--interleave: the implementations timed one call each in turn).
set -o pipefail
export PYTHONUNBUFFERED=1
LIB=${1:?usage: bash bench/device_repeat.sh LIB [N] [LENS] [DIMS]}
N=${2:-3}
LENS=${3:-1024}
DIMS=${4:-128,64}
OUT=${OUT:-/tmp/repeat-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
for i in $(seq 1 "$N"); do
    # shellcheck disable=SC2086 # BENCH_ARGS: more bench.py flags, e.g. --interleave
    timeout 120 python3 bench/bench.py --lib "$LIB" --modes int8-fp8-wgmma --skip-accuracy \
        --speed-lens "$LENS" --speed-dims "$DIMS" ${BENCH_ARGS:-} --out "$OUT/rep$i.json" \
        >"$OUT/rep$i.log" 2>&1
    echo "repetition $i rc=$?"
    grep -E '^D=' "$OUT/rep$i.log" | tail -n +1
done
python3 - "$OUT" "$N" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
runs = []
for i in range(1, n + 1):
    try:
        runs.append(json.load(open("%s/rep%d.json" % (out, i)))["speed"])
    except (OSError, KeyError, ValueError):
        pass
if not runs:
    sys.exit("no repetition wrote its JSON")
impls = ["int8-fp8-wgmma", "sdpa_flash", "sdpa_cudnn"]
print("| shape | " + " | ".join("%s median (min-max)" % i for i in impls) + " | wgmma/flash (per run) |")
print("|---" * (len(impls) + 2) + "|")
for k, e in enumerate(runs[0]):
    cells, ratios = [], []
    for impl in impls:
        v = [r[k][impl]["tops"] for r in runs if "tops" in r[k].get(impl, {})]
        cells.append("%.1f (%.1f-%.1f)" % (statistics.median(v), min(v), max(v)) if v else "err")
    for r in runs:
        if "tops" in r[k].get("int8-fp8-wgmma", {}) and "tops" in r[k].get("sdpa_flash", {}):
            ratios.append("%.2f" % (r[k]["int8-fp8-wgmma"]["tops"] / r[k]["sdpa_flash"]["tops"]))
    print("| D=%d L=%d B=%d %s | %s | %s |" % (e["d"], e["l"], e["b"],
          "causal" if e["causal"] else "full", " | ".join(cells), " ".join(ratios)))
PY
