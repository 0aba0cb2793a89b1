"""Summarises `nvcc -Xptxas -v` output: one line per attention kernel (registers, spills)."""
import re
import sys

MODE = {"0": "fp16", "1": "int8-fp16", "2": "int8-fp8"}
cur = None
for line in open(sys.argv[1]):
    m = re.search(r"Compiling entry function '(\S+)' for '(\S+)'", line)
    if m:
        k = re.match(r"_Z14sa_attn_kernelILi(\d)ELi(\d+)ELb(\d)E(?:Lb(\d)E)?Ev", m.group(1))
        cur = ("attn %-9s D=%-3s %s %s" % (MODE[k.group(1)], k.group(2),
                                          ("bf16" if k.group(3) == "1" else "fp16") + (" 1xV" if k.group(4) == "1" else ""),
                                          m.group(2))
               if k else None)
        spill = ""
        continue
    if cur and "spill" in line:
        spill = re.sub(r"\s+", " ", line.strip())
    if cur and "Used" in line:
        regs = re.search(r"Used (\d+) registers", line).group(1)
        print("%-36s regs %3s  %s" % (cur, regs, spill))
        cur = None
