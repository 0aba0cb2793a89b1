#!/bin/sh
# `all --python PY` judges every stage by PY's torch, not python3's: the doctor compares PY's
# torch's CUDA with nvcc, fetch-cuda fetches the release PY's torch was built for, and the build
# uses that toolkit; `doctor`, `fetch-cuda` and `env` take the same --python PY (default
# $SAGEBUILD_PYTHON, else python3) on their own.
#
# python3's torch here is built for the CUDA of the toolkit installed on this machine (so, for
# python3, that toolkit fits and nothing is fetched), PY's torch (a venv) for a release of
# another major version, which the toolkit does not fit. The local mirror offers that release:
# the test mirror's archives under a manifest labelled with it (the archives hold the installed
# toolkit, so the fetched tree is a real one that passes fetch-cuda's compile-and-link check).
# The build runs a stand-in cmake: which nvcc it is given is the point, not the kernels.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
tmp=$T
. "$HERE/build/lib.sh" # SB: the ASan build when there is one
sandbox_env
export XDG_DATA_HOME="$T/data" SAGEBUILD_DATADIR="$REPO" SAGEBUILD_FAKE_GPUS=none FAKE_SELFTEST=skip
unset SAGEBUILD_PYTHON PYTHONPATH

sys_cuda=$("$root/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
[ -n "$sys_cuda" ] || fail "no release in $root/bin/nvcc --version"
case $sys_cuda in
13.*) py_cuda=12.9 ;;
*) py_cuda=13.0 ;;
esac
py_label=$py_cuda.9 # newer than any bundled $py_cuda.x, so the mirror's is the one resolved

