"""Reads an `nvdisasm` (or `cuobjdump -sass`) listing of the attention kernels and finds each
kernel's main loop: the backward branch whose body holds the most tensor-core instructions.
Used by kernels/tests/check_pv_sass.py (the CI test of P·V's instruction per mode) and by
bench/model_throughput.py (instruction counts per key tile).

python3 bench/sass_loops.py LISTING   prints, per kernel, the loop's instruction mix
"""
import re
import sys

# Kernel family (template MODE of sa_attn_kernel) -> the API's mode name.
KMODE = {0: "fp16", 1: "int8-fp16", 2: "int8-fp8", 3: "int8-fp8-bs", 4: "int8-fp8-f16acc",
         5: "int8-fp16-f16acc"}

_KERNEL = re.compile(r"_Z14sa_attn_kernelILi(\d+)ELi(\d+)ELb([01])ELb([01])E")
_INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
_LABEL = re.compile(r"^(\.L_x_\d+):")
_BRA = re.compile(r"BRA(?:\.\w+)*\s+(?:!?U?P\w+,\s*)?`\((\.L_x_\d+)\)")


class Kernel:
    def __init__(self, name, mode, d, bf16, v1):
        self.name, self.mode, self.d, self.bf16, self.v1 = name, mode, d, bf16, v1
        self.ops = []      # full opcodes, e.g. "HMMA.16816.F32"
        self.texts = []    # operand text (spill markers live there)
        self.preds = []    # guard predicate ("@P0 ", "@!UP1 ") or ""
        self.labels = {}   # label -> index of the next instruction

    @property
    def title(self):
        return "%s D=%d %s%s" % (KMODE.get(self.mode, "mode%d" % self.mode), self.d,
                                 "bf16" if self.bf16 else "fp16", " 1xV" if self.v1 else "")

    def loop(self):
        """(first, last) instruction indices of the main loop, or None."""
        best, best_n = None, -1
        for i, t in enumerate(self.texts):
            if not self.ops[i].startswith("BRA"):
                continue
            m = _BRA.search(self.ops[i] + t)
            if not m or m.group(1) not in self.labels:
                continue
            start = self.labels[m.group(1)]
            if start > i:
                continue
            n = sum(1 for o in self.ops[start:i + 1] if is_tensor(o))
            if n > best_n:
                best, best_n = (start, i), n
        return best if best_n > 0 else None

    def loop_ops(self):
        lp = self.loop()
        return self.ops[lp[0]:lp[1] + 1] if lp else []

    def loop_spills(self):
        lp = self.loop()
        if not lp:
            return 0
        return sum(1 for o in self.ops[lp[0]:lp[1] + 1] if o.startswith(("LDL", "STL")))


_COND_OPERAND = re.compile(r"\s*!?U?P[0-9T]+\s*,")


def is_conditional(k, i):
    """Whether instruction i (a branch) depends on a predicate: a guard (@P0 BRA) or, for
    uniform branches, a predicate operand (BRA.U !UP0, target)."""
    return bool(k.preds[i]) or bool(_COND_OPERAND.match(k.texts[i]))


def is_tensor(op):
    return op.split(".")[0] in ("HMMA", "IMMA", "QMMA", "OMMA", "UTCQMMA", "UTCHMMA")


def half_rate_on_geforce(op):
    """Tensor instructions with an FP32 accumulator that GeForce cards run at half rate: HMMA
    and QMMA with .F32, unless block-scaled (QMMA.SF...)."""
    parts = op.split(".")
    if parts[0] not in ("HMMA", "QMMA"):
        return False
    if parts[0] == "QMMA" and "SF" in parts:
        return False
    return "F32" in parts


def parse(text):
    kernels, cur = [], None
    for line in text.splitlines():
        if line.startswith("_Z") and line.rstrip().endswith(":"):
            m = _KERNEL.match(line)
            cur = None
            if m:
                cur = Kernel(line.rstrip()[:-1], int(m.group(1)), int(m.group(2)),
                             m.group(3) == "1", m.group(4) == "1")
                kernels.append(cur)
            continue
        if cur is None:
            continue
        m = _LABEL.match(line.strip())
        if m:
            cur.labels[m.group(1)] = len(cur.ops)
            continue
        m = _INSN.search(line)
        if m:
            cur.ops.append(m.group(3))
            cur.texts.append(m.group(4))
            cur.preds.append((m.group(2) or "").strip())
    return kernels


def counts(ops):
    c = {}
    for o in ops:
        c[o] = c.get(o, 0) + 1
    return c


def main(path):
    for k in parse(open(path).read()):
        ops = k.loop_ops()
        tensor = {o: n for o, n in counts(ops).items() if is_tensor(o)}
        print("%-28s loop %5d instr  tensor %s  local-mem %d" % (
            k.title, len(ops), " ".join("%s:%d" % kv for kv in sorted(tensor.items())),
            k.loop_spills()))


if __name__ == "__main__":
    main(sys.argv[1])
