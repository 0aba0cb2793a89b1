#!/bin/sh
# Broken mirrors: 404, a redirect to a dead host, a corrupted archive, a connection dropped
# half-way (resumed with Range), a server that ignores Range, a stalled transfer (timeout).
# Each run either succeeds from the next mirror or fails with a message naming what went wrong,
# and never leaves a half-written prefix.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
TOTAL=$(sum_sizes)
export SAGEBUILD_TIMEOUT=2 SAGEBUILD_RETRIES=2

# run NAME ARGS...: a fetch of the mirror's release into a fresh cache and prefix.
run() {
    name=$1
    shift
    rm -rf "$T/cache" "$T/p"
    $SB fetch-cuda --manifest "$MANIFEST" --no-default-mirror --prefix "$T/p/cuda" --jobs 2 \
        --no-check --json "$@" >"$T/$name.json" 2>"$T/$name.err"
}

# 404 on the first mirror: the second delivers, and nothing is fetched twice.
run m404 --mirror "$M/404/" --mirror "$M/ok/" || fail "404 then ok: $(cat "$T/m404.err")"
[ "$(json_get "$T/m404.json" 'd["bytes_downloaded"]')" = "$TOTAL" ] || fail "404: byte count"
[ -x "$T/p/cuda/bin/nvcc" ] || fail "404: no nvcc"

# Only broken mirrors: the error names the redirect target that failed.
run redir --mirror "$M/redirect/" && fail "a dead redirect target must fail"
grep -q "redirected to http://127.0.0.1:[0-9]*/ok/.*which failed" "$T/redir.json" ||
    fail "the failed redirect is not reported: $(cat "$T/redir.json")"
# No mirror delivered CUDA 13's archives: NVIDIA's wheels are the first way out.
case $(json_get "$T/redir.json" 'd["result"]["fix"]') in
"sagebuild fetch-cuda --source pypi"*) ;;
*) fail "the fix for undelivered archives: $(cat "$T/redir.json")" ;;
esac
[ ! -e "$T/p/cuda" ] || fail "a failed fetch created the prefix"
no_debris "$T/p"
run redir2 --mirror "$M/redirect/" --mirror "$M/ok/" || fail "redirect then ok"

# A corrupted archive: refused, deleted, and taken from the next mirror.
run corrupt --mirror "$M/corrupt/" --mirror "$M/ok/" || fail "corrupt then ok: $(cat "$T/corrupt.err")"
[ -x "$T/p/cuda/nvvm/bin/cicc" ] || fail "corrupt: no cicc"
run corrupt2 --mirror "$M/corrupt/" && fail "a corrupted-only mirror must fail"
for want in "cuda_nvcc" "$M/corrupt/cuda_nvcc/" "sha256 mismatch" \
    "$(json_get "$MANIFEST" 'd["cuda_nvcc"]["linux-x86_64"]["sha256"]')"; do
    grep -q "$want" "$T/corrupt2.json" || fail "the mismatch error lacks '$want': $(cat "$T/corrupt2.json")"
done
grep -q "got [0-9a-f]\{64\}" "$T/corrupt2.json" || fail "the mismatch error lacks the hash received"
ls "$T/cache/cuda/cuda_nvcc/linux-x86_64/" 2>/dev/null | grep -q 'tar.xz$' &&
    fail "a corrupted archive was kept in the cache"
no_debris "$T/p"

# Dropped half-way: resumed with a Range request, every byte fetched exactly once.
run drop --mirror "$M/drop/" || fail "dropped connection: $(cat "$T/drop.err")"
[ "$(json_get "$T/drop.json" 'd["bytes_downloaded"]')" = "$TOTAL" ] ||
    fail "resume fetched $(json_get "$T/drop.json" 'd["bytes_downloaded"]') bytes, archives are $TOTAL"
server_log_wait "^/drop/libnvvm.* bytes=[0-9]*- 206" || fail "no Range request was made"

# A server that ignores Range: the download restarts cleanly from byte 0.
mkdir -p "$T/cache/cuda/libnvvm/linux-x86_64"
rel=$(json_get "$MANIFEST" 'd["libnvvm"]["linux-x86_64"]["relative_path"]')
rm -rf "$T/p"
head -c 1000000 "$MIRROR_DIR/$rel" >"$T/cache/cuda/$rel.part"
$SB fetch-cuda --manifest "$MANIFEST" --no-default-mirror --prefix "$T/p/cuda" --no-check \
    --mirror "$M/norange/" >"$T/norange.out" 2>&1 || fail "no-Range server: $(cat "$T/norange.out")"
cmp "$T/cache/cuda/$rel" "$MIRROR_DIR/$rel" || fail "the restarted download differs"

# HTTPS: verification is on (a self-signed server is refused), and the CA bundle comes from
# CURL_CA_BUNDLE or SSL_CERT_FILE as with the curl tool.
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" \
        >/dev/null 2>&1 || fail "openssl could not make a test certificate"
    python3 "$FETCH_HELPERS/fault_server.py" --root "$MIRROR_DIR" --port-file "$T/tls.port" \
        --log "$T/tls.log" --tls "$T/cert.pem" "$T/key.pem" >"$T/tls.out" 2>&1 &
    TLS_PID=$!
    EXTRA_PIDS="$TLS_PID"
    i=0
    while [ ! -s "$T/tls.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    H="https://127.0.0.1:$(cat "$T/tls.port")"
    run tls --mirror "$H/ok/" && fail "a self-signed HTTPS mirror was trusted"
    grep -qi "certificate" "$T/tls.json" || fail "the TLS refusal is not explained: $(cat "$T/tls.json")"
    # (exported around the call: sh keeps or drops assignments before a function differently)
    export CURL_CA_BUNDLE="$T/cert.pem"
    run tls2 --mirror "$H/ok/" || fail "CURL_CA_BUNDLE: $(cat "$T/tls2.err" "$T/tls2.json")"
    unset CURL_CA_BUNDLE
    export SSL_CERT_FILE="$T/cert.pem"
    run tls3 --mirror "$H/ok/" || fail "SSL_CERT_FILE: $(cat "$T/tls3.err" "$T/tls3.json")"
    unset SSL_CERT_FILE
fi

# A stalled transfer is abandoned after SAGEBUILD_TIMEOUT and the next mirror used.
start=$(date +%s)
export SAGEBUILD_RETRIES=1
run stall --mirror "$M/stall/" --mirror "$M/ok/" || fail "stall then ok: $(cat "$T/stall.err")"
took=$(($(date +%s) - start))
[ $took -lt 40 ] || fail "the stall took ${took}s to detect"
run stall2 --mirror "$M/stall/" && fail "a stalled-only mirror must fail"
grep -q "stalled: less than 1024 bytes/s for 2 s" "$T/stall2.json" || fail "the stall is not reported: $(cat "$T/stall2.json")"
no_debris "$T/p"
echo ok
