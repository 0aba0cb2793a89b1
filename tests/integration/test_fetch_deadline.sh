#!/bin/sh
# Slow mirrors: one that drips a few bytes a second (manifest or archive) is abandoned once it
# falls under the minimum rate for SAGEBUILD_TIMEOUT seconds, and the next mirror used; a request
# that runs past --deadline is abandoned, and its retry resumes where it stopped; a slow but
# honest mirror above --min-rate still delivers.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
export SAGEBUILD_TIMEOUT=2 SAGEBUILD_RETRIES=1
CCCL=$(json_get "$MANIFEST" 'd["cuda_cccl"]["linux-x86_64"]["relative_path"]')

# seed_cache: every archive but cuda_cccl's already verified in the cache, so each run below
# downloads one archive (986 KB) from the slow mirror.
seed_cache() {
    rm -rf "$T/cache" "$T/p"
    for rel in $(json_get "$MANIFEST" '" ".join(v["linux-x86_64"]["relative_path"] for v in d.values() if isinstance(v, dict))'); do
        [ "$rel" = "$CCCL" ] && continue
        mkdir -p "$(dirname "$T/cache/cuda/$rel")"
        cp "$MIRROR_DIR/$rel" "$T/cache/cuda/$rel"
    done
}
fetch() {
    name=$1
    shift
    start=$(date +%s)
    timeout 120 $SB fetch-cuda --manifest "$MANIFEST" --no-default-mirror --prefix "$T/p/cuda" \
        --no-check "$@" >"$T/$name.out" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    [ $rc != 124 ] || fail "$name: still running after 120 s: $(cat "$T/$name.out")"
}

# A manifest served at 4 bytes/s: given up after ~2 s, not after the 10 minutes it would take.
rm -rf "$T/cache"
fetch drip-manifest --manifest "$M/drip/redistrib_13.0.9.json" --mirror "$M/ok/"
[ $rc = 2 ] || fail "a dripped manifest: exit $rc: $(cat "$T/drip-manifest.out")"
[ $took -le 20 ] || fail "a dripped manifest held the run for $took s"
grep -q "stalled: less than 1024 bytes/s for 2 s" "$T/drip-manifest.out" ||
    fail "the slow manifest is not explained: $(cat "$T/drip-manifest.out")"

# An archive served at 4 bytes/s: abandoned, and the next mirror delivers it.
seed_cache
fetch drip --mirror "$M/drip/" --mirror "$M/ok/" --json
[ $rc = 0 ] || fail "dripping mirror then a good one: exit $rc: $(cat "$T/drip.out")"
[ $took -le 30 ] || fail "the dripping mirror held the run for $took s"
server_log_wait "^/drip/$CCCL " || fail "the dripping mirror was not tried: $(cat "$T/server.log")"
[ -d "$T/p/cuda/include/cccl" ] || fail "cccl was not installed"

# A slow but honest mirror (256 KiB/s) above --min-rate: it delivers.
seed_cache
fetch slow --mirror "$M/slow/" --min-rate 64k
[ $rc = 0 ] || fail "a slow honest mirror failed: $(cat "$T/slow.out")"
[ -d "$T/p/cuda/include/cccl" ] || fail "slow: cccl was not installed"

# ... but not when it is slower than --min-rate.
seed_cache
fetch minrate --mirror "$M/slow/" --min-rate 1M
[ $rc = 2 ] || fail "a mirror under --min-rate was accepted: $(cat "$T/minrate.out")"
grep -q "stalled: less than 1048576 bytes/s for 2 s" "$T/minrate.out" ||
    fail "the slow mirror is not explained: $(cat "$T/minrate.out")"

# A request past --deadline is abandoned, named, and the prefix is not made.
seed_cache
fetch deadline --mirror "$M/slow/" --deadline 2
[ $rc = 2 ] || fail "a transfer past its deadline was accepted: $(cat "$T/deadline.out")"
grep -q "took longer than the 2 s deadline per transfer" "$T/deadline.out" ||
    fail "the deadline is not named: $(cat "$T/deadline.out")"
[ ! -e "$T/p/cuda" ] || fail "a prefix was made"
no_debris "$T/p"

# With retries each request resumes where the last one stopped: the slow mirror finishes.
seed_cache
export SAGEBUILD_RETRIES=4
fetch resume --mirror "$M/slow/" --deadline 2 --json
[ $rc = 0 ] || fail "resuming after the deadline: $(cat "$T/resume.out")"
server_log_wait "^/slow/$CCCL bytes=[0-9]*- 206" || fail "no Range request after the deadline"

# The options are checked, and documented.
$SB fetch-cuda --min-rate fast >/dev/null 2>&1
[ $? = 64 ] || fail "--min-rate fast was accepted"
$SB fetch-cuda --deadline -1 >/dev/null 2>&1
[ $? = 64 ] || fail "--deadline -1 was accepted"
$SB fetch-cuda --help | grep -q -- "--deadline SECONDS" || fail "--help lacks --deadline"
grep -q 'min\\-rate' "$REPO/man/sagebuild.1" || fail "the man page lacks --min-rate"
echo ok
