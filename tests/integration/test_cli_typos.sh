#!/bin/sh
# What a user's slips get: a mistyped command suggests the nearest one, global options work
# after the command too, and counts agree with their nouns ("1 check", not "1 checks").
set -u
SB=${SAGEBUILD_SAN:-$SAGEBUILD}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-typos.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. "did you mean"
$SB doctr > "$tmp/o" 2> "$tmp/e"
[ $? = 64 ] || fail "a mistyped command is a usage error"
grep -q "'doctr' is not a command. Did you mean 'doctor'?" "$tmp/e" || fail "doctr: $(cat "$tmp/e")"
$SB fetch-cdua 2> "$tmp/e"
grep -q "Did you mean 'fetch-cuda'?" "$tmp/e" || fail "fetch-cdua: $(cat "$tmp/e")"
$SB help biuld 2> "$tmp/e"
[ $? = 64 ] || fail "help of a mistyped command is a usage error"
grep -q "Did you mean 'build'?" "$tmp/e" || fail "help biuld: $(cat "$tmp/e")"
$SB frobnicate 2> "$tmp/e"
grep -q "Did you mean" "$tmp/e" && fail "nothing is near 'frobnicate': $(cat "$tmp/e")"
$SB help help > "$tmp/o" 2>&1 || fail "help help: $(cat "$tmp/o")"

# 2. global options after the command, with the same effect as before it
export SAGEBUILD_FAKE_GPUS=none HOME=$tmp XDG_DATA_HOME=$tmp/data XDG_CACHE_HOME=$tmp/cache
unset NO_COLOR
# under script(1) stdout is a terminal, so colour would be on without --no-color
script -qec "$SB doctor --no-color host.compiler" /dev/null > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || [ $rc = 2 ] || fail "doctor --no-color: exit $rc: $(cat "$tmp/o")"
grep -q 'unrecognized option' "$tmp/o" && fail "--no-color after the command: $(cat "$tmp/o")"
grep -q "$(printf '\033')\[" "$tmp/o" && fail "--no-color after the command left colour on"
script -qec "$SB doctor host.compiler" /dev/null > "$tmp/o" 2>&1
grep -q "$(printf '\033')\[" "$tmp/o" || fail "a terminal without --no-color gets colour (test premise)"
$SB doctor --no-color --json host.compiler > "$tmp/j" 2>&1
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/j" || fail "doctor --no-color --json"
# after "--" it is an operand, not an option
$SB doctor -- --no-color > "$tmp/o" 2>&1
grep -q -- "--no-color" "$tmp/o" || fail "after --, --no-color is the command's operand: $(cat "$tmp/o")"

# 3. counts agree with their nouns
$SB doctor --no-color host.compiler > "$tmp/o" 2>&1
grep -q '(1 check,' "$tmp/o" || grep -q 'in 1 check ' "$tmp/o" || fail "one check: $(tail -1 "$tmp/o")"
grep -q '1 checks' "$tmp/o" && fail "1 checks: $(tail -1 "$tmp/o")"
$SB doctor --no-color driver toolkit.nvcc > "$tmp/o" 2>&1
grep -q '1 warnings\|1 errors' "$tmp/o" && fail "plural after 1: $(tail -1 "$tmp/o")"
echo ok
