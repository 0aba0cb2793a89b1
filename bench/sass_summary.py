"""Summarises a `cuobjdump --dump-sass` listing of libsageattn: per attention kernel, the
tensor-core instructions, local-memory traffic (spills), and what sits inside the P·V region
(from the first to the last P·V mma: QMMA for int8-fp8, the HMMA after the IMMA otherwise).

python3 bench/sass_summary.py DUMP.txt[.gz]
"""
import gzip
import re
import sys

MODE = {"0": "fp16", "1": "int8-fp16", "2": "int8-fp8"}
path = sys.argv[1]
text = (gzip.open(path, "rt") if path.endswith(".gz") else open(path)).read()
arch = ""
for part in re.split(r"\n(?=\s+Function : |arch = )", text):
    m = re.match(r"arch = (\S+)", part.strip())
    if m:
        arch = m.group(1)
        continue
    m = re.match(r"\s+Function : (\S+)", part)
    if not m:
        continue
    k = re.match(r"_Z14sa_attn_kernelILi(\d)ELi(\d+)ELb(\d)E(?:Lb(\d)E)?E", m.group(1))
    if not k:
        continue
    ins = [(int(a, 16), re.sub(r"^@!?U?P\w+\s+", "", t.strip()))
           for a, t in re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", part)]
    ops = [t.split()[0] for _, t in ins]
    count = {}
    for o in ops:
        if re.match(r"(HMMA|IMMA|QMMA|LDL|STL)", o):
            count[o] = count.get(o, 0) + 1
    pv = [i for i, o in enumerate(ops) if o.startswith("QMMA")] if k.group(1) == "2" else \
        [i for i, o in enumerate(ops) if o.startswith("HMMA")][-64 * (int(k.group(2)) // 64):]
    inside = {}
    if pv:
        for o in ops[min(pv):max(pv) + 1]:
            base = o.split(".")[0]
            if not base.endswith("MMA"):
                inside[o] = inside.get(o, 0) + 1
    print("%-8s %-9s D=%-3s %s  %s" % (arch, MODE[k.group(1)], k.group(2),
                                      ("bf16" if k.group(3) == "1" else "fp16") +
                                      (" 1xV" if k.group(4) == "1" else ""),
                                      " ".join("%s:%d" % kv for kv in sorted(count.items()))))
    print("         P·V region: " + " ".join("%s:%d" % kv for kv in sorted(inside.items())))
