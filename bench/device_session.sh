#!/bin/bash
# The session's whole GPU check in two device calls (run from the repository root after
# `bash bench/pack_cli.sh` here; carry `bin` and `.device-carry-cli`):
#   bash bench/device_session.sh product   # all --python into a venv, doctor, fatbin vs cuobjdump,
#                                          # uninstall (device_install.sh); the full self-test
#                                          # through the CLI on that build (the recommendation
#                                          # record); the drop-in package's check on the same
#                                          # library (device_dropin.sh)
#   bash bench/device_session.sh kernels   # issue 9's variants: refcheck, full self-test over
#                                          # every mode, memcheck, bench (device_fullrate.sh)
# Each part writes under $OUT/<part>/; a summary of every part is printed last.
set -o pipefail
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/sa-session}
mkdir -p "$OUT"
part=${1:-product}
summary=()
step() {
    local name=$1 limit=$2
    shift 2
    mkdir -p "$OUT/$name"
    local start=$SECONDS
    OUT=$OUT/$name timeout "$limit" "$@" >"/tmp/session-$name.console" 2>&1
    local rc=$?
    summary+=("$name: rc=$rc in $((SECONDS - start)) s")
    echo "===== $name rc=$rc ($((SECONDS - start)) s)"
    tail -n 45 "/tmp/session-$name.console"
}
case $part in
product)
    step install 300 bash bench/device_install.sh
    build=/tmp/sbi-data/sagebuild/sageattn
    if [ -f "$build/lib/libsageattn.so" ]; then
        start=$SECONDS
        mkdir -p "$OUT/selftest"
        bin/sagebuild selftest --build "$build" --full >"$OUT/selftest/selftest-full.txt" 2>&1
        rc=$?
        cp "$build/recommendation.json" "$OUT/selftest/" 2>/dev/null
        summary+=("selftest --full (CLI): rc=$rc in $((SECONDS - start)) s")
        tail -n 30 "$OUT/selftest/selftest-full.txt"
        # one file: a call brings back at most 8 (the drop-in step writes 5 of them)
        tar -czf "$OUT/selftest.tgz" -C "$OUT" selftest && rm -rf "$OUT/selftest"
        step dropin 280 bash bench/device_dropin.sh --lib "$build/lib/libsageattn.so"
    else
        summary+=("no library at $build: the install step did not build one")
    fi
    ;;
kernels)
    step fullrate 560 bash bench/device_fullrate.sh --memcheck
    ;;
*)
    echo "usage: bash bench/device_session.sh product|kernels" >&2
    exit 64
    ;;
esac
echo "===== summary ($part)"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary-$part.txt"
