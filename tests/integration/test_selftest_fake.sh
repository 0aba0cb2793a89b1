#!/bin/sh
# sagebuild selftest against a stand-in sageattn-selftest: a skip is exit 77, the safe and goal
# judgements become a table and exit codes, the recommended mode lands in
# <build>/recommendation.json (atomically, for the library's SHA-256), and a crash, a hang or
# garbage are clear errors (exit 2), never a hang.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env

out=$tmp/sageattn
mkdir -p "$out/bin" "$out/lib"
cp "$helpers/fake-selftest.sh" "$out/bin/sageattn-selftest"
printf 'not really a library\n' > "$out/lib/libsageattn.so.1"
ln -s libsageattn.so.1 "$out/lib/libsageattn.so"
lib_sha=$(sha256sum "$out/lib/libsageattn.so.1" | cut -d' ' -f1)
export FAKE_SELFTEST_ARGS=$tmp/args
rec=$out/recommendation.json
root=$(cd "$here/../.." && pwd)

# No GPU: the program says so, we exit 77 with its reason.
FAKE_SELFTEST=skip $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 77 ] || fail "skip: exit $rc, want 77: $(cat "$tmp/o")"
grep -q '^skipped: no GPU: cuInit returned 100' "$tmp/o" || fail "skip message: $(cat "$tmp/o")"
grep -q -- '--json' "$tmp/args" || fail "the program must be asked for --json"
[ ! -e "$rec" ] || fail "a skipped run must not write a recommendation"

# Options reach the program.
FAKE_SELFTEST=skip $SB selftest --build "$out" --device all --full > /dev/null 2>&1
grep -q -- '--device all' "$tmp/args" || fail "--device not passed: $(cat "$tmp/args")"
grep -q -- '--full' "$tmp/args" || fail "--full not passed"

# Every mode safe (int8-fp8's missed goal is a note): a table with both judgements, the
# recommended mode (the fastest safe one), and the record for the package.
FAKE_SELFTEST=pass $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "pass: exit $rc: $(cat "$tmp/o")"
grep -q 'GPU 0: NVIDIA H200 (compute capability 9.0)' "$tmp/o" || fail "table header"
grep -q 'int8-fp16 *yes *met *0.999940 *0.0110 .* 503.2 *1.49x' "$tmp/o" || fail "int8-fp16 row: $(cat "$tmp/o")"
grep -q 'int8-fp8 *yes *missed' "$tmp/o" || fail "int8-fp8 row: $(cat "$tmp/o")"
grep -q 'goal note: q-x10 L1024 d128' "$tmp/o" || fail "goal note: $(cat "$tmp/o")"
grep -q 'recommended mode: int8-fp16' "$tmp/o" || fail "recommended mode"
grep -q 'why: int8-fp16 is safe and the fastest: 1.49x fp16 at L16384 D128' "$tmp/o" || fail "why: $(cat "$tmp/o")"
grep -q "recommendation recorded in $rec" "$tmp/o" || fail "record line: $(cat "$tmp/o")"
[ "$(json_get "$rec" "d['schema'], d['kind'], d['library_sha256'] == '$lib_sha', d['written_by'].startswith('sagebuild selftest '), len(d['gpus'])")" = "1 sageattn-recommendation True True 1" ] ||
    fail "record: $(cat "$rec")"
[ "$(json_get "$rec" "*[d['gpus'][0][k] for k in ('index', 'name', 'cc', 'uuid', 'mode', 'runner_up')], ','.join(d['gpus'][0]['safe_modes']), d['gpus'][0]['tops']['int8-fp16'], d['gpus'][0]['speedup_vs_fp16']")" = \
    "0 NVIDIA H200 9.0 GPU-0a1b2c3d-0000-1111-2222-333344445555 int8-fp16 int8-fp8 int8-fp16,int8-fp8,fp16 503.2 1.49" ] ||
    fail "record entry: $(cat "$rec")"