# The mirror: the test mirror's archive folders, its manifest, and the same manifest relabelled
# as $py_label (with the first, a fetch for python3's torch stays on this mirror too).
mkdir -p "$T/mirror"
for d in "$MIRROR_DIR"/*/ "$MANIFEST"; do ln -s "$d" "$T/mirror/$(basename "$d")"; done
rm -f "$T/mirror/redistrib_$py_label.json"
python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
d["release_label"]=sys.argv[3]
json.dump(d, open(sys.argv[2], "w"), indent=1)' "$MANIFEST" "$T/mirror/redistrib_$py_label.json" "$py_label" ||
    fail "relabelling the manifest"
MIRROR_DIR=$T/mirror
server_start
export SAGEBUILD_MIRRORS="$M/ok/"

# python3 (the system python, its torch for $sys_cuda) and PY (a venv without pip, so that
# `all` installs nothing anywhere: its install stage stops at "no pip"; the stages before it are
# what this test is about; its torch for $py_cuda).
bin=$T/bin
two_pythons "$bin" "$sys_cuda" "$py_cuda"
mk_cmake "$bin"
# The nvcc torch's rules find is the installed toolkit's (CUDA_HOME is unset by sandbox_env).
export PATH="$bin:$root/bin:$PATH"
fetched=$XDG_DATA_HOME/sagebuild

# check ID KEY FILE: the evidence KEY of doctor check ID in the doctor JSON FILE, after its status
check() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["checks"] if c["id"]==sys.argv[2]][0]
print(c["status"], c["evidence"].get(sys.argv[3]))' "$3" "$1" "$2"
}

# doctor: python3's torch, unless --python PY or $SAGEBUILD_PYTHON names another.
$SB doctor --json torch.cuda toolkit.version_match > "$T/d1" 2>&1
[ "$(check torch.cuda cuda "$T/d1") $(check toolkit.version_match torch_cuda "$T/d1")" = "ok $sys_cuda ok $sys_cuda" ] ||
    fail "doctor reads python3's torch: $(cat "$T/d1")"
$SB doctor --python "$py" --json torch.cuda toolkit.version_match > "$T/d2" 2>&1
[ "$(check torch.cuda cuda "$T/d2") $(check toolkit.version_match torch_cuda "$T/d2")" = "ok $py_cuda error $py_cuda" ] ||
    fail "doctor --python PY must read PY's torch: $(cat "$T/d2")"
SAGEBUILD_PYTHON=$py $SB doctor --json torch.cuda > "$T/d3" 2>&1
[ "$(check torch.cuda cuda "$T/d3")" = "ok $py_cuda" ] || fail "doctor with \$SAGEBUILD_PYTHON: $(cat "$T/d3")"
SAGEBUILD_PYTHON=$py $SB doctor --python python3 --json torch.cuda > "$T/d4" 2>&1
[ "$(check torch.cuda cuda "$T/d4")" = "ok $sys_cuda" ] || fail "--python over \$SAGEBUILD_PYTHON: $(cat "$T/d4")"

# fetch-cuda (a dry run: the plan only): the release of the torch in --python PY.
$SB fetch-cuda --python "$py" --dry-run --json > "$T/f1" 2> "$T/f1.err" ||
    fail "fetch-cuda --python --dry-run: $(cat "$T/f1" "$T/f1.err")"
[ "$(json_get "$T/f1" "d['release']")" = "$py_label" ] || fail "fetch-cuda --python PY planned $(cat "$T/f1")"
SAGEBUILD_PYTHON=$py $SB fetch-cuda --dry-run --json > "$T/f2" 2> "$T/f2.err" || fail "$(cat "$T/f2.err")"
[ "$(json_get "$T/f2" "d['release']")" = "$py_label" ] || fail "fetch-cuda with \$SAGEBUILD_PYTHON: $(cat "$T/f2")"
$SB fetch-cuda --dry-run --json > "$T/f3" 2> "$T/f3.err" || fail "$(cat "$T/f3.err")"
json_get "$T/f3" "d['release']" | grep -q "^$sys_cuda\." || fail "fetch-cuda for python3's torch: $(cat "$T/f3")"

# env with nothing fetched: whether the toolkit torch's rules find fits is asked of PY's torch.
$SB env --json > "$T/e1" 2> "$T/e1.err" || fail "env, python3's torch: $(cat "$T/e1" "$T/e1.err")"
[ "$(json_get "$T/e1" "d['found_by']")" = "torch's rules (nvcc on PATH)" ] || fail "env: $(cat "$T/e1")"
$SB env --python "$py" --json > "$T/e2" 2> "$T/e2.err"
rc=$?
[ $rc = 2 ] || fail "env --python PY: exit $rc, expected 2 (the toolkit does not fit PY's torch): $(cat "$T/e2" "$T/e2.err")"
grep -q "toolkit.version_match" "$T/e2.err" || fail "env --python PY must say why: $(cat "$T/e2.err")"
grep -q "fix: sagebuild fetch-cuda --python $py " "$T/e2.err" || fail "env's fix must fetch for PY: $(cat "$T/e2.err")"

# all --python PY: the doctor finds the toolkit unfit for PY's torch, fetch-cuda fetches PY's
# release, and the build uses it.
# The stages are this binary run again: the plain build, as test_all_flow.sh says.
"$SAGEBUILD" all --arch sm_80 --yes --python "$py" --out "$T/out" --json > "$T/all.json" 2> "$T/all.err"
. "$(dirname "$0")/build/all_stage.sh"
stage() { all_stage "$T/all.json" "$@"; } # over all's JSON of this test
stage doctor "[c['evidence'].get('cuda') for c in o['checks'] if c['id']=='torch.cuda'][0]" | grep -qx "$py_cuda" ||
    fail "all --python PY: the doctor read another torch: $(stage doctor 'o')"
[ "$(stage doctor "s['status'], [f['id'] for f in p['findings'] if f['status']=='error'] == ['toolkit.version_match']")" = "warn True" ] ||
    fail "all --python PY: the doctor must find only nvcc vs PY's torch: $(stage doctor 's')"
[ "$(stage fetch-cuda "s['status'], p['release'], p['prefix']")" = "ok $py_label $fetched/cuda-$py_label" ] ||
    fail "all --python PY must fetch PY's release: $(stage fetch-cuda 's') $(cat "$T/all.err")"
[ "$(stage build "s['status'], p['archs']")" = "ok sm_80" ] || fail "all --python PY: build: $(stage build 's')"
[ "$(json_get "$T/out/build-record.json" "d['cuda_home']['path']")" = "$fetched/cuda-$py_label" ] ||
    fail "all --python PY built with $(json_get "$T/out/build-record.json" "d['cuda_home']")"
[ "$(stage install "s['status']")" = error ] || fail "the venv has no pip: $(stage install 's')"

# env with two toolkits fetched: the one for PY's torch with --python PY or $SAGEBUILD_PYTHON,
# else python3's (a stand-in toolkit of python3's release beside the real fetched one).
mk_toolkit "$fetched/cuda-$sys_cuda.9" "$sys_cuda" "$sys_cuda.99" 99 "75 80 86 89 90"
$SB env --json > "$T/e3" 2> "$T/e3.err"
[ "$(json_get "$T/e3" "d['prefix']")" = "$fetched/cuda-$sys_cuda.9" ] || fail "env: $(cat "$T/e3" "$T/e3.err")"
$SB env --python "$py" --json > "$T/e4" 2> "$T/e4.err"
[ "$(json_get "$T/e4" "d['prefix']")" = "$fetched/cuda-$py_label" ] || fail "env --python PY: $(cat "$T/e4" "$T/e4.err")"
SAGEBUILD_PYTHON=$py $SB env --json > "$T/e5" 2> "$T/e5.err"
[ "$(json_get "$T/e5" "d['prefix']")" = "$fetched/cuda-$py_label" ] || fail "env with \$SAGEBUILD_PYTHON: $(cat "$T/e5")"
echo ok
