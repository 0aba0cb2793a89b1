"""Throughput model of the attention kernels (issue 9): predicts TOPS at the bench's key shape
(B=1, H=32, L=16384, D=128, non-causal; 4·B·H·L²·D operations) on an RTX 5090 (GB202, sm_120a)
and an RTX 4090 (AD102, sm_89) for every mode, from each kernel's SASS, and validates the same
model against this project's measured H200 (GH100, sm_90) figures. All GeForce figures are
MODELLED: no such card was available to this project.

    python3 bench/model_throughput.py --sass sm_120a=A.sass --sass sm_89=B.sass --sass sm_90=C.sass
        [--check]       exit 1 unless every H200 validation error is within 15 % and the
                        fastest RTX 5090 mode that meets its accuracy goal is modelled >= 650 TOPS
        [--check-validation]  exit 1 unless every H200 validation error is within 15 %
        [--variant NAME=ARCH:ROWS_PER_WARP:BLOCKS_PER_SM:LISTING ...]  variant builds
                        (bench/model_overlap9.sh passes the ones bench/device_overlap9.sh measured)

The listings are `nvdisasm` output of the attn_<mode>.cu objects (kernels/tests/sass-check.sh
writes them to build/kernels/sass/<arch>/listing.sass, sm_90 with KERNEL_SASS_ARCHS).

The model, per SM and per round in which each resident warp processes one 64-key tile:
  * instructions executed per warp and tile: the main loop's SASS (bench/sass_loops.py) along
    the path a tile inside a long sequence takes: no masking, no rescale of O (a row max moved:
    rare after the first tiles), the one-FFMA exponential form, the next tile's loads issued;
  * three pipes, in seconds per round with W resident warps:
      tensor  T = W · Σ ops(mma) / (rate of its class / SMs)   (dense mma.sync TOPS below)
      issue   I = W · instructions / (4 schedulers · clock)     (one instruction per clock each)
      MUFU    M = W · 32 · exp2 count / (16 lanes · clock)      (CUDA Programming Guide,
                                                                 arithmetic throughput table)
    round = ALPHA · (2 / w)^GAMMA · (T + max(I, M)) with w warps per scheduler: tensor work and
    the rest do not overlap (the kernels are latency-bound at two warps per scheduler,
    bench/NOTES.md: issue slots 40 % busy), ALPHA (> 1) stands for the stalls neither term
    counts (barriers, load and dependency latency), and fewer warps per scheduler hide less of
    them. ALPHA is fitted on ONE measured H200 point (fp16 mode, D=128), GAMMA on the H200's
    measured 2- vs 3-blocks-per-SM pairs of the same D=64 kernels (through this model, waves
    included); the other eleven H200 figures (every mode, D=128 and D=64) are the validation.
    Caveat: on GeForce some D=128 kernels fit one block per SM (100 KB of shared memory), one
    warp per scheduler: GAMMA extrapolates from 2 -> 3 to 2 -> 1;
  * resident blocks per SM from registers (255 per thread at D=128) and shared memory (the
    kernel's tile ring plus 1 KB reserved per block; GeForce SMs have 100 KB, GH100 228 KB),
    for the kernel the library launches there (one V buffer where that fits two blocks);
    kernel = tiles · (full waves · round + the last, partial wave's round at its own occupancy:
    its busiest SM holds ceil(remaining blocks / SMs));
  * printed, not in the sum: the path's instructions by class and the per-round time of the fma
    and alu pipes and of shared memory (CLASSES below, with their rates' sources), which would
    bind only above I; with shared memory in the max the H200 validation fails (bench/NOTES.md,
    v9); and the kernel's ceiling with no instruction but its tensor ones;
  * plus the int8 pre-pass (≈ 540 MB moved at the key shape, 0.21 ms measured on the H200) at
    the card's DRAM bandwidth, as in the measured end-to-end figures.
The software-pipelined loop (SA_PIPE_QK, bench/NOTES.md v10) adds one term: in a basic block
that holds both the next tile's IMMA and this tile's exponentials (bench/sass_overlap.py), per
warp min(T_b, max(I_b, M_b)) can hide, and OVERLAP_ETA of it does:
    round = ALPHA · (2 / w)^GAMMA · (T + max(I, M) − OVERLAP_ETA · Σ_b min(T_b, max(I_b, M_b)))
OVERLAP_ETA is fitted on the H200's measured pipelined int8-fp16 kernel (16 rows per warp, one
block of 8 warps per SM), whose configuration gets its own stall factor, fitted on the plain loop
in the same configuration (--variant); the other measured variants are the validation.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_loops  # noqa: E402
import sass_overlap  # noqa: E402

# Dense mma.sync TOPS per instruction class, and the card's SMs, clock (GHz), shared memory per
# SM (bytes) and DRAM bandwidth (GB/s).
#  GB202 / RTX 5090: issue 9's table (a public mma.sync microbenchmark, `mmapeak`, on an RTX 5090):
#    INT8 746, FP8 with FP16 accumulator 737, FP8 with FP32 accumulator 370, FP16 with FP16
#    accumulator 746, FP16/BF16 with FP32 accumulator 371, block-scaled MXFP8 737. 170 SMs,
#    boost 2.407 GHz, 1792 GB/s (NVIDIA's RTX 5090 specifications).
#  AD102 / RTX 4090: NVIDIA Ada GPU architecture whitepaper, appendix A (dense): INT8 660.6,
#    FP8 with FP16 accumulator 660.6, with FP32 accumulator 330.3, FP16 with FP16 accumulator
#    330.3, with FP32 accumulator 165.2; 128 SMs, boost 2.52 GHz, 1008 GB/s. No block-scaled MMA.
#  GH100 / H200: this project's own mma.sync peaks, measured on the H200: INT8 1218,
#    FP16 with FP32 accumulator 555, with FP16 accumulator 621 (FP8 mma.sync is emulated there:
#    its SASS is HMMA); 132 SMs, 1.98 GHz, 228 KB shared memory per SM, 4.8 TB/s.
CARDS = {
    "RTX 5090": {"arch": "sm_120a", "sms": 170, "ghz": 2.407, "smem": 102400, "gbs": 1792,
                 "rates": {"int8": 746, "fp8_f16": 737, "fp8_f32": 370, "f16_f16": 746,
                           "f16_f32": 371, "mxf8_f32": 737}},
    "RTX 4090": {"arch": "sm_89", "sms": 128, "ghz": 2.52, "smem": 102400, "gbs": 1008,
                 "rates": {"int8": 660.6, "fp8_f16": 660.6, "fp8_f32": 330.3, "f16_f16": 330.3,
                           "f16_f32": 165.2}},
    "H200": {"arch": "sm_90", "sms": 132, "ghz": 1.98, "smem": 233472, "gbs": 4800,
             "rates": {"int8": 1218, "f16_f32": 555, "f16_f16": 621}},
}

# Published SageAttention kernel TOPS, D=128 non-causal, 1K..32K (read from the upstream
# repository's plots; quantization excluded there, included in ours).
PUBLISHED = {
    "RTX 5090": [("SageAttention2 (8+8, FP32 acc.)", "489-554"),
                 ("SageAttention2++ (FP16 acc. in tile)", "583-643")],
    "RTX 4090": [("SageAttention2 (8+8, FP32 acc.)", "346-431"),
                 ("SageAttention2++ (8+8)", "411-493")],
}

# This project's measured H200 TOPS (end to end, quantization included), B=1 H=32 L=16384
# non-causal, D=128 and D=64: bench/results/h200-f3b2e61-fullrate-bench.json and
# h200-77d93aa-fullrate-bench.json (two runs of bench/device_fullrate.sh: their mean). Their sm_90
# kernels are the ones this model reads (kernels/src/attn has changed since only for sm_90a and,
# in sa_lazy_alpha, for sm_120a). The earlier runs (h200-v6-final.json, h200-all-6da3ec4-bench.json)
# agree with these within 1.5 % for the three modes they measured.
MEASURED_H200 = {
    ("fp16", 128): (339.33 + 344.79) / 2,
    ("int8-fp16", 128): (421.93 + 419.35) / 2,
    ("int8-fp8", 128): (311.46 + 311.69) / 2,
    ("int8-fp8-bs", 128): (314.06 + 311.49) / 2,
    ("int8-fp8-f16acc", 128): (324.79 + 321.26) / 2,
    ("int8-fp16-f16acc", 128): (364.66 + 360.94) / 2,
    ("fp16", 64): (306.95 + 311.94) / 2,
    ("int8-fp16", 64): (340.01 + 337.98) / 2,
    ("int8-fp8", 64): (253.91 + 253.85) / 2,
    ("int8-fp8-bs", 64): (255.92 + 255.77) / 2,
    ("int8-fp8-f16acc", 64): (263.26 + 263.10) / 2,
    ("int8-fp16-f16acc", 64): (292.87 + 293.17) / 2,
}
CALIBRATION = ("fp16", 128)

# Measured H200 TOPS of variant builds (bench/prepare_overlap9.sh, bench/device_overlap9.sh),
# (variant, mode, D) at B=1 H=32 L=16384 non-causal; FIT_VARIANT fits OVERLAP_ETA.
MEASURED_H200_VARIANTS = {
    ("w16", "int8-fp16", 128): 270.5, ("w16", "int8-fp8", 128): 242.6,
    ("w16b2", "int8-fp16", 128): 349.7, ("w16b2", "int8-fp8", 128): 311.8,
    ("w16p4", "int8-fp16", 128): 302.7, ("w16p4", "int8-fp8", 128): 280.0,
    ("w16p2", "int8-fp16", 128): 293.2, ("w16p2", "int8-fp8", 128): 256.4,
    ("pipe4d64", "int8-fp16", 64): 311.0, ("plain2blk", "int8-fp16", 64): 294.2,
}
FIT_VARIANT = ("w16p4", "int8-fp16", 128)
FIT_MODE = "int8-fp16"

# Occupancy: the same D=64 kernels at 2 and at 3 blocks per SM (8 and 12 warps), measured on the
# H200 at L=16K (bench/results/h200-v5-variants.json, d64x2 vs d64x3). Fewer warps per scheduler
# hide less latency; the model's stall factor scales as (2 / warps per scheduler)^GAMMA. GAMMA is
# fitted on these three pairs (not on the validation figures) through predict() itself, so that
# the waves (4096 blocks in 16 rounds of 264 or 10.3 of 396 slots) count as they do in every
# prediction; a bare TOPS ratio would credit the wave difference to occupancy.
OCCUPANCY_H200 = {"int8-fp16": (293.1, 335.6), "fp16": (285.0, 308.1), "int8-fp8": (254.8, 273.8)}


# Accuracy goal each mode meets (issue 4; kernels/ALGORITHM.md): the f16acc and bs variants
# share their FP32 form's goal (C reference, test_sa_ref).
GOAL = {"fp16": "exact", "int8-fp16": "int8-fp16", "int8-fp16-f16acc": "int8-fp16",
        "int8-fp8": "int8-fp8", "int8-fp8-bs": "int8-fp8", "int8-fp8-f16acc": "int8-fp8"}

B, H, L = 1, 32, 16384
PREPASS_BYTES = 540e6
CTA_Q, CTA_K, THREADS = 128, 64, 128


def tensor_class(op):
    p = op.split(".")
    if p[0] == "IMMA":
        return "int8", 2 * 16 * 8 * 32
    if p[0] == "QMMA":
        k = 2 * 16 * 8 * 32
        if "SF" in p:
            return "mxf8_f32", k
        return ("fp8_f16" if "F16" in p[2:3] else "fp8_f32"), k
    if p[0] == "HMMA":
        shape = p[1]
        ops = 2 * 16 * 8 * (16 if shape == "16816" else 8)
        acc = "f16_f16" if len(p) > 2 and p[2] == "F16" else "f16_f32"
        return acc, ops
    raise ValueError(op)


_URZ_NOP = re.compile(r"^\s*URZ,\s*URZ,\s*URZ,\s*URZ\s*$")


def executed_path(k):
    """Instruction opcodes one warp executes for one interior key tile (see the docstring). A
    uniform add of zeros to the zero register (`UIADD3 URZ, URZ, URZ, URZ`, what ptxas puts
    between back-to-back MMAs on sm_89 where sm_120a gets NOP) is reported as NOP.URZ."""
    return [_path_op(k, i) for i in executed_indices(k)]


def _path_op(k, i):
    op = k.ops[i]
    return "NOP.URZ" if op == "UIADD3" and _URZ_NOP.match(k.texts[i]) else op


def executed_indices(k):
    """The listing indices of executed_path's instructions."""
    lp = k.loop()
    if not lp:
        return []
    start, end = lp
    ops, texts = k.ops, k.texts
    i, out = start, []
    while i <= end:
        op = ops[i]
        if op.startswith("BRA") and i != end:
            m = sass_loops._BRA.search(op + texts[i])
            target = k.labels.get(m.group(1)) if m else None
            if target is None or target <= i or target > end + 1:
                out.append(i)
                i += 1
                continue
            conditional = sass_loops.is_conditional(k, i)
            if not conditional:
                out.append(i)
                i = target
                continue
            region = ops[i + 1:target]
            if skip_region(k, region, i, target):
                out.append(i)
                i = target
                continue
        out.append(i)
        i += 1
    return out


