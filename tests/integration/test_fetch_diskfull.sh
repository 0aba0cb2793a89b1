#!/bin/sh
# A full disk (a file-size limit, and a small tmpfs where one can be mounted) while downloading
# and while unpacking: the fetch fails with the reason, the old prefix stays as it was, and no
# staging folder is left.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
mkdir -p "$T/p/cuda"
echo old >"$T/p/cuda/marker"
echo '{"schema":1}' >"$T/p/cuda/sagebuild-lock.json" # an earlier sagebuild install

check_left_alone() {
    [ "$(cat "$T/p/cuda/marker" 2>/dev/null)" = old ] || fail "$1: the old prefix changed"
    no_debris "$T/p"
}

# Downloading: 20 MB per file is less than the nvcc and libnvvm archives.
(ulimit -f 20000 && exec $SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/ok/" \
    --no-default-mirror --prefix "$T/p/cuda" --no-check) >"$T/dl.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "download with a 20 MB file limit: exit $rc: $(cat "$T/dl.out")"
grep -q "File too large" "$T/dl.out" || fail "the reason is not named: $(cat "$T/dl.out")"
grep -q "^  fix: free disk space" "$T/dl.out" || fail "download: the fix: $(cat "$T/dl.out")"
check_left_alone download

# Unpacking: the archives fit (and are now in the cache, verified), cicc (76 MB) does not.
$SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/ok/" --no-default-mirror \
    --prefix "$T/warm/cuda" --no-check >/dev/null 2>&1 || fail "warming the cache"
(ulimit -f 50000 && exec $SB fetch-cuda --manifest "$MANIFEST" --offline --prefix "$T/p/cuda" \
    --no-check) >"$T/unpack.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "unpack with a 50 MB file limit: exit $rc: $(cat "$T/unpack.out")"
grep -q "File too large" "$T/unpack.out" || fail "the reason is not named: $(cat "$T/unpack.out")"
grep -q "^  fix: free disk space" "$T/unpack.out" || fail "unpack: the fix: $(cat "$T/unpack.out")"
check_left_alone unpack

# A real full file system, where this machine lets us mount one.
mkdir -p "$T/small"
if mount -t tmpfs -o size=60m tmpfs "$T/small" 2>/dev/null; then
    mkdir -p "$T/small/p/cuda" && echo old >"$T/small/p/cuda/marker"
    echo '{"schema":1}' >"$T/small/p/cuda/sagebuild-lock.json"
    $SB fetch-cuda --manifest "$MANIFEST" --offline --prefix "$T/small/p/cuda" --no-check \
        >"$T/tmpfs.out" 2>&1
    rc=$?
    left=$(ls -A "$T/small/p" | grep -E '\.(staging|old)-' || true)
    marker=$(cat "$T/small/p/cuda/marker")
    umount "$T/small"
    [ $rc = 2 ] || fail "tmpfs: exit $rc: $(cat "$T/tmpfs.out")"
    grep -q "No space left" "$T/tmpfs.out" || fail "tmpfs: reason: $(cat "$T/tmpfs.out")"
    grep -q "^  fix: free disk space" "$T/tmpfs.out" || fail "tmpfs: the fix: $(cat "$T/tmpfs.out")"
    [ -z "$left" ] || fail "tmpfs: debris $left"
    [ "$marker" = old ] || fail "tmpfs: the old prefix changed"
else
    echo "note: no tmpfs could be mounted here; the file-size limit cases stand in for it"
fi
echo ok
