#!/bin/sh
# Messages say what is actually there: CUDA_HOME=/dev/zero or a FIFO is a device or a pipe, not
# "missing"; a --prefix that is a dangling symlink is named as one (not as a toolkit someone
# else made); an archive entry with a 6000-byte name is refused with a short message.
. "$(dirname "$0")/fetch/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/sb-msg.XXXXXX")
SERVER_PID=""
trap 'fetch_cleanup' EXIT INT TERM
[ -n "$SB" ] || fail "SAGEBUILD is not set"
export SAGEBUILD_CACHE="$T/cache" XDG_DATA_HOME="$T/data" SAGEBUILD_DATADIR="$REPO"

# doctor on a CUDA_HOME that exists but is no folder.
mkfifo "$T/fifo" || fail "mkfifo"
for home in /dev/zero "$T/fifo" "$T/nowhere"; do
    CUDA_HOME=$home $SB doctor toolkit.cuda_home >"$T/doctor.out" 2>&1
    case $home in
    /dev/zero) want="is a character device, not a folder" ;;
    *fifo) want="is a FIFO (named pipe), not a folder" ;;
    *) want="does not exist" ;;
    esac
    grep -q "CUDA_HOME=$home (\$CUDA_HOME) $want" "$T/doctor.out" ||
        fail "CUDA_HOME=$home: expected '$want': $(cat "$T/doctor.out")"
done

# fetch-cuda into a --prefix that is a symlink to nothing.
ln -s "$T/gone" "$T/link"
python3 "$FETCH_HELPERS/make_evil.py" "$T/evil" >/dev/null || fail "make_evil.py"
$SB fetch-cuda --manifest "$T/evil/dotdot/redistrib_9.9.9.json" --mirror "file://$T/evil/dotdot" \
    --no-default-mirror --prefix "$T/link" --no-check >"$T/link.out" 2>&1
[ $? = 2 ] || fail "a dangling --prefix: $(cat "$T/link.out")"
grep -q "prefix $T/link is a symlink to '$T/gone', which does not exist" "$T/link.out" ||
    fail "the dangling symlink is not named: $(cat "$T/link.out")"
grep -q "not made by sagebuild" "$T/link.out" && fail "a dangling symlink called someone's toolkit"
[ -L "$T/link" ] && [ ! -e "$T/gone" ] || fail "the symlink or its target changed"

# An archive entry with a 6000-byte name.
$SB fetch-cuda --manifest "$T/evil/long-name/redistrib_9.9.9.json" \
    --mirror "file://$T/evil/long-name" --no-default-mirror --prefix "$T/p/cuda" --no-check \
    >"$T/long.out" 2>&1
[ $? = 2 ] || fail "a 6000-byte entry name: $(head -c 1000 "$T/long.out")"
grep -q "is longer than 4095 bytes" "$T/long.out" || fail "long name: $(head -c 1000 "$T/long.out")"
grep -q "(6041 bytes)" "$T/long.out" || fail "the name's length is not given: $(head -c 1000 "$T/long.out")"
[ "$(wc -c <"$T/long.out")" -lt 1000 ] || fail "the message is $(wc -c <"$T/long.out") bytes"
echo ok
