#!/bin/sh
# Archives that try to write outside the prefix ("..", absolute names, escaping symlinks and
# hard links, writing through a symlink, a hard link that copies a symlink to a shallower folder,
# device files) are refused even when their sha256 matches the manifest: nothing lands outside,
# the old prefix stays, no staging is left. The same archives under a manifest whose sha256 is
# wrong (they are unpacked while they download, before the verdict) change nothing outside the
# staging folder either, and leave no trace.
. "$(dirname "$0")/fetch/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/sb-evil.XXXXXX")
SERVER_PID=""
trap 'fetch_cleanup' EXIT INT TERM
[ -n "$SB" ] || fail "SAGEBUILD is not set"
export SAGEBUILD_CACHE="$T/cache" XDG_DATA_HOME="$T/data" SAGEBUILD_DATADIR="$REPO"
python3 "$FETCH_HELPERS/make_evil.py" "$T/evil" >"$T/tricks" || fail "make_evil.py"
mkdir -p "$T/work/p/cuda"
echo old >"$T/work/p/cuda/marker"
echo '{"schema":1}' >"$T/work/p/cuda/sagebuild-lock.json" # an earlier sagebuild install
# Everything outside the prefix's folder, as it was: compared after every run.
snapshot() { (cd "$T" && find . -path ./work/p -prune -o -path ./cache -prune -o \
    -path ./evil -prune -o -path ./snap -prune -o -name '*.out' -prune -o -name 'server.*' -prune \
    -o -name port -prune -o -print | sort); }
mkdir -p "$T/snap"
snapshot >"$T/snap/before"
n=0
for trick in $(cat "$T/tricks"); do
    for manifest in redistrib_9.9.9.json redistrib_9.9.9-badhash.json; do
        rm -f /tmp/sagebuild-escaped-absolute
        rm -rf "$T/cache"
        (cd "$T/work" && $SB fetch-cuda --manifest "$T/evil/$trick/$manifest" \
            --mirror "file://$T/evil/$trick" --no-default-mirror --prefix "$T/work/p/cuda" \
            --no-check >"$T/$trick.out" 2>&1)
        rc=$?
        [ $rc = 2 ] || fail "$trick ($manifest): exit $rc, expected 2: $(cat "$T/$trick.out")"
        case $manifest in
        *badhash*) grep -q "sha256 mismatch" "$T/$trick.out" ||
            fail "$trick ($manifest): the hash failure is not named: $(cat "$T/$trick.out")"
            # no mirror delivered the archive; 9.9.9 has no wheels, so no PyPI either
            grep -q "^  fix: sagebuild fetch-cuda --dry-run" "$T/$trick.out" ||
            fail "$trick ($manifest): the fix: $(cat "$T/$trick.out")" ;;
        *) grep -q "refusing" "$T/$trick.out" ||
            fail "$trick: no refusal named: $(cat "$T/$trick.out")"
            # a hostile archive: no disk space, mirror or compiler to fix
            grep -q "fix:" "$T/$trick.out" && fail "$trick: a fix for a refusal: $(cat "$T/$trick.out")" ;;
        esac
        [ "$(cat "$T/work/p/cuda/marker")" = old ] || fail "$trick ($manifest): the old prefix changed"
        [ "$(ls -A "$T/work/p/cuda")" = "marker
sagebuild-lock.json" ] || fail "$trick ($manifest): the old prefix gained files: $(ls -A "$T/work/p/cuda")"
        no_debris "$T/work/p"
        for escaped in "$T/escaped-dotdot" "$T/work/escaped-dotdot" "$T/work/p/escaped-dotdot" \
            /tmp/sagebuild-escaped-absolute "$T/outside" "$T/work/outside" "$T/work/p/outside"; do
            [ ! -e "$escaped" ] || fail "$trick ($manifest): wrote $escaped"
        done
        snapshot >"$T/snap/after"
        cmp -s "$T/snap/before" "$T/snap/after" ||
            fail "$trick ($manifest): files appeared outside the prefix: $(diff "$T/snap/before" "$T/snap/after")"
        [ "$(ls -A "$T/work/p")" = "$(printf '.cuda.lock\ncuda')" ] ||
            fail "$trick ($manifest): left in $T/work/p: $(ls -A "$T/work/p")"
        n=$((n + 1))
    done
done
[ $n -ge 22 ] || fail "only $n tricks were tried"

# Over HTTP with a pause before the last 4 KiB, so the archive is unpacked before its (wrong)
# hash is known: still nothing outside, no trace left.
MIRROR_DIR="$T/evil"
server_start
for trick in hardlink-to-symlink hardlink-chain mkdir-through-copy through-symlink dotdot; do
    rm -rf "$T/cache"
    (cd "$T/work" && $SB fetch-cuda --manifest "$T/evil/$trick/redistrib_9.9.9-badhash.json" \
        --mirror "$M/pause/$trick/" --no-default-mirror --prefix "$T/work/p/cuda" \
        --no-check >"$T/$trick.out" 2>&1)
    rc=$?
    [ $rc = 2 ] || fail "$trick (paused, bad hash): exit $rc: $(cat "$T/$trick.out")"
    grep -q "sha256 mismatch" "$T/$trick.out" || fail "$trick (paused): $(cat "$T/$trick.out")"
    for escaped in "$T/escaped-dotdot" "$T/work/escaped-dotdot" "$T/work/p/escaped-dotdot" \
        "$T/outside" "$T/work/outside" "$T/work/p/outside"; do
        [ ! -e "$escaped" ] || fail "$trick (paused, bad hash): wrote $escaped"
    done
    snapshot >"$T/snap/after"
    cmp -s "$T/snap/before" "$T/snap/after" ||
        fail "$trick (paused): files appeared outside the prefix: $(diff "$T/snap/before" "$T/snap/after")"
    [ "$(ls -A "$T/work/p")" = "$(printf '.cuda.lock\ncuda')" ] ||
        fail "$trick (paused): left in $T/work/p: $(ls -A "$T/work/p")"
    [ "$(cat "$T/work/p/cuda/marker")" = old ] || fail "$trick (paused): the old prefix changed"
done
grep -q "^/pause/hardlink-to-symlink/.* 200 " "$T/server.log" || fail "the paused mirror was not used"
grep -q "hardlink-to-symlink" "$T/tricks" || fail "the hard-link-to-symlink trick is missing"
echo ok
