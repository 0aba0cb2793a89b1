#!/bin/sh
# What `sagebuild all` tells a person: the real output folder (never a placeholder), and each
# doctor warning by its check id, with --json's status showing a stage that warned.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-allmsg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
export SAGEBUILD_FAKE_GPUS=none
SB=$SAGEBUILD # the stages are this binary run again (see test_all_flow.sh)
if ! command -v nvcc > /dev/null 2>&1; then
    echo "needs a CUDA toolkit's nvcc on PATH (CI has one)"
    exit 77
fi
bin=$tmp/bin
mk_cmake "$bin"
mk_kernels "$tmp/share"
export SAGEBUILD_DATADIR=$tmp/share FAKE_CMAKE_LOG=$tmp/cmake.log FAKE_SELFTEST=skip
out=$tmp/out

# 1. The build stage names the output folder it uses, given or default.
PATH="$bin:$PATH" $SB all --arch sm_120a --out "$out" > "$tmp/o" 2>&1 || fail "all: $(cat "$tmp/o")"
grep -q '<out>' "$tmp/o" && fail "a placeholder where the path belongs: $(cat "$tmp/o")"
grep -q "$out/build.log" "$tmp/o" || fail "the build log's real path: $(cat "$tmp/o")"
PATH="$bin:$PATH" $SB all --arch sm_120a > "$tmp/o" 2>&1 || fail "all (default out): $(cat "$tmp/o")"
grep -q "$XDG_DATA_HOME/sagebuild/sageattn/build.log" "$tmp/o" ||
    fail "the default output folder's log: $(cat "$tmp/o")"

# 2. Each doctor warning on its own line, by check id; --json's status shows the warning stage.
$SB doctor --json > "$tmp/doctor.json" 2>/dev/null
ids=$(json_get "$tmp/doctor.json" "' '.join(c['id'] for c in d['checks'] if c['status'] == 'warn')")
[ -n "$ids" ] || fail "test premise: the doctor warns here (no GPU, no torch)"
PATH="$bin:$PATH" $SB all --arch sm_120a --out "$out" > "$tmp/o" 2>&1 || fail "all: $(cat "$tmp/o")"
for id in $ids; do
    grep -q "^      warning $id: " "$tmp/o" || fail "warning $id is not named: $(cat "$tmp/o")"
done
PATH="$bin:$PATH" $SB all --arch sm_120a --out "$out" --json > "$tmp/j" 2>&1
[ "$(json_get "$tmp/j" "d['status'], d['exit_code'], d['stages'][1]['status']")" = "warn 0 warn" ] ||
    fail "all --json status with a warning stage: $(json_get "$tmp/j" "d['status'], d['exit_code']")"
[ "$(json_get "$tmp/j" "' '.join(w['id'] for w in d['warnings'] if w['stage'] == 'doctor')")" = "$ids" ] ||
    fail "all --json warnings: $(json_get "$tmp/j" "d['warnings']")"
echo ok
