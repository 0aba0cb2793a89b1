#!/bin/sh
# A partial download left in the cache that holds another file's bytes (a foreign .part) makes
# the resumed file fail its hash; the same URL is then tried once more from byte 0 before the
# mirror is blamed, so a good mirror still delivers in one run. A mirror that is really wrong
# still fails, after that one fresh attempt, and the next mirror is used.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
export SAGEBUILD_RETRIES=1
NVCC=$(json_get "$MANIFEST" 'd["cuda_nvcc"]["linux-x86_64"]["relative_path"]')
NVVM=$(json_get "$MANIFEST" 'd["libnvvm"]["linux-x86_64"]["relative_path"]')

foreign_part() {
    rm -rf "$T/cache" "$T/p"
    mkdir -p "$(dirname "$T/cache/cuda/$NVCC")"
    head -c 1048576 "$MIRROR_DIR/$NVVM" >"$T/cache/cuda/$NVCC.part"
    : >"$T/server.log"
}

# One good mirror: the resume fails the hash, the fresh download from the same URL succeeds.
foreign_part
$SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/ok/" --no-default-mirror \
    --prefix "$T/p/cuda" --no-check >"$T/ok.out" 2>&1 ||
    fail "a foreign .part made the only (good) mirror fail: $(cat "$T/ok.out")"
cmp -s "$T/cache/cuda/$NVCC" "$MIRROR_DIR/$NVCC" || fail "the cached archive differs"
server_log_wait "^/ok/$NVCC bytes=1048576- 206 " || fail "no resume was tried"
server_log_wait "^/ok/$NVCC - 200 " || fail "no fresh download from byte 0"
[ "$(grep -c "^/ok/$NVCC " "$T/server.log")" = 2 ] || fail "not exactly two requests for nvcc"

# A corrupt mirror first: its resume and its fresh copy both fail; the good one delivers.
foreign_part
$SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/corrupt/" --mirror "$M/ok/" \
    --no-default-mirror --prefix "$T/p/cuda" --no-check >"$T/corrupt.out" 2>&1 ||
    fail "corrupt then good mirror: $(cat "$T/corrupt.out")"
[ "$(grep -c "^/corrupt/$NVCC " "$T/server.log")" = 2 ] ||
    fail "the corrupt mirror was not tried exactly twice: $(grep "$NVCC" "$T/server.log")"

# Only the corrupt mirror: the error says both what the resume did and that the fresh copy
# was wrong too.
foreign_part
$SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/corrupt/" --no-default-mirror \
    --prefix "$T/p/cuda" --no-check >"$T/bad.out" 2>&1 && fail "a corrupt mirror was accepted"
grep -q "no match after resuming a partial download; fetched again from byte 0" "$T/bad.out" ||
    fail "the retry is not reported: $(cat "$T/bad.out")"
grep -q "sha256 mismatch" "$T/bad.out" || fail "the mismatch is not reported: $(cat "$T/bad.out")"
no_debris "$T/p"
echo ok
