# Shared set-up for the fetch-cuda integration tests (sourced, POSIX sh).
#   fetch_setup         temp folder $T, private cache/data dirs, the mirror built from the
#                       installed toolkit ($MIRROR_DIR; exit 77 when there is none)
#   server_start        the fault-injecting HTTP server; sets $M (http://127.0.0.1:PORT)
#   sum_sizes           total size of the mirror's five archives
#   no_debris DIR       fails when staging or old trees are left beside prefixes in DIR
set -u
SB=${SAGEBUILD_SAN:-${SAGEBUILD:-}}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
FETCH_HELPERS="$REPO/tests/integration/fetch"
fail() { echo "FAIL: $*"; exit 1; }

fetch_setup() {
    [ -n "$SB" ] || fail "SAGEBUILD is not set"
    command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }
    T=$(mktemp -d "${TMPDIR:-/tmp}/sb-fetch.XXXXXX")
    SERVER_PID=""
    EXTRA_PIDS="" # other servers a test starts, stopped on every exit path
    trap 'fetch_cleanup' EXIT INT TERM
    export SAGEBUILD_CACHE="$T/cache" XDG_DATA_HOME="$T/data" SAGEBUILD_DATADIR="$REPO"
    unset SAGEBUILD_MIRRORS
    # The toolkit to pack: $SB_TEST_CUDA_ROOT, /usr/local/cuda, else the nvcc on PATH's.
    root=${SB_TEST_CUDA_ROOT:-/usr/local/cuda}
    if [ ! -x "$root/bin/nvcc" ] && command -v nvcc >/dev/null; then
        root=$(dirname "$(dirname "$(command -v nvcc)")")
    fi
    # The mirror is built once per toolkit and kept under build/ for later runs and CI steps.
    MIRROR_DIR=$(python3 "$FETCH_HELPERS/make_mirror.py" --cuda-root "$root" \
        --out "$REPO/build/fetch-mirror")
    rc=$?
    [ $rc = 77 ] && { echo "no CUDA toolkit at $root to build a mirror from"; exit 77; }
    [ $rc = 0 ] || fail "building the test mirror failed"
    MANIFEST="$MIRROR_DIR/redistrib_13.0.9.json"
}

fetch_cleanup() {
    for pid in $SERVER_PID ${EXTRA_PIDS:-}; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}

server_start() {
    python3 "$FETCH_HELPERS/fault_server.py" --root "$MIRROR_DIR" --port-file "$T/port" \
        --log "$T/server.log" >"$T/server.out" 2>&1 &
    SERVER_PID=$!
    i=0
    while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$T/port" ] || fail "the test server did not start: $(cat "$T/server.out")"
    M="http://127.0.0.1:$(cat "$T/port")"
}

# server_log_wait PATTERN: true once a line of the server's log matches (grep -E), waiting up to
# 10 s. A paced response (drip, slow) is logged when it ends, which is after the client gave up
# on it and so may come after sagebuild has already finished with the next mirror.
server_log_wait() {
    i=0
    while [ $i -lt 100 ]; do
        grep -Eq "$1" "$T/server.log" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

sum_sizes() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(sum(int(v[p]["size"]) for k,v in d.items() if isinstance(v,dict) for p in v if p.startswith("linux-")))' "$MANIFEST"
}

# json_get FILE EXPR: evaluates a Python expression over the JSON document d.
json_get() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

no_debris() {
    left=$(ls -A "$1" 2>/dev/null | grep -E '\.(staging|old)-' || true)
    [ -z "$left" ] || fail "debris left in $1: $left"
    [ ! -d "$1/.parts" ] || fail "unpack parts left in $1"
}
