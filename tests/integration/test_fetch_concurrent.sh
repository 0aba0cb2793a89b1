#!/bin/sh
# Two fetches into one prefix at once: the lock serialises them, both succeed, the prefix is
# whole. An interrupted fetch (SIGINT, SIGTERM) leaves the old prefix and no staging.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
P="$T/p/cuda"
for i in 1 2; do
    $SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/ok/" --no-default-mirror --prefix "$P" \
        --jobs 2 --no-check --json >"$T/c$i.json" 2>"$T/c$i.err" &
    eval "pid$i=\$!"
done
wait "$pid1" || fail "first concurrent fetch: $(cat "$T/c1.err" "$T/c1.json")"
wait "$pid2" || fail "second concurrent fetch: $(cat "$T/c2.err" "$T/c2.json")"
statuses=$(for i in 1 2; do json_get "$T/c$i.json" 'd["status"]'; done | sort | tr '\n' ' ')
[ "$statuses" = "installed unchanged " ] || fail "expected one install and one no-op, got $statuses"
[ -x "$P/bin/nvcc" ] && [ -f "$P/sagebuild-lock.json" ] || fail "the prefix is not whole"
"$P/bin/nvcc" --version >/dev/null || fail "the fetched nvcc does not run"
no_debris "$T/p"

# Two prefixes sharing one cache: the downloads do not interleave, nothing is fetched twice.
for i in 1 2; do
    SAGEBUILD_CACHE="$T/shared-cache" $SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/ok/" \
        --no-default-mirror --prefix "$T/q$i/cuda" --jobs 2 --no-check --json >"$T/q$i.json" \
        2>"$T/q$i.err" &
    eval "pid$i=\$!"
done
wait "$pid1" || fail "first shared-cache fetch: $(cat "$T/q1.err")"
wait "$pid2" || fail "second shared-cache fetch: $(cat "$T/q2.err")"
got=$(($(json_get "$T/q1.json" 'd["bytes_downloaded"]') + $(json_get "$T/q2.json" 'd["bytes_downloaded"]')))
[ "$got" = "$(sum_sizes)" ] || fail "two fetches sharing a cache downloaded $got bytes"
[ -x "$T/q1/cuda/bin/nvcc" ] && [ -x "$T/q2/cuda/bin/nvcc" ] || fail "shared cache: a prefix is missing"

# Interrupted while stalled on a download: the signal handler only sets a flag, the run stops
# within a moment, and everything it started is removed.
for sig in INT TERM; do
    SAGEBUILD_TIMEOUT=30 $SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/stall/" \
        --no-default-mirror --prefix "$P" --force --no-check >"$T/sig.out" 2>&1 &
    pid=$!
    sleep 2
    kill -$sig $pid
    start=$(date +%s)
    wait $pid
    rc=$?
    [ $(($(date +%s) - start)) -lt 10 ] || fail "SIG$sig took too long to stop the run"
    [ $rc = 2 ] || fail "SIG$sig: exit $rc: $(cat "$T/sig.out")"
    grep -q "interrupted" "$T/sig.out" || fail "SIG$sig: no message: $(cat "$T/sig.out")"
    [ -x "$P/bin/nvcc" ] || fail "SIG$sig: the old prefix was damaged"
    no_debris "$T/p"
done
echo ok
