# Shared helpers for the doctor scenario tests: fake toolchain trees in a temp dir (shell scripts
# standing in for nvcc, gcc, ninja and python; real header layouts written out), a doctor run
# in a controlled environment, and assertions on its --json output.
set -u
SB=${SAGEBUILD_SAN:-${SAGEBUILD:?SAGEBUILD must name bin/sagebuild}}
ASSERT_PY=$(command -v python3 || true)
[ -n "$ASSERT_PY" ] || { echo "skipped: python3 is needed to read the JSON"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/sb-doctor.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/home"
FAILS=0

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
finish() { [ "$FAILS" = 0 ] && { echo ok; exit 0; }; echo "$FAILS failure(s)"; exit 1; }

script() { # script PATH BODY: an executable /bin/sh script
    mkdir -p "$(dirname "$1")"
    printf '#!/bin/sh\n%s\n' "$2" > "$1"
    chmod 755 "$1"
}

# mk_toolkit DIR X.Y.Z [GCC_MAX] [ARCHS]: a CUDA toolkit tree with everything torch and nvcc need.
mk_toolkit() {
    d=$1 v=$2 gmax=${3:-15} archs=${4:-"compute_75 compute_80 compute_86 compute_89 compute_90 compute_100 compute_120"}
    rel=${v%.*}; major=${v%%.*}; minor=${rel#*.}
    script "$d/bin/nvcc" "case \"\$1\" in
--version) printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release $rel, V$v\nBuild cuda_$rel\n' ;;
--list-gpu-arch) for a in $archs; do echo \$a; done ;;
*) exit 1 ;;
esac"
    script "$d/nvvm/bin/cicc" "exit 0"
    mkdir -p "$d/nvvm/libdevice" "$d/include/crt" "$d/include/nv/target" "$d/lib64/stubs"
    : > "$d/nvvm/libdevice/libdevice.10.bc"
    cat > "$d/include/crt/host_config.h" <<EOH
#if defined(__GNUC__)
#if __GNUC__ > $gmax
#error -- unsupported GNU version! gcc versions later than $gmax are not supported!
#endif /* __GNUC__ > $gmax */
#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__)
#if (__clang_major__ >= 21) || (__clang_major__ < 3)
#error -- unsupported clang version! clang version must be less than 21 and greater than 3.2 .
#endif
#endif
#endif
EOH
    : > "$d/include/cuda_runtime.h"
    ver=$((major * 1000 + minor * 10))
    printf '#define CUDA_VERSION %s\n' "$ver" > "$d/include/cuda.h"
    printf '#define CUDART_VERSION  %s\n' "$ver" > "$d/include/cuda_runtime_api.h"
    : > "$d/lib64/libcudart.so"
    : > "$d/lib64/stubs/libcuda.so"
}

# mk_torch SITE VERSION CUDA|None: a torch package with its generated version.py.
mk_torch() {
    mkdir -p "$1/torch"
    if [ "$3" = None ]; then c=None; else c="'$3'"; fi
    printf "from typing import Optional\n\n__version__ = '%s'\ndebug = False\ncuda: Optional[str] = %s\ngit_version = '0123456789abcdef'\nhip: Optional[str] = None\n" "$2" "$c" > "$1/torch/version.py"
}

# mk_gcc DIR NAME VERSION: a compiler that answers -dumpfullversion.
mk_gcc() { script "$1/$2" "echo $3"; }

# doctor ARGS...: runs the doctor in a clean environment; JSON in $T/out.json, rc in $RC.
# Extra variables come from DOCTOR_ENV (NAME=value words).
doctor() {
    # shellcheck disable=SC2086
    env -i HOME="$T/home" PATH="$T/bin" LANG=C SAGEBUILD_FAKE_GPUS="${FAKE_GPUS-580.65.06;NVIDIA GeForce RTX 5090:12.0}" \
        ${DOCTOR_ENV:-} "$SB" doctor --json "$@" > "$T/out.json" 2> "$T/err.txt"
    RC=$?
}

# status ID: the status of one check in the last run ("missing" when absent).
status() {
    "$ASSERT_PY" -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(next((c["status"] for c in d["checks"] if c["id"]==sys.argv[2]), "missing"))' "$T/out.json" "$1" 2>/dev/null || echo "unparsable"
}

# field ID KEY: summary / fix / an evidence key of one check.
field() {
    "$ASSERT_PY" -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=next(c for c in d["checks"] if c["id"]==sys.argv[2])
v=c.get(sys.argv[3], c["evidence"].get(sys.argv[3]))
print("" if v is None else v)' "$T/out.json" "$1" "$2" 2>/dev/null
}

expect() { # expect ID STATUS [LABEL]
    got=$(status "$1")
    [ "$got" = "$2" ] || { fail "${3:-scenario}: $1 is '$got', expected '$2' ($(field "$1" summary))"; cat "$T/err.txt"; }
}

expect_in() { # expect_in ID KEY TEXT [LABEL]
    case "$(field "$1" "$2")" in
    *"$3"*) ;;
    *) fail "${4:-scenario}: $1 $2 lacks '$3': $(field "$1" "$2")" ;;
    esac
}

expect_rc() { [ "$RC" = "$1" ] || fail "${2:-scenario}: exit $RC, expected $1"; }
