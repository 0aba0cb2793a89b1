#!/bin/sh
# `sagebuild env` with nothing fetched: the lines for the toolkit torch's rules find when the
# doctor says it fits (what `all` decides on), and when there is no toolkit to point at, text
# that fails when evaluated, so `eval "$(sagebuild env)" && next` does not run next.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-env.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
export SAGEBUILD_FAKE_GPUS=none

# 1. No toolkit at all (an empty CUDA_HOME and CUDA_PATH stop torch's search): a failing line.
CUDA_HOME= CUDA_PATH= $SB env > "$tmp/o" 2> "$tmp/e"
[ $? = 2 ] || fail "no toolkit: exit"
grep -q "no toolkit was fetched, and torch's rules" "$tmp/e" || fail "no toolkit: $(cat "$tmp/e")"
grep -q "fix: sagebuild fetch-cuda" "$tmp/e" || fail "no toolkit: fix: $(cat "$tmp/e")"
rm -f "$tmp/ran"
(CUDA_HOME= CUDA_PATH= && export CUDA_HOME CUDA_PATH && eval "$($SB env 2> /dev/null)" && touch "$tmp/ran")
[ -e "$tmp/ran" ] && fail "eval \"\$(sagebuild env)\" && ... ran the next command after a failure"

# 2. A toolkit torch would use that does not fit (no cudart, no cccl): not used, and why.
mk_toolkit "$tmp/cuda-bad" 12.8 12.8.93 99 "75 80 86 89 90 100 120"
CUDA_HOME=$tmp/cuda-bad $SB env > "$tmp/o" 2> "$tmp/e"
[ $? = 2 ] || fail "unfit toolkit: exit: $(cat "$tmp/o" "$tmp/e")"
grep -q "the one torch's rules find ($tmp/cuda-bad, \$CUDA_HOME) does not fit: toolkit\." "$tmp/e" ||
    fail "unfit toolkit: $(cat "$tmp/e")"
[ "$(cat "$tmp/o")" = false ] || fail "unfit toolkit: stdout must be a failing line: $(cat "$tmp/o")"
rm -f "$tmp/ran"
(export CUDA_HOME=$tmp/cuda-bad && eval "$($SB env 2> /dev/null)" && touch "$tmp/ran")
[ -e "$tmp/ran" ] && fail "an unfit toolkit let the next command run"
# a --prefix without nvcc fails the same way
$SB env --prefix "$tmp" > "$tmp/o" 2> /dev/null
[ "$(cat "$tmp/o")" = false ] || fail "--prefix without nvcc: $(cat "$tmp/o")"

# 3. A toolkit that fits (CI's CUDA on PATH): its lines, and it says where they come from.
if command -v nvcc > /dev/null 2>&1; then
    home=$(dirname "$(dirname "$(command -v nvcc)")")
    $SB doctor toolkit --json > "$tmp/d" 2> /dev/null
    if [ "$(json_get "$tmp/d" "sum(c['status'] == 'error' for c in d['checks'])")" = 0 ]; then
        $SB env > "$tmp/o" 2> "$tmp/e" || fail "fitting toolkit: $(cat "$tmp/e")"
        grep -q "no toolkit fetched; $home, the one torch's rules find (.*), fits" "$tmp/e" ||
            fail "fitting toolkit: $(cat "$tmp/e")"
        got=$(eval "$(cat "$tmp/o")" && echo "$CUDA_HOME")
        [ "$got" = "$home" ] || fail "eval gives CUDA_HOME=$got, not $home: $(cat "$tmp/o")"
        [ "$($SB env --json 2> /dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["found_by"])')" = "torch's rules (nvcc on PATH)" ] ||
            fail "env --json found_by"
    else
        echo "the nvcc on PATH does not pass the doctor's toolkit checks: part 3 not run"
    fi
fi
echo ok
