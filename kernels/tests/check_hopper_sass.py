"""Checks the sm_90a kernels of int8-fp8-wgmma (attn_hopper.cu) in an nvdisasm listing (issue 13):
each kernel's main loop (the backward branch whose body holds the most warpgroup MMAs) must run
Q·Kᵀ as INT8 wgmma (IGMMA ... S8.S8, D/32 per 64-key tile) and P·V as E4M3 wgmma with an FP32
accumulator (QGMMA ... F32.E4M3.E4M3, 2 per tile; a loop may hold two tiles; P's row sums may
have their own QGMMA.64x8x32, 2 per tile, SA_HW_ROWSUM_SEP), and touch no local memory; the
warp-specialized kernel must also set its register budgets (USETMAXREG); the kernels whose
epilogue goes through shared memory by default (warp-specialized D=128, one-warpgroup D=64) must
hold its stmatrix (STSM) and bulk shared-to-global copies (UBLKCP.G.S).

python3 kernels/tests/check_hopper_sass.py LISTING [LISTING...]   exit 0 when every check passes
"""
import re
import sys

_KERNEL = re.compile(r"^(_Z\d+sa_hopper(_ws)?_kernelILi(\d+)ELb([01])E\S*):\s*$")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)([^;]*);")
_BRA = re.compile(r"`\((\.L_x_\d+)\)")


def parse(text):
    kernels, cur = [], None
    for line in text.splitlines():
        m = _KERNEL.match(line)
        if m:
            cur = {"name": m.group(1), "ws": bool(m.group(2)), "d": int(m.group(3)),
                   "ops": [], "texts": [], "labels": {}}
            kernels.append(cur)
            continue
        if line.startswith("_Z") or line.startswith("\t.section"):
            cur = None if line.startswith("_Z") else cur
            continue
        if cur is None:
            continue
        m = _LABEL.match(line)
        if m:
            cur["labels"][m.group(1)] = len(cur["ops"])
            continue
        m = _INSN.search(line)
        if m:
            cur["ops"].append(m.group(2))
            cur["texts"].append(m.group(3))
    return kernels


def main_loop(k):
    """(first, last) of the shortest backward-branch body that holds both wgmma kinds: the key
    loop (the retry stubs of mbarrier waits sit at the end of the function and branch back
    across everything, so "the most MMAs" would pick them)."""
    best = None
    for i, op in enumerate(k["ops"]):
        if not op.startswith("BRA"):
            continue
        m = _BRA.search(k["texts"][i])
        if not m or m.group(1) not in k["labels"]:
            continue
        start = k["labels"][m.group(1)]
        if start > i:
            continue
        body = k["ops"][start:i + 1]
        if not any(o.startswith("IGMMA") for o in body) or not any(
                o.startswith("QGMMA") for o in body):
            continue
        if best is None or i - start < best[1] - best[0]:
            best = (start, i)
    return best


def check(k):
    """Reasons this kernel fails (empty: passes)."""
    why = []
    lp = main_loop(k)
    if not lp:
        return ["no loop with both an INT8 and an FP8 warpgroup MMA"]
    ops = k["ops"][lp[0]:lp[1] + 1]
    qk = [o for o in ops if o.startswith("IGMMA.64x64x32.S8.S8")]
    rowsum = [o for o in ops if o.startswith("QGMMA.64x8x32.") and o.endswith(".F32.E4M3.E4M3")]
    pv = [o for o in ops if o.startswith("QGMMA.") and o.endswith(".F32.E4M3.E4M3")
          and o not in rowsum]
    other = [o for o in ops if "MMA" in o and o not in qk and o not in pv and o not in rowsum]
    # key tiles per loop iteration (SA_HW_FOLD2 unrolls the loop by two): D/32 + 2 wgmma each
    tiles = max(1, len(pv) // 2)
    if len(qk) != tiles * (k["d"] // 32):
        why.append("Q·Kᵀ: %d IGMMA.64x64x32.S8.S8 in the loop, want %d" % (
            len(qk), tiles * (k["d"] // 32)))
    if len(pv) != 2 * tiles:
        why.append("P·V: %d QGMMA ...F32.E4M3.E4M3 in the loop, want %d" % (len(pv), 2 * tiles))
    if rowsum and len(rowsum) != 2 * tiles:
        why.append("row sums: %d QGMMA.64x8x32 in the loop, want 0 or %d" % (
            len(rowsum), 2 * tiles))
    if other:
        why.append("other MMA in the loop: %s" % ", ".join(sorted(set(other))))
    local = [o for o in ops if o.startswith(("LDL", "STL"))]
    if local:
        why.append("%d local-memory accesses (spills) in the loop" % len(local))
    if k["ws"] and not any(o.startswith("USETMAXREG") for o in k["ops"]):
        why.append("no USETMAXREG (setmaxnreg ignored: entry register count unknown?)")
    # The epilogue through shared memory (SA_HW_EPI_STAGE at D=128, SA_H_EPI_STAGE at D=64, the
    # defaults): stmatrix, then the copy engine's shared -> global row copies.
    if (k["ws"] and k["d"] == 128) or (not k["ws"] and k["d"] == 64):
        if not any(o.startswith("STSM.16.M88.4") for o in k["ops"]):
            why.append("no STSM.16.M88.4 (the staged epilogue's stmatrix)")
        if not any(o.startswith("UBLKCP.G.S") for o in k["ops"]):
            why.append("no UBLKCP.G.S (the staged epilogue's row copies to O)")
    return why


def main(paths):
    failures, seen = 0, 0
    for path in paths:
        for k in parse(open(path).read()):
            seen += 1
            why = check(k)
            lp = main_loop(k)
            n = lp[1] - lp[0] + 1 if lp else 0
            print("%s %s: %s (main loop %d instructions)" % (
                path.split("/")[-1], k["name"][:40], "ok" if not why else "FAIL: " + "; ".join(why),
                n))
            failures += bool(why)
    if seen == 0:
        print("no sa_hopper kernel in %s" % " ".join(paths))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