def overlap_blocks(k):
    """Of the executed path, the basic blocks that hold INT8 MMAs and exponentials together (the
    software-pipelined loop's interleaved blocks, bench/sass_overlap.py): a list of opcode
    lists. Empty for every plain kernel."""
    idx = set(executed_indices(k))
    lp = k.loop()
    out = []
    for blk in sass_overlap.blocks(k, *lp) if lp else []:
        ops = [_path_op(k, i) for i in blk if i in idx]
        base = [o.split(".")[0] for o in ops]
        if "IMMA" in base and "MUFU" in base:
            out.append(ops)
    return out


def mufu(ops):
    return sum(1 for o in ops if o.startswith("MUFU"))


def _count(ops, prefix):
    return sum(1 for o in ops if o.startswith(prefix))


def skip_region(k, region, i, target):
    """Whether an interior tile jumps over the region a forward conditional branch skips."""
    if any(sass_loops.is_tensor(o) for o in region):
        return False
    # if/else: the fall-through arm ends with a jump over the other arm.
    if region and region[-1].startswith("BRA") and not sass_loops.is_conditional(k, target - 1):
        m = sass_loops._BRA.search(region[-1] + k.texts[target - 1])
        join = k.labels.get(m.group(1)) if m else None
        if join is not None and join > target:
            other = k.ops[target:join]
            copies_a, copies_b = _count(region, "LDGSTS"), _count(other, "LDGSTS")
            if (copies_a == 0) != (copies_b == 0):
                return copies_a == 0  # an interior tile issues the next tile's copies
            # the one-FFMA exponential form; the full-tile copy without bounds: the shorter arm
            return len(region) > len(other)
    # O's rescale (FMUL by alpha over D/8 x 4 x 2 values), the masks (FSEL on scores): rare or
    # absent in an interior tile of a long sequence.
    if _count(region, "MUFU") >= 32:
        return False
    return _count(region, "FMUL") >= 64 or _count(region, ("FSEL", "SEL")) >= 32