python3 -c "import datetime,json,sys; datetime.datetime.strptime(json.load(open(sys.argv[1]))['date'], '%Y-%m-%dT%H:%M:%SZ')" "$rec" ||
    fail "record date is not ISO 8601 UTC"
[ -z "$(ls "$out" | grep '\.tmp\.')" ] || fail "a temporary file was left: $(ls "$out")"

# A mode outside the safe bar: exit 1, still the fastest safe mode; --json is valid JSON with
# every number and both judgements.
FAKE_SELFTEST=warn $SB selftest --build "$out" --json > "$tmp/j" 2>"$tmp/e"
rc=$?
[ $rc = 1 ] || fail "warn: exit $rc"
[ "$(json_get "$tmp/j" "d['status'], d['devices'][0]['modes'][1]['verdict'], d['devices'][0]['modes'][0]['best_tops']")" = "warn warn 503.2" ] ||
    fail "normalised JSON: $(cat "$tmp/j")"
[ "$(json_get "$tmp/j" "*[d['devices'][0]['modes'][1][k] for k in ('safe', 'unsafe_reasons', 'goal')], d['devices'][0]['recommended']['mode'], d['devices'][0]['recommended']['runner_up'], d['recommendation_record'] == '$rec'")" = \
    "False ['q-x10 L1024 d128: cos 0.998500 < 0.999'] missed int8-fp16 fp16 True" ] ||
    fail "judgements in the JSON: $(cat "$tmp/j")"
[ "$(json_get "$rec" "d['gpus'][0]['mode'], d['gpus'][0]['runner_up'], ','.join(d['gpus'][0]['safe_modes'])")" = "int8-fp16 fp16 int8-fp16,fp16" ] ||
    fail "record after warn: $(cat "$rec")"

# Nothing safe: exit 2, no recommendation, and the old record (now stale) is removed.
FAKE_SELFTEST=unsafe $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "unsafe: exit $rc: $(cat "$tmp/o")"
grep -q 'no recommended mode' "$tmp/o" || fail "unsafe: $(cat "$tmp/o")"
grep -q 'no recommendation: no mode is safe on this GPU' "$tmp/o" || fail "unsafe why: $(cat "$tmp/o")"
[ ! -e "$rec" ] || fail "a stale recommendation was left: $(cat "$rec")"
grep -q "recommendation not recorded: no GPU has a recommended mode; removed the old $rec" "$tmp/o" ||
    fail "unsafe record note: $(cat "$tmp/o")"

# Issue 14's full run on the H200, written by a program from before the safe judgement (its
# exit 1 counted int8-fp16's missed goal): judged here, int8-fp16 is safe and recommended,
# int8-fp8 (slower than fp16) is not, and the run passes.
FAKE_SELFTEST=file FAKE_SELFTEST_FILE=$root/bench/results/h200-all-6da3ec4-selftest-full.json FAKE_SELFTEST_RC=1 \
    $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "H200 run: exit $rc: $(cat "$tmp/o")"
grep -q 'int8-fp16 *yes *missed *0.999521 *0.0216 *46 *413.0 *1.22x' "$tmp/o" || fail "H200 int8-fp16 row: $(cat "$tmp/o")"
grep -q 'int8-fp8 *yes *met *0.999153 *0.0388 *46 *314.9 *0.93x' "$tmp/o" || fail "H200 int8-fp8 row: $(cat "$tmp/o")"
[ "$(json_get "$rec" "d['gpus'][0]['mode'], d['gpus'][0]['runner_up'], d['gpus'][0]['uuid']")" = "int8-fp16 fp16 None" ] ||
    fail "H200 record: $(cat "$rec")"

# A record from an earlier --device 1 run of the same library keeps its entry; a broken record
# is simply replaced.
python3 - "$rec" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = dict(d["gpus"][0], index=1, mode="fp16")
d["gpus"].append(g)
json.dump(d, open(sys.argv[1], "w"))
PY
FAKE_SELFTEST=pass $SB selftest --build "$out" > /dev/null 2>&1
[ "$(json_get "$rec" "[(g['index'], g['mode']) for g in d['gpus']]")" = "[(0, 'int8-fp16'), (1, 'fp16')]" ] ||
    fail "merge with another GPU's entry: $(cat "$rec")"
