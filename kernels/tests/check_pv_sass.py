"""CI test of issue 9: in each attention kernel's main loop (SASS), P·V runs on the instruction
its mode promises and Q·Kᵀ stays INT8 (full rate everywhere). For the modes meant for GeForce
(int8-fp8-bs on sm_120a/121a, the f16acc modes on sm_89 and sm_120a) no tensor instruction with
an FP32 accumulator that those cards run at half rate (HMMA/QMMA .F32 without .SF) may be left
in the loop. Also: local-memory traffic inside the loop at most what the listing's budget says.

python3 kernels/tests/check_pv_sass.py ARCH LISTING [ARCH LISTING ...]
Exit 0 when every expectation holds; 1 with one line per failure.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import sass_loops  # noqa: E402

BS = "QMMA.SF.16832.F32.E4M3.E4M3.E8"
E4M3_F32 = "QMMA.16832.F32.E4M3.E4M3"
E4M3_F16 = "QMMA.16832.F16.E4M3.E4M3"
HMMA_F16 = "HMMA.16816.F16"
IMMA = "IMMA.16832.S8.S8"
BLOCK_SCALED_ARCHS = ("sm_120a", "sm_121a")


def expectation(arch, mode):
    """(P·V instruction, count per head-dim unit, full rate required) for a kernel family, or
    None when issue 9 says nothing about it. Counts: per key tile of 64 keys, a warp of 32 rows
    does D/2 k32 E4M3 mma (2 m-tiles x D/8 n-tiles x 2 k-steps / 2) or D k16 fp16 mma."""
    name = sass_loops.KMODE.get(mode)
    if name == "int8-fp8-bs":
        return (BS, 0.5, True) if arch in BLOCK_SCALED_ARCHS else (E4M3_F32, 0.5, False)
    if name == "int8-fp8-f16acc":
        return E4M3_F16, 0.5, True
    if name == "int8-fp16-f16acc":
        return HMMA_F16, 1.0, True
    if name == "int8-fp8":
        return E4M3_F32, 0.5, False
    return None


def check(arch, path):
    failures, seen = [], set()
    for k in sass_loops.parse(open(path).read()):
        exp = expectation(arch, k.mode)
        if exp is None:
            continue
        seen.add(k.mode)
        insn, per_d, full_rate = exp
        ops = k.loop_ops()
        where = "%s %s" % (arch, k.title)
        if not ops:
            failures.append("%s: no main loop with tensor instructions found" % where)
            continue
        c = sass_loops.counts(ops)
        want = int(k.d * per_d)
        if c.get(insn, 0) != want:
            failures.append("%s: %d x %s in the loop, want %d (loop tensor ops: %s)" % (
                where, c.get(insn, 0), insn, want,
                " ".join("%s:%d" % (o, n) for o, n in sorted(c.items()) if sass_loops.is_tensor(o))))
        if c.get(IMMA, 0) != k.d // 2:
            failures.append("%s: %d x %s for Q·Kᵀ, want %d" % (where, c.get(IMMA, 0), IMMA, k.d // 2))
        if "f16acc" in sass_loops.KMODE.get(k.mode, "") and arch in BLOCK_SCALED_ARCHS:
            # sm_100+: each tile's FP16 sums go into the fp32 O by one FHADD per value (2 rows
            # x D/8 n-tiles x 4), not a widening HADD2.F32 plus an FADD.
            fh = sum(n for o, n in c.items() if o.split(".")[0] == "FHADD")
            widen = sum(n for o, n in c.items() if o.startswith("HADD2.F32"))
            if fh != k.d or widen:
                failures.append("%s: %d FHADD (want %d) and %d HADD2.F32 (want 0) in the loop" % (
                    where, fh, k.d, widen))
        slow = {o: n for o, n in c.items() if sass_loops.half_rate_on_geforce(o)}
        if full_rate and slow:
            failures.append("%s: half-rate tensor instructions left in the loop: %s" % (
                where, " ".join("%s:%d" % kv for kv in sorted(slow.items()))))
        print("check-pv-sass: %-8s %-30s loop %5d instr  %s:%d  %s:%d  half-rate:%d  local-mem:%d" % (
            arch, k.title, len(ops), insn, c.get(insn, 0), IMMA, c.get(IMMA, 0),
            sum(slow.values()), k.loop_spills()))
    for mode in (3, 4, 5):
        if mode not in seen:
            failures.append("%s: %s: no %s kernel in the listing" % (arch, path, sass_loops.KMODE[mode]))
    return failures


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        print(__doc__)
        return 64
    failures = []
    for i in range(1, len(argv), 2):
        failures += check(argv[i], argv[i + 1])
    for f in failures:
        print("check-pv-sass: FAIL: " + f)
    print("check-pv-sass: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