def smem_bytes(mode, d, v1=False):
    """The kernel's dynamic shared memory (kernels/src/attn/sa_tile.cuh): two V buffers, or one
    with v1."""
    qk_int8 = mode != "fp16"
    pv_fp8 = mode.startswith("int8-fp8")
    qk_pitch = d * (1 if qk_int8 else 2) + 16
    v_rows, v_row = (d, CTA_K) if pv_fp8 else (CTA_K, d * 2)
    ks = CTA_K * 4 if qk_int8 else 0
    k_bytes, v_bytes = CTA_K * qk_pitch + ks, v_rows * (v_row + 16)
    return CTA_Q * qk_pitch + 2 * k_bytes + (1 if v1 else 2) * v_bytes


def uses_v1(card, mode, d):
    """sa_attn_run's choice (sa_mainloop.cuh): the one-V-buffer kernel when two V buffers do not
    fit a block, or, for the FP8 modes at D=128, when it lets two blocks share an SM."""
    full, one = smem_bytes(mode, d), smem_bytes(mode, d, True)
    optin = card["smem"] - 1024
    two = mode.startswith("int8-fp8") and d == 128 and \
        card["smem"] < 2 * (full + 1024) and card["smem"] >= 2 * (one + 1024)
    return optin < full or two


def blocks_per_sm(card, mode, d, regs, v1=False, threads=THREADS):
    smem = smem_bytes(mode, d, v1)
    by_smem = card["smem"] // (smem + 1024)
    by_regs = 65536 // (max(regs, 1) * threads)
    return max(1, min(by_smem, by_regs, 32))


