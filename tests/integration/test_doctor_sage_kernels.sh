#!/bin/sh
# sageattention.kernels reads the GPU code in an installed sageattention's shared libraries (the
# ELF .nv_fatbin section, no cuobjdump) and compares it with the GPUs: an upstream build for an
# RTX 4090 on an RTX 5090 is "no kernel image"; PTX is JIT-compiled for newer archs (a warning);
# sagebuild's drop-in is reported with its archs (sageattention.install) and imported as a
# package (sageattention.imports).
. "$(dirname "$0")/doctor/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
REAL_ELF=$repo/tests/fuzz/corpus/fuzz_fatbin/nvcc13-sass-ptx-variants.elf # sm_86 sm_100a sm_120a; PTX compute_90a compute_120f
mk_gcc "$T/bin" gcc 13.3.0
mk_toolkit "$T/cuda" 13.0.88
mk_torch "$T/site" 2.11.0+cu130 13.0
SAGE=$T/site/sageattention
EXT=.cpython-311-x86_64-linux-gnu.so

# mk_so FILE KIND:ARCH[:FLAGS]...: an ELF64 whose .nv_fatbin holds one fat binary with these
# entries (kind 2 SASS, 1 PTX; flags 0x100011 marks an 'a' arch, as nvcc writes it).
mk_so() {
    "$ASSERT_PY" - "$@" <<'EOF'
import struct, sys
out, specs = sys.argv[1], sys.argv[2:]
entries = b""
for s in specs:
    kind, arch, *flags = s.split(":")
    flags = int(flags[0], 16) if flags else 0x11
    payload = b"\xcc" * 16
    entries += struct.pack("<HHIQIIHHIIIQQQ", int(kind), 0x101, 64, len(payload), 0, 0, 8, 1,
                           int(arch), 0, 0, flags, 0, 0) + payload
fatbin = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entries)) + entries
names = b"\0.nv_fatbin\0.shstrtab\0"
sec_off = 64
str_off = sec_off + len(fatbin)
sh_off = (str_off + len(names) + 7) // 8 * 8
hdr = b"\x7fELF\x02\x01\x01" + b"\0" * 9
hdr += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, sh_off, 0, 64, 56, 0, 64, 3, 2)
body = hdr + fatbin + names
body += b"\0" * (sh_off - len(body))
sh = b"\0" * 64
sh += struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, sec_off, len(fatbin), 0, 0, 8, 0)
sh += struct.pack("<IIQQQQIIQQ", 12, 3, 0, 0, str_off, len(names), 0, 0, 1, 0)
open(out, "wb").write(body + sh)
EOF
}
RTX5090="580.65.06;NVIDIA GeForce RTX 5090:12.0"
RTX4090="580.65.06;NVIDIA GeForce RTX 4090:8.9"
H200="580.65.06;NVIDIA H200:9.0"
run() { FAKE_GPUS=$1 doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention; }

doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention.kernels
expect sageattention.kernels skip "not installed"

