#!/bin/bash
# The drop-in's way into a user's python, checked on the GPU machine in one device call (run from
# the repository root, after `bash bench/pack_cli.sh` here; carry `bin` and `.device-carry-cli`):
#   1. `bin/sagebuild all --yes --python VENV` into a fresh venv that sees the system torch
#      (doctor → fetch when needed → build for the GPU → selftest → install → a real call on each
#      GPU next to torch SDPA), then the same with --json (up to date: no rebuild);
#   2. `bin/sagebuild doctor --python VENV sageattention`: the drop-in's archs, the GPU code read
#      from its library's .nv_fatbin, the package import;
#   3. the fat binary parser against cuobjdump: the SASS/PTX archs doctor reads from the built
#      libsageattn.so and from a module built here for sm_89 + compute_89 (an "upstream wheel
#      made on an RTX 4090"), next to `cuobjdump --list-elf --list-ptx` of the same files;
#   4. `pip uninstall sageattention` leaves no file behind.
# Results go to $OUT as one results.tgz; a summary is printed last.
#   bash bench/device_install.sh
set -o pipefail
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/sa-install}
mkdir -p "$OUT"
if [ -f .device-carry-cli/libs.tar.xz ]; then
    tar -C .device-carry-cli -xJf .device-carry-cli/libs.tar.xz
fi
export XDG_DATA_HOME=/tmp/sbi-data XDG_CACHE_HOME=/tmp/sbi-cache
rm -rf "$XDG_DATA_HOME" "$XDG_CACHE_HOME" /tmp/sbi-venv /tmp/sbi-upstream
summary=()
note() { summary+=("$*"); echo "== $*"; }

nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/gpu.txt"
# The system pip serves a venv made without one (an image without ensurepip).
python3 -m venv --system-site-packages /tmp/sbi-venv 2>"$OUT/venv.txt" ||
    python3 -m venv --without-pip --system-site-packages /tmp/sbi-venv
py=/tmp/sbi-venv/bin/python
# The image's torch may live outside the system site (a user site or a PYTHONPATH folder), which
# --system-site-packages does not carry: point the venv at the folder torch imports from.
if ! "$py" -c 'import torch' 2>/dev/null; then
    torch_site=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
    if [ -n "$torch_site" ]; then
        echo "$torch_site" >"$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/image-torch.pth"
        note "venv: torch from $torch_site (a .pth file: the image's torch is outside the system site)"
    fi
fi
note "venv: $($py -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)' 2>&1)"

start=$(date +%s)
bin/sagebuild all --yes --python "$py" 2>&1 | tee "$OUT/all.txt"
note "all --yes --python rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
grep -E '^\[.\] (install|call) |^ {16}GPU' "$OUT/all.txt" | while read -r line; do note "$line"; done
bin/sagebuild all --python "$py" --json >"$OUT/all.json" 2>"$OUT/all-json.err"
note "all --python --json rc=$?: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(s["stage"], s["status"]) for s in d["stages"]])' "$OUT/all.json" 2>&1)"

bin/sagebuild doctor --python "$py" sageattention -v >"$OUT/doctor.txt" 2>&1
note "doctor sageattention rc=$?"
cat "$OUT/doctor.txt"

# The parser against cuobjdump, on the library `all` built and on an sm_89-only module.
lib=$XDG_DATA_HOME/sagebuild/sageattn/lib/libsageattn.so
mkdir -p /tmp/sbi-upstream/site/sageattention /tmp/sbi-upstream/site/torch
printf "__version__ = '2.11.0'\ncuda = '13.0'\n" >/tmp/sbi-upstream/site/torch/version.py
cat >/tmp/sbi-upstream/k.cu <<'EOS'
__global__ void k(float *x) { x[threadIdx.x] *= 2.f; }
extern "C" void launch(float *x) { k<<<1, 32>>>(x); }
EOS
nvcc=$(ls -d "$XDG_DATA_HOME"/sagebuild/cuda-*/bin/nvcc 2>/dev/null | tail -n 1)
nvcc=${nvcc:-nvcc}
mod=/tmp/sbi-upstream/site/sageattention/_qattn_sm89.cpython-312-x86_64-linux-gnu.so
"$nvcc" -shared -Xcompiler -fPIC -gencode arch=compute_89,code=sm_89 \
    -gencode arch=compute_89,code=compute_89 -o "$mod" /tmp/sbi-upstream/k.cu >"$OUT/nvcc.txt" 2>&1
note "nvcc sm_89 module rc=$?"
: >/tmp/sbi-upstream/site/sageattention/__init__.py
bin/sagebuild doctor --torch-dir /tmp/sbi-upstream/site/torch sageattention.kernels -v \
    >"$OUT/doctor-upstream.txt" 2>&1
note "doctor on an sm_89-only module: $(grep 'sageattention.kernels' "$OUT/doctor-upstream.txt")"
for f in "$lib" "$mod"; do
    cuobjdump --list-elf --list-ptx "$f" >"$OUT/cuobjdump-$(basename "$f").txt" 2>&1
done
python3 - "$OUT" "$lib" "$mod" <<'EOS' | tee -a "$OUT/fatbin-compare.txt"
import re, sys
out, lib, mod = sys.argv[1:]
def cuobjdump(path):
    text = open("%s/cuobjdump-%s.txt" % (out, path.split("/")[-1])).read()
    sass = set(re.findall(r"\.(sm_\d+[af]?)\.cubin", text))
    ptx = set(re.findall(r"\.(sm_\d+[af]?)\.ptx", text))
    return sorted(sass), sorted("compute_" + p[3:] for p in ptx)
def doctor(text_file, key):
    for line in open(text_file):
        if key in line and "SASS" in line:
            m = re.search(r"SASS ([^;]*); PTX (.*)$", line.strip())
            return sorted(m.group(1).split()), sorted(m.group(2).split()) if m.group(2) != "none" else []
    return None
ok = True
for path, text, key in ((lib, out + "/doctor.txt", "_lib/libsageattn.so"),
                        (mod, out + "/doctor-upstream.txt", "_qattn_sm89")):
    c, d = cuobjdump(path), doctor(text, key)
    same = d is not None and c[0] == d[0] and (c[1] == d[1] or not c[1])
    ok &= same
    print("%s: cuobjdump SASS %s PTX %s | doctor %s -> %s" % (path.split("/")[-1], c[0], c[1], d, "same" if same else "DIFFERENT"))
print("fatbin parser vs cuobjdump:", "agree" if ok else "DISAGREE")
EOS
note "$(tail -n 1 "$OUT/fatbin-compare.txt")"

"$py" -m pip uninstall -y sageattention >"$OUT/uninstall.txt" 2>&1
note "pip uninstall rc=$?; left behind: $(find /tmp/sbi-venv/lib -maxdepth 3 -iname 'sageattention*' | tr '\n' ' ')"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
tar -C "$OUT" -czf /tmp/sa-install-results.tgz . && rm -rf "${OUT:?}"/* &&
    mv /tmp/sa-install-results.tgz "$OUT/results.tgz"