def regs_for(arch, mode, d):
    """Registers per thread the launch bounds give (sa_mainloop.cuh)."""
    if d == 128:
        return 255
    if arch == "sm_90" and mode in ("fp16", "int8-fp16"):
        return 168
    return 255


# Instruction classes of the executed path, by the pipe that runs them (Nsight Compute's pipe
# names; its "Pipelines" documentation assigns FP32 arithmetic and IMAD to fma, integer, logic,
# compare/min/max and the fast FP32 -> FP16 conversion (F2FP) to alu, MUFU and the other type
# conversions to xu). Cycles per warp instruction on one scheduler (SM sub-partition) from the
# CUDA C++ Programming Guide's arithmetic-throughput table (results per clock per SM, 4
# schedulers): fma 128/SM -> 1 cycle; alu 64/SM (cc 8.9; Blackwell's unified INT32/FP32 cores may
# double it: the larger figure is kept) -> 2; xu 16/SM -> 8. Shared memory serves 128 bytes per
# clock per SM (32 banks of 4 bytes): an ldmatrix .x4 is 4 wavefronts (four 8x16-byte matrices,
# conflict-free with the 16-byte row padding), a 16-byte cp.async of a warp 4, a broadcast LDS 1.
CLASSES = [
    ("tensor", "tensor", lambda o: sass_loops.is_tensor(o)),
    ("FP32 FMA/ADD/MUL", "fma", lambda o: o.split(".")[0] in (
        "FFMA", "FADD", "FMUL", "FHADD", "HADD2", "HFMA2", "HMUL2", "IMAD", "IMUL")),
    ("min/max/compare/select", "alu", lambda o: o.split(".")[0] in (
        "FMNMX", "FSETP", "FSEL", "ISETP", "SEL", "PLOP3", "IMNMX")),
    ("MUFU (ex2)", "xu", lambda o: o.startswith("MUFU")),
    ("conversion F2F/I2F/F2I", "xu", lambda o: o.split(".")[0] in ("F2F", "I2F", "F2I", "I2I")),
    ("pack F2FP, PRMT", "alu", lambda o: o.split(".")[0] in ("F2FP", "PRMT")),
    ("integer/address", "alu", lambda o: o.split(".")[0] in (
        "IADD3", "IADD", "LOP3", "LEA", "SHF", "VIADD", "MOV", "CS2R", "S2R", "IABS", "POPC",
        "FLO", "BMSK", "SGXT", "LDC")),
    ("padding NOP (between MMAs)", "control", lambda o: o == "NOP" or o.startswith("NOP.")),
    ("uniform datapath", "uniform", lambda o: o.startswith(("U", "LDCU", "S2UR"))),
    ("shuffle/vote", "mio", lambda o: o.split(".")[0] in ("SHFL", "VOTE", "MATCH")),
    ("LDSM", "smem", lambda o: o.startswith("LDSM")),
    ("LDS", "smem", lambda o: o.split(".")[0] == "LDS"),
    ("copies LDGSTS/DEPBAR", "smem", lambda o: o.split(".")[0] in (
        "LDGSTS", "LDGDEPBAR", "DEPBAR")),
    ("local memory LDL/STL", "lsu", lambda o: o.split(".")[0] in ("LDL", "STL")),
    ("control BRA/BAR/BSSY", "control", lambda o: o.split(".")[0] in (
        "BRA", "BAR", "BSSY", "BSYNC", "CALL", "RET", "EXIT", "WARPSYNC")),
]
PIPE_CYCLES = {"fma": 1, "alu": 2, "xu": 8}


def classify(path):
    """{class name: count} over the executed path (every opcode lands in one class)."""
    out = {name: 0 for name, _, _ in CLASSES}
    out["other"] = 0
    for o in path:
        for name, _, test in CLASSES:
            if test(o):
                out[name] += 1
                break
        else:
            out["other"] += 1
    return out


def smem_wavefronts(path):
    """Shared-memory wavefronts (128-byte cycles of the SM's shared memory) of one warp-tile."""
    n = 0
    for o in path:
        if o.startswith("LDSM"):
            n += 4 if ".4" in o else (2 if ".2" in o else 1)
        elif o.split(".")[0] == "LDS":
            n += 1
        elif o.startswith("LDGSTS"):
            n += 4
    return n


def executed_path_cache(k):
    """executed_path(k), computed once per kernel (predict() compares against it to know
    whether a what-if path replaced the real one)."""
    if not hasattr(k, "_path"):
        k._path = executed_path(k)
    return k._path


