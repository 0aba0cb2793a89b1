#!/bin/sh
# Of several toolkits fetch-cuda installed, build takes the one matching the CUDA of torch in the
# python it is told about (--python PY; `all --python PY` passes it on), not python3's. Here
# python3's torch and PY's (a venv) are built for different CUDA releases, and a toolkit of each
# release is fetched; the fetched nvcc are fakes, never run to compile (stand-in cmake).
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-buildpy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
unset SAGEBUILD_PYTHON PYTHONPATH

# python3's torch is built for the CUDA of the nvcc on PATH, when there is one (so that the
# doctor `all` runs first finds the toolkit fitting and fetches nothing), PY's for 12.6.
real=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
sys_cuda=${real:-13.0}
[ "$sys_cuda" != 12.6 ] || { echo "skipped: the nvcc on PATH is 12.6, the release PY's torch needs"; exit 77; }

# python3 (the system python, its torch for $sys_cuda) and PY (a venv without pip, so `all`
# cannot install anything: only its build stage matters here; its torch for 12.6).
bin=$tmp/bin
two_pythons "$bin" "$sys_cuda" 12.6

mk_cmake "$bin"
mk_compiler "$bin" g++ 11.4.0
export PATH="$bin:$PATH"
mk_kernels "$tmp/share"
export SAGEBUILD_DATADIR=$tmp/share FAKE_CMAKE_LOG=$tmp/cmake.log
fetched=$XDG_DATA_HOME/sagebuild
mk_toolkit "$fetched/cuda-12.6.3" 12.6 12.6.85 11 "75 80 86 89 90"
mk_toolkit "$fetched/cuda-$sys_cuda.9" "$sys_cuda" "$sys_cuda.99" 11 "75 80 86 89 90 100 120"

chosen() { json_get "$1/build-record.json" "d['cuda_home']['path'], d['nvcc']['version']"; }
for_sys="$fetched/cuda-$sys_cuda.9 $sys_cuda.99"
for_py="$fetched/cuda-12.6.3 12.6.85"

# python3's torch decides without --python (the two pythons do disagree)
$SB build --arch sm_90 --out "$tmp/o1" > "$tmp/o" 2>&1 || fail "build: $(cat "$tmp/o")"
[ "$(chosen "$tmp/o1")" = "$for_sys" ] || fail "python3's torch: $(chosen "$tmp/o1")"

# build --python PY: PY's torch decides, and the note says why
$SB build --arch sm_90 --python "$py" --out "$tmp/o2" > "$tmp/o" 2>&1 || fail "build --python: $(cat "$tmp/o")"
[ "$(chosen "$tmp/o2")" = "$for_py" ] || fail "build --python PY: $(chosen "$tmp/o2"): $(cat "$tmp/o")"
grep -q "CUDA toolkit: $fetched/cuda-12.6.3, the fetched toolkit matching torch's CUDA" "$tmp/o" ||
    fail "build --python must say which toolkit and why: $(cat "$tmp/o")"
# --python wins over $SAGEBUILD_PYTHON, which otherwise stands in for python3
SAGEBUILD_PYTHON=python3 $SB build --arch sm_90 --python "$py" --out "$tmp/o3" > "$tmp/o" 2>&1 || fail "$(cat "$tmp/o")"
[ "$(chosen "$tmp/o3")" = "$for_py" ] || fail "--python over \$SAGEBUILD_PYTHON: $(chosen "$tmp/o3")"
SAGEBUILD_PYTHON=$py $SB build --arch sm_90 --out "$tmp/o4" > "$tmp/o" 2>&1 || fail "$(cat "$tmp/o")"
[ "$(chosen "$tmp/o4")" = "$for_py" ] || fail "\$SAGEBUILD_PYTHON: $(chosen "$tmp/o4")"

# all --python PY: its build stage is told PY. The doctor before it reads PY's torch as well
# (test_all_python.sh), and must find a real toolkit that fits it, the nvcc on PATH, to fetch
# nothing; so here the two torches swap releases: PY's is built for the nvcc on PATH's CUDA,
# python3's for 12.6, and of the two fetched toolkits the build must take PY's one.
if [ -z "$real" ]; then
    echo "skipped the all part: no nvcc on PATH for the doctor"
    echo ok
    exit 0
fi
mk_torch "$py_site" "$sys_cuda"
mk_torch "$sys_site" 12.6
SB=$SAGEBUILD # stages are this binary run again (see test_all_flow.sh)
SAGEBUILD_FAKE_GPUS=none FAKE_SELFTEST=skip $SB all --arch sm_90 --python "$py" --out "$tmp/o5" --json > "$tmp/j" 2>&1
[ "$(json_get "$tmp/j" "d['stages'][2]['status'], d['stages'][3]['stage'], d['stages'][3]['status']")" = "skipped build ok" ] ||
    fail "all --python: no fetch, then a build: $(cat "$tmp/j")"
[ "$(chosen "$tmp/o5")" = "$for_sys" ] || fail "all --python PY built with $(chosen "$tmp/o5")"
echo ok
