"""How much of each attention kernel's main loop puts Q·Kᵀ's INT8 MMAs (IMMA) next to the
softmax's exponentials (MUFU.EX2) and FP32 work in one basic block, from an nvdisasm listing:
the software-pipelined loop (SA_PIPE_QK, kernels/src/attn/sa_pipe.cuh) must, the plain loop
does not (its Q·Kᵀ and its softmax are separate blocks).

    python3 bench/sass_overlap.py LISTING [--kernel REGEX] [--require-interleaved N]

Per kernel: the loop's IMMA count, how many sit in a block that also holds MUFU, and the MUFU
and FP32 (FFMA/FADD/FMUL) instructions that lie between the first and the last IMMA of such a
block (i.e. that ptxas interleaved with the tensor instructions). With --require-interleaved N
it exits 1 unless every kernel matched by --kernel has at least N interleaved MUFU.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_loops  # noqa: E402

FP32 = ("FFMA", "FADD", "FMUL")


def blocks(k, first, last):
    """Basic blocks of instructions first..last: split at labels and after branches/exits."""
    starts = set(v for v in k.labels.values() if first <= v <= last)
    out, cur = [], []
    for i in range(first, last + 1):
        if i in starts and cur:
            out.append(cur)
            cur = []
        cur.append(i)
        if k.ops[i].split(".")[0] in ("BRA", "EXIT", "RET", "BRX", "JMP"):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def overlap(k):
    lp = k.loop()
    res = {"imma": 0, "imma_with_mufu": 0, "mufu_between": 0, "fp32_between": 0, "mufu": 0}
    if not lp:
        return res
    for blk in blocks(k, *lp):
        ops = [k.ops[i].split(".")[0] for i in blk]
        imma = [n for n, o in enumerate(ops) if o == "IMMA"]
        res["imma"] += len(imma)
        res["mufu"] += ops.count("MUFU")
        if not imma or "MUFU" not in ops:
            continue
        res["imma_with_mufu"] += len(imma)
        inner = ops[imma[0]:imma[-1] + 1]
        res["mufu_between"] += inner.count("MUFU")
        res["fp32_between"] += sum(inner.count(o) for o in FP32)
    return res


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("listing")
    ap.add_argument("--kernel", default=".", help="regex on the kernel title (e.g. 'D=128')")
    ap.add_argument("--require-interleaved", type=int, default=None)
    a = ap.parse_args(argv)
    bad = []
    n = 0
    for k in sass_loops.parse(open(a.listing).read()):
        if not re.search(a.kernel, k.title):
            continue
        r = overlap(k)
        n += 1
        print("%-30s IMMA %3d (in blocks with MUFU %3d)  MUFU %3d, between IMMAs %3d; "
              "FP32 between IMMAs %4d" % (k.title, r["imma"], r["imma_with_mufu"], r["mufu"],
                                          r["mufu_between"], r["fp32_between"]))
        if a.require_interleaved is not None and r["mufu_between"] < a.require_interleaved:
            bad.append(k.title)
    if a.require_interleaved is not None:
        if n == 0:
            print("sass_overlap: FAIL: no kernel matches %r" % a.kernel)
            return 1
        if bad:
            print("sass_overlap: FAIL: fewer than %d MUFU between IMMAs in: %s" % (
                a.require_interleaved, ", ".join(bad)))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