def predict(card, k, alpha, detail=False, gamma=None, bps=None, path=None, eta=None,
            hide=None):
    """Modelled TOPS of kernel k on card (see the module docstring); bps forces the blocks per SM
    (GAMMA's fit), path replaces the kernel's executed path (what-if counts), eta the overlap
    efficiency of the pipelined loop's interleaved blocks (OVERLAP_ETA), hide (seconds per warp
    and tile) replaces their overlappable time (what-if structures)."""
    path = executed_path_cache(k) if path is None else path
    if not path:
        return None
    gamma = GAMMA if gamma is None else gamma
    mode = sass_loops.KMODE[k.mode]
    f = card["ghz"] * 1e9
    n_sm = card["sms"]
    tensor_s = 0.0
    for o in path:
        if sass_loops.is_tensor(o):
            cls, ops = tensor_class(o)
            rate = card["rates"].get(cls)
            if rate is None:
                raise ValueError("%s has no rate for %s" % (card["arch"], o))
            tensor_s += ops / (rate * 1e12 / n_sm)
    wpb = CTA_Q // getattr(k, "rows", CTA_Q // 4)  # warps per block (16 rows per warp: 8)
    if bps is None:
        bps = blocks_per_sm(card, mode, k.d, regs_for(card["arch"], mode, k.d), k.v1)
        if getattr(k, "bps", None):  # a variant build's blocks per SM (its launch bounds)
            bps = min(k.bps, blocks_per_sm(card, mode, k.d, 1, k.v1, wpb * 32))
    # The software-pipelined loop's interleaved blocks (tensor and exponential work in one
    # basic block, bench/sass_overlap.py): per warp, the part of such a block's tensor time and
    # of its issue/MUFU time that can hide behind each other, min(T_b, max(I_b, M_b)).
    eta = OVERLAP_ETA if eta is None else eta
    hide_s = 0.0
    for blk in overlap_blocks(k) if path is executed_path_cache(k) else []:
        t_b = sum(tensor_class(o)[1] / (card["rates"][tensor_class(o)[0]] * 1e12 / n_sm)
                  for o in blk if sass_loops.is_tensor(o))
        hide_s += min(t_b, max(len(blk) / (4 * f), 32 * mufu(blk) / (16 * f)))
    if hide is not None:
        hide_s = hide

    def round_s(b):
        """One round (every resident warp one tile) with b blocks on the SM."""
        w = wpb * b
        t = w * tensor_s
        i = w * len(path) / (4 * f)
        m = w * 32 * mufu(path) / (16 * f)
        return alpha * (2.0 / (w / 4)) ** gamma * (t + max(i, m) - eta * w * hide_s), t, i, m

    full_round, t, i, m = round_s(bps)
    n_blocks = math.ceil(L / CTA_Q) * H * B
    tiles = math.ceil(L / CTA_K)
    # Full waves, then the remaining blocks spread over the SMs: the last wave runs at its own
    # occupancy (the busiest SM holds ceil(rest / SMs) blocks), not at a full wave's.
    full_waves, rest = divmod(n_blocks, n_sm * bps)
    tail = round_s(math.ceil(rest / n_sm))[0] if rest else 0.0
    seconds = tiles * (full_waves * full_round + tail)
    if mode != "fp16":
        seconds += PREPASS_BYTES / (card["gbs"] * 1e9)
    tops = 4.0 * B * H * L * L * k.d / seconds / 1e12
    if detail:
        w = wpb * bps
        classes = classify(path)
        pipes = {p: 0 for p in PIPE_CYCLES}
        for name, pipe, _ in CLASSES:
            if pipe in pipes:
                pipes[pipe] += classes[name] * PIPE_CYCLES[pipe]
        return tops, {"instr": len(path), "tensor_us": t * 1e6, "issue_us": i * 1e6,
                      "mufu_us": m * 1e6, "blocks_per_sm": bps,
                      "hidden_us": wpb * bps * hide_s * 1e6,
                      "waves": full_waves + (tail / full_round if rest else 0.0),
                      "classes": classes,
                      # per round, microseconds: each pipe on one scheduler (w/4 warps), shared
                      # memory for the whole SM (w warps)
                      "pipe_us": {p: w / 4 * c / f * 1e6 for p, c in pipes.items()},
                      "smem_us": w * smem_wavefronts(path) / f * 1e6}
    return tops


def kernels_by_mode(listing):
    """(mode name, D, one V buffer) -> the fp16-input kernel."""
    out = {}
    for k in sass_loops.parse(open(listing).read()):
        if not k.bf16:
            out[(sass_loops.KMODE[k.mode], k.d, k.v1)] = k
    return out


def kernel_for(card, kernels, mode, d):
    """The kernel the library launches for mode and D on card, or None."""
    return kernels.get((mode, d, uses_v1(card, mode, d))) or kernels.get((mode, d, False))