echo '{"schema":1, broken' > "$rec"
FAKE_SELFTEST=pass $SB selftest --build "$out" > /dev/null 2>&1
[ "$(json_get "$rec" "len(d['gpus'])")" = 1 ] || fail "broken record not replaced: $(cat "$rec")"

# No library to hash: said, and no record.
rm "$rec" "$out/lib/libsageattn.so"
FAKE_SELFTEST=pass $SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "no library: exit $rc"
grep -q "recommendation not recorded: cannot read $out/lib/libsageattn.so" "$tmp/o" || fail "no library note: $(cat "$tmp/o")"
[ ! -e "$rec" ] || fail "a record without a library"
ln -s libsageattn.so.1 "$out/lib/libsageattn.so"

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

# Nothing built (in a folder that exists: a missing one is a usage error, test_fetch_upfront.sh):
# with no GPU that is still a skip; with a GPU, an error that says to build.
mkdir -p "$tmp/nothing"
SAGEBUILD_FAKE_GPUS=none $SB selftest --build "$tmp/nothing" > "$tmp/o" 2>&1
rc=$?
[ $rc = 77 ] || fail "no build, no GPU: exit $rc: $(cat "$tmp/o")"
grep -q '^skipped: no GPU' "$tmp/o" || fail "no build, no GPU message"
SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" $SB selftest --build "$tmp/nothing" > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "no build, a GPU: exit $rc"
grep -q "sagebuild build --arch native --out $tmp/nothing" "$tmp/o" || fail "no build fix"

# The real program's JSON writer (kernels/selftest/st_report.c) through its own sample (issue
# 14's H200 rows in short): what sagebuild reads must be what the program writes.
if cc -std=c11 -D_GNU_SOURCE -I"$root/kernels/tests" -I"$root/kernels/include" -I"$root/kernels/selftest" \
    -o "$tmp/st_sample" "$root/kernels/tests/test_st_logic.c" "$root/kernels/tests/sa_check.c" \
    "$root/kernels/selftest/st_logic.c" "$root/kernels/selftest/st_judge.c" \
    "$root/kernels/selftest/st_report.c" -lm > "$tmp/cc.log" 2>&1 &&
    "$tmp/st_sample" "$tmp/sample.json" > /dev/null 2>&1; then
    FAKE_SELFTEST=file FAKE_SELFTEST_FILE=$tmp/sample.json FAKE_SELFTEST_RC=0 \
        $SB selftest --build "$out" > "$tmp/o" 2>&1
    rc=$?
    [ $rc = 0 ] || fail "the real writer's sample: exit $rc: $(cat "$tmp/o")"
    grep -q 'int8-fp16 *yes *missed' "$tmp/o" || fail "the real writer's sample: table: $(cat "$tmp/o")"
    grep -q 'goal note: q-x10 L1024 d128: cos 0.999521 rel-L1 0.0216 (goal cos >= 0.999, rel-L1 <= 0.0202)' "$tmp/o" ||
        fail "goal note listed: $(cat "$tmp/o")"
    grep -q 'recommended mode: int8-fp16' "$tmp/o" || fail "the real writer's sample: recommendation"
    FAKE_SELFTEST=file FAKE_SELFTEST_FILE=$tmp/sample.json FAKE_SELFTEST_RC=0 \
        $SB selftest --build "$out" --json > "$tmp/j" 2>&1
    [ "$(json_get "$tmp/j" "d['devices'][0]['modes'][2]['bar_rel_l1'], d['devices'][0]['modes'][2]['cases'][0]['kind'], d['devices'][0]['uuid']")" = \
        "0.04 random GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf" ] ||
        fail "the real writer's sample: JSON: $(cat "$tmp/j")"
    [ "$(json_get "$rec" "d['gpus'][0]['uuid'], d['gpus'][0]['mode']")" = "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf int8-fp16" ] ||
        fail "the real writer's sample: record: $(cat "$rec")"
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
