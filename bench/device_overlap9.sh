#!/bin/bash
# Issue 9, overlap by construction: does issuing key tile j+1's Q·Kᵀ MMAs under tile j's softmax
# (SA_PIPE_QK, kernels/src/attn/sa_pipe.cuh) make the portable mma.sync kernel faster on the
# H200? One device call from the repository root, about 4-5 minutes, with the libraries that
# `bash bench/prepare_overlap9.sh` built and carried in .gpu/overlap9/ (OVERLAP9_LIBS overrides;
# the variants are described there):
#   1. times every variant (bench/overlap_probe.py, one library and mode per process) for
#      int8-fp16 and int8-fp8 at D=128 L=16K (the key shape), D=128 L=4K and D=64 L=16K (B1 H32,
#      fp16, non-causal): plain (32 rows per warp) first and last (drift), w16/w16b2 (16 rows
#      per warp, the plain loop), w16p4/w16p2 (16 rows, pipelined); pipe4d64 against plain2blk
#      at D=64 (32 rows, int8-fp16). Every variant's output checksum must equal plain's;
#   2. bench.py's accuracy matrix on the pipelined build (w16p4, int8-fp16 and int8-fp8: causal,
#      GQA, one key, odd head dims, bf16, adversarial inputs) and its quick cases on plain: the
#      metrics of the cases both ran must be equal (bit-identical outputs);
#   3. device_fullrate.sh --overlap's probes (alu256, alu512, pv256 against plain, int8-fp16 at
#      the key shape), whose model prediction is x1.112 / x1.225 / x1.112 without overlap.
# $OUT gets summary.txt, overlap9.txt (the tables), overlap9.jsonl, bench-pipe.json,
# bench-plain.json and raw.tgz.
#   bash bench/device_overlap9.sh
set -o pipefail
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/sa-overlap9}
LIBS=${OVERLAP9_LIBS:-.gpu/overlap9}
mkdir -p "$OUT/raw"
t0=$(date +%s)
summary=()
note() { summary+=("$*"); echo "== $*"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
    --format=csv | tee "$OUT/raw/gpu.txt"
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" | tee "$OUT/raw/commit.txt"
cp "$LIBS"/manifest.txt "$LIBS"/ptxas-*.txt "$OUT/raw/" 2>/dev/null
[ -f "$LIBS/plain/libsageattn.so" ] || { note "no $LIBS/plain/libsageattn.so: run bash bench/prepare_overlap9.sh and carry $LIBS"; printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"; exit 1; }

K128=128x16384,128x4096,64x16384
probe() { # label mode shapes
    [ -f "$LIBS/${1%-again}/libsageattn.so" ] || { note "missing library ${1%-again}"; return; }
    timeout 120 python3 bench/overlap_probe.py --lib "$LIBS/${1%-again}/libsageattn.so" \
        --mode "$2" --shapes "$3" --label "$1" >>"$OUT/overlap9.jsonl" 2>>"$OUT/raw/probe.err" ||
        note "probe $1 $2 failed: $(tail -n 1 "$OUT/raw/probe.err")"
}
for mode in int8-fp16 int8-fp8; do
    probe plain "$mode" "$K128,64x4096"
    for v in w16 w16b2 w16p4 w16p2; do probe "$v" "$mode" "$K128"; done
done
probe pipe4d64 int8-fp16 64x16384,64x4096
probe plain2blk int8-fp16 64x16384,64x4096
for v in alu256 alu512 pv256; do probe "$v" int8-fp16 128x16384; done
for mode in int8-fp16 int8-fp8; do probe plain-again "$mode" "$K128,64x4096"; done
note "timing done at $(($(date +%s) - t0)) s"

timeout 180 python3 bench/bench.py --lib "$LIBS/w16p4/libsageattn.so" --modes int8-fp16,int8-fp8 \
    --skip-speed --no-sdpa --out "$OUT/bench-pipe.json" >"$OUT/raw/bench-pipe.log" 2>&1
note "bench.py accuracy matrix (w16p4) rc=$?"
timeout 90 python3 bench/bench.py --lib "$LIBS/plain/libsageattn.so" --modes int8-fp16,int8-fp8 \
    --quick --skip-speed --no-sdpa --out "$OUT/bench-plain.json" >"$OUT/raw/bench-plain.log" 2>&1
note "bench.py quick accuracy (plain) rc=$?"
python3 - "$OUT/bench-pipe.json" "$OUT/bench-plain.json" >"$OUT/raw/accuracy.txt" <<'PY'
import json, sys
def rows(path):
    try:
        return {(r["case"], r["mode"]): r for r in json.load(open(path)).get("accuracy", [])}
    except (OSError, ValueError):
        return {}
pipe, plain = rows(sys.argv[1]), rows(sys.argv[2])
same = diff = 0
for key, r in sorted(pipe.items()):
    p = plain.get(key)
    line = "%-16s %-10s " % key
    if "error" in r:
        print(line + "ERROR " + r["error"]); continue
    line += "cos %.6f rel_l1 %.5f nan %s lse_err %.2e" % (r["cos"], r["rel_l1"], r["nan_or_inf"],
                                                        r["lse_max_err"])
    if p and "error" not in p:
        eq = all(p[k] == r[k] for k in ("cos", "rel_l1", "max_abs", "lse_max_err"))
        same, diff = same + eq, diff + (not eq)
        line += "  plain: %s" % ("identical" if eq else "DIFFERS (cos %.6f rel_l1 %.5f)" % (
            p["cos"], p["rel_l1"]))
    print(line)
worst = {}
for (case, mode), r in pipe.items():
    if "error" in r:
        continue
    w = worst.setdefault(mode, [1.0, 0.0, False])
    w[0], w[1], w[2] = min(w[0], r["cos"]), max(w[1], r["rel_l1"]), w[2] or bool(r["nan_or_inf"])
print("pipelined build: %d cases; metrics identical to plain in %d of %d shared cases; %s" % (
    len(pipe), same, same + diff, "; ".join("%s worst cos %.6f rel_l1 %.5f%s" % (
        m, w[0], w[1], " NON-FINITE" if w[2] else "") for m, w in sorted(worst.items()))))
PY
cat "$OUT/raw/accuracy.txt"
note "$(tail -n 1 "$OUT/raw/accuracy.txt")"

python3 - "$OUT/overlap9.jsonl" >"$OUT/overlap9.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# The throughput model's prediction for the extra-ALU probes (bench/NOTES.md v9): no overlap.
MODEL = {"alu256": 1.112, "alu512": 1.225, "pv256": 1.112}
keys = sorted({(r["mode"], r["d"], r["L"]) for r in rows}, key=lambda k: (k[0], -k[1], -k[2]))
print("time x = variant / mean of the two plain runs (< 1: faster); TOPS = 4*B*H*L*L*D / time")
for mode, d, L in keys:
    rs = [r for r in rows if (r["mode"], r["d"], r["L"]) == (mode, d, L)]
    base = [r for r in rs if r["label"] in ("plain", "plain-again")]
    if not base:
        continue
    ms0 = sum(r["ms"] for r in base) / len(base)
    print("%s D=%d L=%d: plain %.3f ms %.1f TOPS (runs %s)" % (
        mode, d, L, ms0, base[0]["tops"] * base[0]["ms"] / ms0,
        ", ".join("%.3f" % r["ms"] for r in base)))
    for r in rs:
        if r["label"] in ("plain", "plain-again"):
            continue
        extra = "  (model without overlap x%.3f)" % MODEL[r["label"]] if r["label"] in MODEL else ""
        print("  %-10s %8.3f ms %6.1f TOPS  time x%.3f  checksum %s%s%s" % (
            r["label"], r["ms"], r["tops"], r["ms"] / ms0,
            "same" if r["checksum"] == base[0]["checksum"] else "DIFFERS",
            "" if r["finite"] else "  NON-FINITE", extra))
PY
cat "$OUT/overlap9.txt"
note "table: $(grep -c . "$OUT/overlap9.txt") lines; checksums differing: $(grep -c DIFFERS "$OUT/overlap9.txt")"
note "device time $(($(date +%s) - t0)) s"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/raw.tgz" raw && rm -rf "$OUT/raw"