def fit_alpha(card, k, measured, gamma):
    """The stall factor that makes the model give `measured` for kernel k on card."""
    lo, hi = 0.5, 4.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if predict(card, k, mid, gamma=gamma) > measured:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def fit_gamma(card, kernels, alpha):
    """GAMMA that makes the model's 2- vs 3-block TOPS ratio of each D=64 kernel match the
    measured pair (OCCUPANCY_H200), averaged over the three modes."""
    gs = []
    for mode, (two, three) in OCCUPANCY_H200.items():
        k = kernels.get((mode, 64, False))
        lo, hi = -1.0, 2.0
        for _ in range(60):
            mid = (lo + hi) / 2
            r = predict(card, k, alpha, gamma=mid, bps=2) / predict(card, k, alpha, gamma=mid,
                                                                     bps=3)
            if r > two / three:  # a larger gamma makes 2 blocks relatively slower
                lo = mid
            else:
                hi = mid
        gs.append((lo + hi) / 2)
    return sum(gs) / len(gs)


def calibrate(card, kernels):
    """(ALPHA, GAMMA): ALPHA on the calibration point, GAMMA on the occupancy pairs; the two
    depend on each other only through the pre-pass's share, so a few rounds settle them."""
    gamma = 0.25
    k = kernel_for(card, kernels, *CALIBRATION)
    for _ in range(4):
        alpha = fit_alpha(card, k, MEASURED_H200[CALIBRATION], gamma)
        gamma = fit_gamma(card, kernels, alpha)
    return fit_alpha(card, k, MEASURED_H200[CALIBRATION], gamma), gamma


GAMMA = 0.25  # replaced by calibrate() in main()
# The share of the pipelined loop's overlappable time (min(T_b, max(I_b, M_b)) per interleaved
# block) that the hardware hides; 0 = the plain structure T + max(I, M). Fitted in main() on the
# H200's measured pipelined kernel (MEASURED_H200_VARIANTS, FIT_VARIANT) when given.
OVERLAP_ETA = 0.0
MODES = ("fp16", "int8-fp16", "int8-fp16-f16acc", "int8-fp8", "int8-fp8-bs", "int8-fp8-f16acc")


def print_breakdown(rows):
    """Per-tile instruction counts by class (one column per kernel) and per-round pipe times."""
    names = [name for name, _, _ in CLASSES] + ["other"]
    print("  per warp and key tile (executed path), by class:")
    print("    %-26s" % "class" + "".join("%17s" % m for m, _ in rows))
    for name in names:
        if any(det["classes"][name] for _, det in rows):
            print("    %-26s" % name + "".join("%17d" % det["classes"][name] for _, det in rows))
    print("    %-26s" % "total (issue slots)" + "".join("%17d" % det["instr"] for _, det in rows))
    print("  per round (every resident warp one tile), microseconds: issue and MUFU are the "
          "model's I and M;")
    print("  the other pipes and shared memory are floors that would bind only above I:")
    for label, get in (("tensor T", lambda d: d["tensor_us"]), ("issue I", lambda d: d["issue_us"]),
                       ("MUFU M", lambda d: d["mufu_us"]),
                       ("fma pipe", lambda d: d["pipe_us"]["fma"]),
                       ("alu pipe", lambda d: d["pipe_us"]["alu"]),
                       ("shared memory", lambda d: d["smem_us"])):
        print("    %-26s" % label + "".join("%17.3f" % get(det) for _, det in rows))


def load_variants(specs):
    """{(name, arch): {(mode, D, v1): kernel}} from --variant NAME=ARCH:ROWS:BPS:LISTING."""
    out = {}
    for spec in specs:
        name, rest = spec.split("=", 1)
        arch, rows, bps, listing = rest.split(":", 3)
        ks = kernels_by_mode(listing)
        for k in ks.values():
            k.rows, k.bps = int(rows), int(bps)
        out[(name, arch)] = ks
    return out


