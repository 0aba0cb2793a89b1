#!/bin/sh
# Archives that try to write outside the prefix ("..", absolute names, escaping symlinks and
# hard links, writing through a symlink, device files) are refused even when their sha256
# matches the manifest: nothing lands outside, the old prefix stays, no staging is left.
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
n=0
for trick in $(cat "$T/tricks"); do
    rm -f /tmp/sagebuild-escaped-absolute
    (cd "$T/work" && $SB fetch-cuda --manifest "$T/evil/$trick/redistrib_9.9.9.json" \
        --mirror "file://$T/evil/$trick" --no-default-mirror --prefix "$T/work/p/cuda" \
        --no-check >"$T/$trick.out" 2>&1)
    rc=$?
    [ $rc = 2 ] || fail "$trick: exit $rc, expected 2: $(cat "$T/$trick.out")"
    grep -q "refusing" "$T/$trick.out" || fail "$trick: no refusal named: $(cat "$T/$trick.out")"
    [ "$(cat "$T/work/p/cuda/marker")" = old ] || fail "$trick: the old prefix changed"
    no_debris "$T/work/p"
    for escaped in "$T/escaped-dotdot" "$T/work/escaped-dotdot" "$T/work/p/escaped-dotdot" \
        /tmp/sagebuild-escaped-absolute "$T/outside" "$T/work/outside" "$T/work/p/outside"; do
        [ ! -e "$escaped" ] || fail "$trick: wrote $escaped"
    done
    n=$((n + 1))
done
[ $n -ge 8 ] || fail "only $n tricks were tried"
echo ok