# Upstream built for an RTX 4090: SASS sm_89 only.
mkdir -p "$SAGE"
: > "$SAGE/__init__.py"
mk_so "$SAGE/_qattn_sm89$EXT" 2:89
mk_so "$SAGE/_fused$EXT" 2:89
mkdir -p "$T/site/sageattention-2.2.0.dist-info"
printf 'Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\n' > "$T/site/sageattention-2.2.0.dist-info/METADATA"
run "$RTX4090"
expect sageattention.kernels ok "sm_89 on a 4090"
expect_in sageattention.kernels "_qattn_sm89$EXT" "SASS sm_89; PTX none" "evidence per module"
run "$RTX5090"
expect sageattention.kernels error "sm_89 on a 5090"
expect_in sageattention.kernels summary "no kernel image for NVIDIA GeForce RTX 5090 (sm_120) in _" "sm_89 on a 5090"
expect_in sageattention.kernels summary "no kernel image is available for execution on the device" "sm_89 on a 5090"
expect_in sageattention.kernels fix "sagebuild install --python" "sm_89 on a 5090"
# PTX for compute_89 is JIT-compiled for sm_120: a warning that says so.
mk_so "$SAGE/_qattn_sm89$EXT" 2:89 1:89
mk_so "$SAGE/_fused$EXT" 2:89 1:89
run "$RTX5090"
expect sageattention.kernels warn "PTX on a 5090"
expect_in sageattention.kernels summary "JIT-compiling compute_89 PTX" "PTX on a 5090"
# An H200 loads _qattn_sm90: sm_90a SASS there is fine; the sm_89 modules do not matter.
mk_so "$SAGE/_qattn_sm90$EXT" 2:90:100011
mk_so "$SAGE/_fused$EXT" 2:89 2:90:100011
run "$H200"
expect sageattention.kernels ok "sm_90a on an H200"
expect_in sageattention.kernels summary "NVIDIA H200: sm_90a" "sm_90a on an H200"
# sm_90a SASS runs on nothing but 9.0 (a hypothetical module set holding only it).
rm -f "$SAGE"/*.so
mk_so "$SAGE/_qattn_sm89$EXT" 2:90:100011
run "$RTX5090"
expect sageattention.kernels error "sm_90a on a 5090"
# A library that is not an ELF file is named, not a crash; no GPU: the archs, nothing to compare.
printf 'garbage' > "$SAGE/_broken$EXT"
run "580.65.06"
expect sageattention.kernels skip "no GPU"
expect_in sageattention.kernels "_broken$EXT" "not an ELF file" "garbage module"
# The real thing: what nvcc 13 wrote for sm_86, sm_100a, sm_120a and PTX compute_90a/120f.
rm -f "$SAGE"/*.so
cp "$REAL_ELF" "$SAGE/_qattn_sm89$EXT"
run "$RTX5090"
expect sageattention.kernels ok "nvcc fatbin on a 5090"
expect_in sageattention.kernels "_qattn_sm89$EXT" "SASS sm_86 sm_100a sm_120a; PTX compute_90a compute_120f" "nvcc fatbin"
FAKE_GPUS="580.65.06;NVIDIA GeForce RTX 5060:12.1" doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention.kernels
expect sageattention.kernels warn "nvcc fatbin on sm_121: compute_120f PTX only"

# sagebuild's drop-in: archs from its build record against the GPUs, GPU code from its library.
rm -rf "$SAGE" "$T"/site/sageattention-*.dist-info
mkdir -p "$SAGE/_lib" "$T/site/sageattention-2.2.0+sagebuild.0.1.0.dist-info"
printf 'Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0+sagebuild.0.1.0\n' > "$T/site/sageattention-2.2.0+sagebuild.0.1.0.dist-info/METADATA"
printf '__version__ = "2.2.0+sagebuild.0.1.0"\n' > "$SAGE/__init__.py"
cp "$REAL_ELF" "$SAGE/_lib/libsageattn.so"
printf '{"schema": 1, "sagebuild_version": "0.1.0", "archs": "sm_86,sm_100a,sm_120a", "head_dims": "64,128"}\n' > "$SAGE/_lib/build-record.json"
run "$RTX5090"
expect sageattention.install ok "drop-in on a 5090"
expect_in sageattention.install summary "sagebuild's drop-in) with kernels for sm_86,sm_100a,sm_120a" "drop-in on a 5090"
expect_in sageattention.install recommendation "none" "drop-in without recommendation"
expect sageattention.kernels ok "drop-in kernels on a 5090"
expect_in sageattention.kernels "_lib/libsageattn.so" "SASS sm_86 sm_100a sm_120a" "drop-in evidence"
run "$H200"
expect sageattention.install error "drop-in on an H200"
expect_in sageattention.install summary "none for NVIDIA H200 (sm_90)" "drop-in on an H200"
expect_in sageattention.install fix "sagebuild install --python" "drop-in on an H200"
expect sageattention.kernels warn "drop-in on an H200: compute_90a PTX"
run "580.65.06"
expect sageattention.install ok "drop-in, no GPU"
# without its library
rm "$SAGE/_lib/libsageattn.so"
run "$RTX5090"
expect sageattention.install error "drop-in without its library"
cp "$REAL_ELF" "$SAGE/_lib/libsageattn.so"

# --python imports the drop-in as a package (no compiled modules to import one by one).
REAL_PY=$("$ASSERT_PY" -c 'import sys; print(sys.executable)')
echo 'raise SystemExit("torch must not be imported")' > "$T/site/torch/__init__.py"
DOCTOR_ENV="PYTHONPATH=$T/site" FAKE_GPUS=$RTX5090 doctor --python "$REAL_PY" --cuda-home "$T/cuda" sageattention
expect sageattention.imports ok "drop-in import"
expect_in sageattention.imports version "2.2.0+sagebuild.0.1.0" "drop-in import"
printf 'raise ImportError("libsageattn.so: cannot open shared object file")\n' > "$SAGE/__init__.py"
DOCTOR_ENV="PYTHONPATH=$T/site" FAKE_GPUS=$RTX5090 doctor --python "$REAL_PY" --cuda-home "$T/cuda" sageattention.imports
expect sageattention.imports error "drop-in import error"
expect_in sageattention.imports stderr "cannot open shared object file" "drop-in import error"
finish