def _bisect(f, target, lo, hi, increasing):
    """x in [lo, hi] with f(x) = target, f monotonic."""
    for _ in range(60):
        mid = (lo + hi) / 2
        if (f(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def pipelined_what_if(card, k, alpha):
    """Modelled TOPS of plain kernel k if its next tile's INT8 Q·Kᵀ were interleaved with its
    exponentials as in the measured pipelined loop (OVERLAP_ETA of min(T_IMMA, M) hidden per
    warp and tile; the exponentials' MUFU time bounds that block, as it does in the measured
    one) at its own stall factor: a kernel that does not exist (with 32 rows per warp at D=128
    the pipelined loop spills hundreds of bytes, kernels/ALGORITHM.md)."""
    path = executed_path_cache(k)
    f = card["ghz"] * 1e9
    t_imma = sum(tensor_class(o)[1] / (card["rates"]["int8"] * 1e12 / card["sms"])
                 for o in path if o.startswith("IMMA"))
    return predict(card, k, alpha, eta=OVERLAP_ETA,
                   hide=min(t_imma, 32 * mufu(path) / (16 * f)))


def report_variants(variants, alpha):
    """The variant builds (bench/prepare_overlap9.sh) against their measured H200 figures:
    first with the model as calibrated (ALPHA, OVERLAP_ETA = 0); then with a stall factor per
    configuration (rows per warp, blocks per SM), fitted on that configuration's plain-loop
    int8-fp16 figure (FIT_MODE), and OVERLAP_ETA fitted on FIT_VARIANT, every other measured
    variant a validation; then the GeForce predictions of the variant listings with those
    factors. Returns the worst validation error of the second pass (0 with nothing measured)."""
    global OVERLAP_ETA
    h200 = CARDS["H200"]
    rows = []
    for (vname, arch), ks in variants.items():
        card_name = next(c for c, v in CARDS.items() if v["arch"] == arch)
        for mode in MODES:
            for d in (128, 64):
                k = kernel_for(CARDS[card_name], ks, mode, d)
                # the H200 rows that were measured; every D=128 kernel elsewhere (predictions)
                if k is not None and ((vname, mode, d) in MEASURED_H200_VARIANTS if
                                      card_name == "H200" else d == 128):
                    rows.append((vname, card_name, mode, k))
    measured = [(v, c, m, k) for v, c, m, k in rows
                if c == "H200" and (v, m, k.d) in MEASURED_H200_VARIANTS]
    if measured:
        print("\nVariant builds on the H200 with the model as calibrated (ALPHA %.3f, no overlap "
              "term), B=1 H=32 L=16384:" % alpha)
        for v, c, m, k in measured:
            meas = MEASURED_H200_VARIANTS[(v, m, k.d)]
            tops = predict(h200, k, alpha, eta=0.0)
            print("  %-9s %-16s D=%-3d measured %6.1f modelled %6.1f error %+6.1f%%  (%d rows per "
                  "warp, %d block(s) per SM)" % (v, m, k.d, meas, tops, 100 * (tops - meas) / meas,
                                                k.rows, k.bps))
    # A stall factor per configuration, from its plain-loop variant (no overlap blocks); the
    # library's own configuration keeps ALPHA.
    alphas = {(CTA_Q // 4, 2): (alpha, "the calibration")}
    for v, c, m, k in measured:
        if m == FIT_MODE and k.d == 128 and not overlap_blocks(k) and (k.rows, k.bps) not in alphas:
            meas = MEASURED_H200_VARIANTS[(v, m, 128)]
            alphas[(k.rows, k.bps)] = (_bisect(lambda x: predict(h200, k, x, eta=0.0), meas, 0.5,
                                               4.0, False), v)
    fit = next(((v, c, m, k) for v, c, m, k in measured if (v, m, 128) == FIT_VARIANT), None)
    if fit and (fit[3].rows, fit[3].bps) in alphas:
        k, a_cfg = fit[3], alphas[(fit[3].rows, fit[3].bps)][0]
        OVERLAP_ETA = _bisect(lambda x: predict(h200, k, a_cfg, eta=x),
                              MEASURED_H200_VARIANTS[FIT_VARIANT], 0.0, 1.0, True)
    for cfg, (a_cfg, v) in sorted(alphas.items()):
        if v == "the calibration":
            continue
        print("  stall factor for %d rows per warp, %d block(s) per SM: %.3f (fitted on %s %s; "
              "32 rows, 2 blocks: %.3f)" % (cfg[0], cfg[1], a_cfg, v, FIT_MODE, alpha))
    if fit:
        print("  pipelined loop: OVERLAP_ETA = %.3f: the share of each interleaved block's "
              "min(T_b, max(I_b, M_b)) that is hidden (fitted on %s %s)"
              % (OVERLAP_ETA, FIT_VARIANT[0], FIT_VARIANT[1]))
    worst = 0.0
    print("\nVariant builds with those factors, B=1 H=32 L=16384 non-causal (GeForce figures "
          "MODELLED):")
    print("  %-9s %-5s %-16s %3s %9s %9s %8s %6s %9s %9s %9s %9s" % (
        "variant", "card", "mode", "D", "measured", "modelled", "error", "instr", "tensor",
        "issue", "MUFU", "hidden"))
    for v, c, m, k in rows:
        cfg = alphas.get((k.rows, k.bps))
        if cfg is None:
            continue
        tops, det = predict(CARDS[c], k, cfg[0], detail=True)
        meas = MEASURED_H200_VARIANTS.get((v, m, k.d)) if c == "H200" else None
        role = ""
        if meas and (v == cfg[1] and m == FIT_MODE and k.d == 128):
            role = "  (stall factor fit)"
        elif meas and (v, m, k.d) == FIT_VARIANT:
            role = "  (OVERLAP_ETA fit)"
        err = (tops - meas) / meas if meas else None
        if err is not None and not role:
            worst = max(worst, abs(err))
        print("  %-9s %-5s %-16s %3d %9s %9.1f %8s %6d %7.3fus %7.3fus %7.3fus %7.3fus%s" % (
            v, c.replace("RTX ", ""), m, k.d, "%.1f" % meas if meas else "-", tops,
            "%+.1f%%" % (100 * err) if err is not None else "", det["instr"], det["tensor_us"],
            det["issue_us"], det["mufu_us"], det["hidden_us"], role))
    if alphas:
        print("  worst variant validation error: %.1f %%" % (100 * worst))
    return worst


def main(argv):
    global GAMMA
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sass", action="append", default=[], help="ARCH=LISTING")
    ap.add_argument("--check", action="store_true",
                    help="fail unless validation <= 15 %% and the RTX 5090's best >= 650 TOPS")
    ap.add_argument("--check-validation", action="store_true",
                    help="fail unless every H200 validation error is within 15 %%")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=ARCH:ROWS_PER_WARP:BLOCKS_PER_SM:LISTING, a variant build (e.g. "
                         "w16p4=sm_90:16:1:w16p4.sass); measured H200 variants are validated")
    a = ap.parse_args(argv)
    listings = dict(s.split("=", 1) for s in a.sass)
    kernels = {arch: kernels_by_mode(path) for arch, path in listings.items()}
    failures = []

    h200 = CARDS["H200"]
    if "sm_90" not in kernels:
        print("model: no sm_90 listing: cannot calibrate")
        return 2
    k90 = kernels["sm_90"]
    alpha, GAMMA = calibrate(h200, k90)
    print("Throughput model (bench/model_throughput.py). ALPHA = %.3f, fitted on the H200's "
          "measured %s D=%d (%.1f TOPS); GAMMA = %.3f (occupancy), fitted on the H200's D=64 "
          "2- vs 3-block pairs; every other H200 row is a validation."
          % (alpha, CALIBRATION[0], CALIBRATION[1], MEASURED_H200[CALIBRATION], GAMMA))
    print("\nValidation on the H200 (sm_90 SASS, H200 rates), B=1 H=32 L=16384 non-causal:")
    print("  %-18s %4s %10s %10s %8s  %s" % ("mode", "D", "measured", "modelled", "error",
                                            "instr/tile  blocks/SM"))
    worst = 0.0
    for (mode, d), meas in MEASURED_H200.items():
        k = kernel_for(h200, k90, mode, d)
        if k is None:
            failures.append("no sm_90 kernel for %s D=%d" % (mode, d))
            continue
        tops, det = predict(h200, k, alpha, detail=True)
        err = (tops - meas) / meas
        if (mode, d) != CALIBRATION:
            worst = max(worst, abs(err))
        print("  %-18s %4d %10.1f %10.1f %+7.1f%%  %5d  %d%s" % (
            mode, d, meas, tops, 100 * err, det["instr"], det["blocks_per_sm"],
            "   (calibration)" if (mode, d) == CALIBRATION else ""))
    print("  worst validation error: %.1f %% (limit 15 %%)" % (100 * worst))
    if worst > 0.15:
        failures.append("H200 validation error %.1f %% > 15 %%" % (100 * worst))

    variants = load_variants(a.variant)
    if variants:
        report_variants(variants, alpha)

    for card_name in ("RTX 5090", "RTX 4090"):
        card = CARDS[card_name]
        ks = kernels.get(card["arch"])
        if not ks:
            print("\n%s: no %s listing" % (card_name, card["arch"]))
            continue
        print("\n%s (%s SASS), D=128 L=16384 non-causal, MODELLED TOPS (quantization included):"
              % (card_name, card["arch"]))
        print("  %-18s %9s  %-10s %6s %9s %9s %9s %s" % (
            "mode", "modelled", "goal", "instr", "tensor", "issue", "MUFU", "blocks/SM"))
        best, rows = None, []
        for mode in MODES:
            k = kernel_for(card, ks, mode, 128)
            if k is None:
                continue
            try:
                tops, det = predict(card, k, alpha, detail=True)
            except ValueError as e:
                print("  %-18s  (no rate: %s)" % (mode, e))
                continue
            rows.append((mode, det))
            print("  %-18s %9.0f  %-10s %6d %7.3fus %7.3fus %7.3fus %d%s" % (
                mode, tops, GOAL[mode], det["instr"], det["tensor_us"], det["issue_us"],
                det["mufu_us"], det["blocks_per_sm"], " (one V buffer)" if k.v1 else ""))
            if GOAL[mode] != "exact" and (best is None or tops > best[1]):
                best = (mode, tops, k)
        for name, rng in PUBLISHED.get(card_name, []):
            print("  published: %-38s %s (kernel only, 1K..32K)" % (name, rng))
        print_breakdown(rows)
        if best:
            print("  %s: fastest mode meeting its accuracy goal: %s, %.0f TOPS (modelled; H200 "
                  "validation error %.1f %%)" % (card_name, best[0], best[1], 100 * worst))
            # The same kernel with no instruction but its tensor ones, and with no MUFU: what
            # any cut of non-tensor instructions can reach in this model.
            only_tensor = predict(card, best[2], alpha, path=[
                o for o in executed_path(best[2]) if sass_loops.is_tensor(o)])
            print("  %s: the same kernel with zero non-tensor instructions would be modelled at "
                  "%.0f TOPS (the model's ceiling for it: tensor work does not overlap the rest)"
                  % (card_name, only_tensor))
            path = executed_path(best[2])
            pads = sum(1 for o in path if o == "NOP" or o.startswith("NOP."))
            no_pad = predict(card, best[2], alpha, path=[
                o for o in path if not (o == "NOP" or o.startswith("NOP."))])
            print("  %s: not counting its %d padding NOPs (spacing ptxas puts between back-to-back "
                  "MMAs, nearly absent from the sm_90 kernels ALPHA was fitted on): %.0f TOPS"
                  % (card_name, pads, no_pad))
            if variants and OVERLAP_ETA > 0:
                print("  %s: %s as it is (32 rows per warp, two blocks per SM) if its Q·Kᵀ were "
                      "pipelined as measured (OVERLAP_ETA %.3f; no such kernel fits the register "
                      "file): %.0f TOPS" % (card_name, best[0], OVERLAP_ETA,
                                           pipelined_what_if(card, best[2], alpha)))
            if card_name == "RTX 5090" and best[1] < 650:
                failures.append("RTX 5090: fastest mode %s modelled at %.0f < 650 TOPS"
                                % best[:2])
    for f in failures:
        print("model: %s: %s" % ("FAIL" if a.check or "validation" in f else "not met", f))
    if a.check_validation:
        return 1 if any("validation" in f for f in failures) else 0
    return 1 if (a.check and failures) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
