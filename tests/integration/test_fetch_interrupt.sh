#!/bin/sh
# SIGTERM (and so Ctrl-C) ends fetch-cuda within a second whatever it is waiting for: a manifest
# GET, a PyPI index GET, the prefix's lock, the cache's lock, downloads and unpacking. The exit
# says "interrupted", the status is 2, the old prefix is as it was and no staging is left.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
command -v flock >/dev/null || { echo "flock (util-linux) is needed"; exit 77; }
mkdir -p "$T/p/cuda"
echo old >"$T/p/cuda/marker"
echo '{"schema":1}' >"$T/p/cuda/sagebuild-lock.json"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# interrupt NAME DELAY ARGS...: starts a fetch, sends TERM after DELAY seconds, and checks how
# fast and how it ended.
interrupt() {
    name=$1 delay=$2
    shift 2
    $SB fetch-cuda --no-default-mirror --prefix "$T/p/cuda" --no-check "$@" >"$T/$name.out" 2>&1 &
    pid=$!
    sleep "$delay"
    kill -0 $pid 2>/dev/null || fail "$name: ended before the signal: $(cat "$T/$name.out")"
    sent=$(now_ms)
    kill -TERM $pid
    waited=0
    while kill -0 $pid 2>/dev/null && [ $waited -lt 300 ]; do
        sleep 0.02
        waited=$((waited + 1))
    done
    took=$(($(now_ms) - sent))
    kill -KILL $pid 2>/dev/null
    wait $pid
    rc=$?
    [ $took -le 1000 ] || fail "$name: took $took ms to end after SIGTERM: $(cat "$T/$name.out")"
    [ $rc = 2 ] || fail "$name: exit $rc after SIGTERM: $(cat "$T/$name.out")"
    grep -q "interrupted" "$T/$name.out" || fail "$name: no 'interrupted': $(cat "$T/$name.out")"
    grep -q "fix:" "$T/$name.out" && fail "$name: a fix after an interruption: $(cat "$T/$name.out")"
    [ "$(cat "$T/p/cuda/marker")" = old ] || fail "$name: the old prefix changed"
    [ "$(ls -A "$T/p/cuda")" = "marker
sagebuild-lock.json" ] || fail "$name: the old prefix changed: $(ls -A "$T/p/cuda")"
    no_debris "$T/p"
    echo "$name: ended $took ms after SIGTERM"
}

# A manifest request the server never answers.
interrupt manifest 1.5 --manifest "$M/hang/redistrib_13.0.9.json" --mirror "$M/ok/"
grep -q "^/hang/redistrib_13.0.9.json " "$T/server.log" || fail "manifest: it was not being asked for"
# A PyPI index request the server never answers (the bundled manifest gives the versions).
interrupt index 1.5 --source pypi --cuda 13.0 --index-url "$M/hang/simple"
grep -q "^/hang/simple/nvidia" "$T/server.log" || fail "index: the index was not being asked"
# The prefix's lock, held by another process.
flock "$T/p/.cuda.lock" sleep 60 &
HOLDER=$!
EXTRA_PIDS="$HOLDER"
sleep 0.3
interrupt prefix-lock 1.5 --manifest "$MANIFEST" --mirror "$M/ok/"
grep -q "waiting for another sagebuild" "$T/prefix-lock.out" || fail "the wait was not said"
kill $HOLDER
wait $HOLDER 2>/dev/null
# The download cache's lock.
mkdir -p "$T/cache/cuda"
flock "$T/cache/cuda/.lock" sleep 60 &
HOLDER=$!
EXTRA_PIDS="$HOLDER"
sleep 0.3
interrupt cache-lock 1.5 --manifest "$MANIFEST" --mirror "$M/ok/"
kill $HOLDER
wait $HOLDER 2>/dev/null
# Downloading from a slow mirror while unpacking what has arrived.
rm -rf "$T/cache"
interrupt download 3 --manifest "$MANIFEST" --mirror "$M/slow/"
ls -d "$T/cache/cuda/cuda_nvcc/linux-x86_64/"*.tar.xz 2>/dev/null &&
    fail "a partial archive was published in the cache"
echo ok
