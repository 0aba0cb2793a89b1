#!/bin/sh
# sagebuild selftest against a stand-in sageattn-selftest: a skip is exit 77, verdicts become a
# table and exit codes, and a crash, a hang or garbage are clear errors (exit 2), never a hang.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env

out=$tmp/sageattn
mkdir -p "$out/bin"
cp "$helpers/fake-selftest.sh" "$out/bin/sageattn-selftest"
export FAKE_SELFTEST_ARGS=$tmp/args

# No GPU: the program says so, we exit 77 with its reason.
FAKE_SELFTEST=skip $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 77 ] || fail "skip: exit $rc, want 77: $(cat "$tmp/o")"
grep -q '^skipped: no GPU: cuInit returned 100' "$tmp/o" || fail "skip message: $(cat "$tmp/o")"
grep -q -- '--json' "$tmp/args" || fail "the program must be asked for --json"

# Options reach the program.
FAKE_SELFTEST=skip $SB selftest --build "$out" --device all --full > /dev/null 2>&1
grep -q -- '--device all' "$tmp/args" || fail "--device not passed: $(cat "$tmp/args")"
grep -q -- '--full' "$tmp/args" || fail "--full not passed"

# All modes pass: a table, the verdict and the recommended mode.
FAKE_SELFTEST=pass $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "pass: exit $rc: $(cat "$tmp/o")"
grep -q 'GPU 0: NVIDIA H200 (compute capability 9.0)' "$tmp/o" || fail "table header"
grep -q 'int8-fp16 *pass *0.999940 *0.0110 .* 503.2 *1.49x' "$tmp/o" || fail "int8-fp16 row: $(cat "$tmp/o")"
grep -q 'recommended mode: int8-fp16' "$tmp/o" || fail "recommended mode"

# A warning mode: exit 1; --json is valid JSON with every number.
FAKE_SELFTEST=warn $SB selftest --build "$out" --json > "$tmp/j" 2>"$tmp/e"
rc=$?
[ $rc = 1 ] || fail "warn: exit $rc"
[ "$(json_get "$tmp/j" "d['status'], d['devices'][0]['modes'][1]['verdict'], d['devices'][0]['modes'][0]['best_tops']")" = "warn warn 503.2" ] ||
    fail "normalised JSON: $(cat "$tmp/j")"

# A GPU the library has no code for: exit 2 and the build command to run.
FAKE_SELFTEST=nocode $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "nocode: exit $rc"
grep -q "fix: sagebuild build --arch sm_120a --out $out" "$tmp/o" || fail "build hint: $(cat "$tmp/o")"

# A crash, garbage, truncated JSON: exit 2 with what went wrong and the program's last words.
FAKE_SELFTEST=crash $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "crash: exit $rc"
grep -q 'crashed: killed by signal 11' "$tmp/o" || fail "crash message: $(cat "$tmp/o")"
grep -q 'running int8-fp16' "$tmp/o" || fail "crash output tail"
FAKE_SELFTEST=garbage $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "garbage: exit $rc"
grep -q 'did not print its report' "$tmp/o" || fail "garbage message: $(cat "$tmp/o")"
FAKE_SELFTEST=truncated $SB selftest --build "$out" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 2 ] || fail "truncated: exit $rc"
[ "$(json_get "$tmp/j" "d['status']")" = "error" ] || fail "truncated JSON status"

# A hang is cut by --timeout.
start=$(date +%s)
FAKE_SELFTEST=hang $SB selftest --build "$out" --timeout 1 > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "hang: exit $rc"
[ $(($(date +%s) - start)) -lt 20 ] || fail "hang was not cut by --timeout"
grep -q 'hung' "$tmp/o" || fail "hang message: $(cat "$tmp/o")"

# Nothing built: with no GPU that is still a skip; with a GPU, an error that says to build.
SAGEBUILD_FAKE_GPUS=none $SB selftest --build "$tmp/nothing" > "$tmp/o" 2>&1
rc=$?
[ $rc = 77 ] || fail "no build, no GPU: exit $rc: $(cat "$tmp/o")"
grep -q '^skipped: no GPU' "$tmp/o" || fail "no build, no GPU message"
SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" $SB selftest --build "$tmp/nothing" > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "no build, a GPU: exit $rc"
grep -q "sagebuild build --arch native --out $tmp/nothing" "$tmp/o" || fail "no build fix"

# The real program's JSON writer (kernels/selftest/st_report.c) through its own sample: what
# sagebuild reads must be what the program writes.
root=$(cd "$here/../.." && pwd)
if cc -std=c11 -D_GNU_SOURCE -I"$root/kernels/tests" -I"$root/kernels/include" -I"$root/kernels/selftest" \
    -o "$tmp/st_sample" "$root/kernels/tests/test_st_logic.c" "$root/kernels/tests/sa_check.c" \
    "$root/kernels/selftest/st_logic.c" "$root/kernels/selftest/st_report.c" -lm > "$tmp/cc.log" 2>&1 &&
    "$tmp/st_sample" "$tmp/sample.json" > /dev/null 2>&1; then
    FAKE_SELFTEST=file FAKE_SELFTEST_FILE=$tmp/sample.json FAKE_SELFTEST_RC=1 \
        $SB selftest --build "$out" > "$tmp/o" 2>&1
    rc=$?
    [ $rc = 1 ] || fail "the real writer's sample: exit $rc: $(cat "$tmp/o")"
    grep -q 'int8-fp8 *warn' "$tmp/o" || fail "the real writer's sample: table: $(cat "$tmp/o")"
    grep -q 'random L1000 d64 .*cos 0.999999 rel-L1 0.0500' "$tmp/o" || fail "failing case listed: $(cat "$tmp/o")"
    FAKE_SELFTEST=file FAKE_SELFTEST_FILE=$tmp/sample.json FAKE_SELFTEST_RC=1 \
        $SB selftest --build "$out" --json > "$tmp/j" 2>&1
    [ "$(json_get "$tmp/j" "d['devices'][0]['modes'][2]['bar_rel_l1'], d['devices'][0]['modes'][2]['cases'][0]['kind']")" = "0.04 random" ] ||
        fail "the real writer's sample: JSON: $(cat "$tmp/j")"
else
    echo "note: the kernels' self-test report sample did not build; its check is left out"
fi

# Usage errors.
$SB selftest --quick --full > /dev/null 2>&1
[ $? = 64 ] || fail "--quick with --full must be a usage error"
$SB selftest --device x > /dev/null 2>&1
[ $? = 64 ] || fail "--device x must be a usage error"
$SB selftest --help | grep -q 'skipped: no GPU' || fail "--help documents exit 77"
echo ok
