# Shared set-up for the fetch-cuda --source pypi tests (sourced, POSIX sh, after fetch/lib.sh
# for fail, json_get and no_debris).
#   pypi_setup     temp folder $T, private cache/data dirs, the real wheels ($WHEELS), the
#                  index server ($IDX = http://127.0.0.1:PORT, its log $T/index.log)
PYPI_HELPERS="$REPO/tests/integration/pypi"

pypi_cleanup() {
    if [ -n "${INDEX_PID:-}" ]; then
        kill "$INDEX_PID" 2>/dev/null
        wait "$INDEX_PID" 2>/dev/null
    fi
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}

pypi_setup() {
    [ -n "$SB" ] || fail "SAGEBUILD is not set"
    command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }
    T=$(mktemp -d "${TMPDIR:-/tmp}/sb-pypi.XXXXXX")
    INDEX_PID=""
    trap 'pypi_cleanup' EXIT INT TERM
    . "$PYPI_HELPERS/get_wheels.sh"
    export SAGEBUILD_CACHE="$T/cache" XDG_DATA_HOME="$T/data" SAGEBUILD_DATADIR="$REPO"
    unset SAGEBUILD_MIRRORS SAGEBUILD_INDEX_URLS PIP_INDEX_URL
    python3 "$PYPI_HELPERS/index_server.py" --wheels "$WHEELS" --port-file "$T/port" \
        --log "$T/index.log" >"$T/index.out" 2>&1 &
    INDEX_PID=$!
    i=0
    while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$T/port" ] || fail "the index server did not start: $(cat "$T/index.out")"
    IDX="http://127.0.0.1:$(cat "$T/port")"
}
