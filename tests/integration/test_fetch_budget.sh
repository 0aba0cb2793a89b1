#!/bin/sh
# Archive bombs: a normal-sized archive that unpacks to far more bytes (one file, or many) or
# far more entries than any real one is stopped at its budget, with an error naming the
# archive and the budget; the disk never holds much more than the budget, the old prefix stays
# and nothing is left behind. The same with a manifest whose sha256 for the bomb is wrong.
. "$(dirname "$0")/fetch/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/sb-bomb.XXXXXX")
SERVER_PID=""
trap 'fetch_cleanup' EXIT INT TERM
[ -n "$SB" ] || fail "SAGEBUILD is not set"
export SAGEBUILD_CACHE="$T/cache" XDG_DATA_HOME="$T/data" SAGEBUILD_DATADIR="$REPO"
python3 "$FETCH_HELPERS/make_evil.py" "$T/evil" bombs >"$T/bombs" || fail "make_evil.py"
mkdir -p "$T/work/p/cuda"
echo old >"$T/work/p/cuda/marker"
echo '{"schema":1}' >"$T/work/p/cuda/sagebuild-lock.json"
ARCHIVE=cuda_nvcc-linux-x86_64-9.9.9-archive.tar.xz
n=0
for bomb in $(cat "$T/bombs"); do
    size=$(wc -c <"$T/evil/$bomb/cuda_nvcc/linux-x86_64/$ARCHIVE")
    [ "$size" -lt 100000 ] || fail "$bomb: the bomb is $size bytes, meant to be small"
    for manifest in redistrib_9.9.9.json redistrib_9.9.9-badhash.json; do
        rm -rf "$T/cache"
        $SB fetch-cuda --manifest "$T/evil/$bomb/$manifest" --mirror "file://$T/evil/$bomb" \
            --no-default-mirror --prefix "$T/work/p/cuda" --no-check --jobs 1 \
            >"$T/$bomb.out" 2>&1 &
        pid=$!
        # The most the prefix's folder held while the bomb went off, in KiB.
        peak=0
        while kill -0 $pid 2>/dev/null; do
            used=$(du -sk "$T/work/p" 2>/dev/null | cut -f1)
            [ "${used:-0}" -gt $peak ] && peak=$used
            sleep 0.05
        done
        wait $pid
        rc=$?
        [ $rc = 2 ] || fail "$bomb ($manifest): exit $rc, expected 2: $(cat "$T/$bomb.out")"
        case $manifest in
        *badhash*) grep -q "sha256 mismatch" "$T/$bomb.out" ||
            fail "$bomb ($manifest): the hash failure is not named: $(cat "$T/$bomb.out")" ;;
        *)
            for want in "$ARCHIVE" "budget" "refusing"; do
                grep -q "$want" "$T/$bomb.out" ||
                    fail "$bomb: the error lacks '$want': $(cat "$T/$bomb.out")"
            done
            case $bomb in
            *entries*) grep -q "has more than 16384 entries, its budget (one per 32 bytes" "$T/$bomb.out" ||
                fail "$bomb: not refused for its entries: $(cat "$T/$bomb.out")" ;;
            *) grep -q "unpacks to more than 64.0 MiB, its budget (50 times" "$T/$bomb.out" ||
                fail "$bomb: not refused for its size: $(cat "$T/$bomb.out")" ;;
            esac
            ;;
        esac
        # 64 MiB of budget, plus the small archives and folders around it.
        [ $peak -lt 73728 ] || fail "$bomb ($manifest): the disk held $peak KiB while unpacking"
        [ "$(cat "$T/work/p/cuda/marker")" = old ] || fail "$bomb: the old prefix changed"
        no_debris "$T/work/p"
        [ "$(ls -A "$T/work/p")" = "$(printf '.cuda.lock\ncuda')" ] ||
            fail "$bomb ($manifest): left in $T/work/p: $(ls -A "$T/work/p")"
        n=$((n + 1))
    done
done
[ $n = 6 ] || fail "only $n bombs were tried"
echo ok
