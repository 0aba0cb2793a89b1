#!/bin/sh
# An existing SageAttention install: compiled modules per GPU, a wheel built for another torch
# or CUDA, and --python importing each module to show the loader's
# real error (core.py's bare except hides it).
. "$(dirname "$0")/doctor/lib.sh"
mk_gcc "$T/bin" gcc 13.3.0
mk_toolkit "$T/cuda" 13.0.88
mk_torch "$T/site" 2.11.0+cu130 13.0
SAGE=$T/site/sageattention
sage_version() {
    rm -rf "$T"/site/sageattention-*.dist-info
    mkdir -p "$T/site/sageattention-${1%%+*}.dist-info"
    printf 'Metadata-Version: 2.1\nName: sageattention\nVersion: %s\n' "$1" \
        > "$T/site/sageattention-${1%%+*}.dist-info/METADATA"
}

doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention
expect sageattention.install skip "not installed"
expect sageattention.imports skip "not installed"

mkdir -p "$SAGE"
: > "$SAGE/__init__.py"
for m in _qattn_sm80 _qattn_sm89 _fused; do : > "$SAGE/$m.cpython-311-x86_64-linux-gnu.so"; done
sage_version 2.2.0+cu130torch2.11.0
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention
expect sageattention.install ok "complete for sm_120"
expect_in sageattention.install modules "_fused _qattn_sm80 _qattn_sm89" "complete for sm_120"
expect sageattention.imports skip "no --python"

# #11: an H100 needs _qattn_sm90, which this build lacks.
FAKE_GPUS="580.65.06;NVIDIA H100 80GB HBM3:9.0" doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention.install
expect sageattention.install warn "#11"
expect_in sageattention.install summary "_qattn_sm90 missing" "#11"
expect_in sageattention.install fix "TORCH_CUDA_ARCH_LIST='9.0'" "#11"
expect_in sageattention.install fix "--no-build-isolation" "#11"
# sm_100 has no dispatch branch in SageAttention at all.
FAKE_GPUS="580.65.06;NVIDIA B200:10.0" doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention.install
expect sageattention.install warn "sm_100"

# #10/#12: a wheel for torch 2.7.1 under torch 2.11, and one for CUDA 12.8 under a cu130 torch.
sage_version 2.2.0+cu128torch2.7.1
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention.install
expect sageattention.install error "#10 other torch"
expect_in sageattention.install summary "built for torch 2.7.1" "#10 other torch"
sage_version 2.2.0+cu128torch2.11.0
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" sageattention.install
expect sageattention.install error "#12 other CUDA"
sage_version 2.2.0+cu130torch2.11.0

# --python imports each module; the stand-in reports what a real loader says.
script "$T/py" "case \"\$2\" in
*import_module*) shift 2
  for m; do
    case \$m in
    _qattn_sm89) printf '%s\tImportError: %s/_qattn_sm89.so: undefined symbol: _ZN3c104cuda9SetDeviceEab\n' \"\$m\" \"$SAGE\" ;;
    *) printf '%s\tok\n' \"\$m\" ;;
    esac
  done ;;
*find_spec*) printf 'python\t3.11.7\ntorch\t$T/site/torch\nsageattention\t$SAGE\n' ;;
esac"
doctor --python "$T/py" --cuda-home "$T/cuda" sageattention
expect sageattention.imports error "#10 import"
expect_in sageattention.imports summary "undefined symbol: _ZN3c104cuda9SetDeviceEab" "#10 import"
expect_in sageattention.imports _fused ok "#10 import"
expect_in sageattention.imports fix "$T/py -m pip install --no-build-isolation" "#10 import"
# All modules import.
script "$T/py" "case \"\$2\" in
*import_module*) shift 2; for m; do printf '%s\tok\n' \"\$m\"; done ;;
*find_spec*) printf 'python\t3.11.7\ntorch\t$T/site/torch\nsageattention\t$SAGE\n' ;;
esac"
doctor --python "$T/py" --cuda-home "$T/cuda" sageattention.imports
expect sageattention.imports ok "imports"
# A python that dies while importing is an error with its cause, not a hang or a crash.
script "$T/py" "case \"\$2\" in
*import_module*) echo 'Fatal Python error: Segmentation fault' >&2; kill -SEGV \$\$ ;;
*find_spec*) printf 'python\t3.11.7\ntorch\t$T/site/torch\nsageattention\t$SAGE\n' ;;
esac"
doctor --python "$T/py" --cuda-home "$T/cuda" sageattention.imports
expect sageattention.imports error "import crash"
expect_in sageattention.imports summary "signal" "import crash"

# The same through a real python: find_spec locates torch and sageattention on PYTHONPATH
# without importing torch, and importing a broken extension shows the loader's own words.
REAL_PY=$("$ASSERT_PY" -c 'import sys; print(sys.executable)')
EXT=$("$REAL_PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
: > "$T/site/torch/__init__.py"
echo 'raise SystemExit("torch must not be imported by the doctor")' > "$T/site/torch/__init__.py"
rm -f "$SAGE"/*.so
printf 'not an ELF file' > "$SAGE/_qattn_sm89$EXT"
printf 'not an ELF file' > "$SAGE/_fused$EXT"
DOCTOR_ENV="PYTHONPATH=$T/site" doctor --python "$REAL_PY" --cuda-home "$T/cuda" torch.found sageattention
expect torch.found ok "real python"
expect_in torch.found dir "$T/site/torch" "real python"
expect sageattention.install ok "real python: modules for sm_120"
expect sageattention.imports error "real python: broken .so"
expect_in sageattention.imports summary "ImportError" "real python: broken .so"
expect_in sageattention.imports _qattn_sm89 "$SAGE/_qattn_sm89$EXT" "real python: the loader names the file"
finish
