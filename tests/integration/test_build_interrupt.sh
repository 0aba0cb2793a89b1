#!/bin/sh
# Ctrl-C or SIGTERM during a build: the compilers die with sagebuild (they run in process groups
# of their own, out of reach of the terminal's Ctrl-C and of `timeout`), sagebuild returns only
# after they are gone, and the output folder keeps the last build's files, record and log.
# With a stand-in cmake whose "compiler" never stops; with the real cmake and ninja when they
# are installed (ninja puts each compile in a process group of its own); through `all`; for
# the self-test; and for the doctor's probes.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-intr.XXXXXX")
cleanup() {
    for f in "$tmp"/pids*; do
        [ -f "$f" ] && for p in $(cat "$f"); do kill -9 "$p" 2> /dev/null; done
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
bin=$tmp/bin
mk_cmake "$bin"
mk_toolkit "$tmp/cuda" 12.8 12.8.93 99 "75 80 86 89 90 100 120"
mk_kernels "$tmp/share"
export SAGEBUILD_DATADIR=$tmp/share FAKE_CMAKE_LOG=$tmp/cmake.log
out=$tmp/out
build() { PATH="$bin:$PATH" $SB build --arch sm_120a --cuda-home "$tmp/cuda" --out "$out" "$@"; }

# wait_lines FILE N: until FILE has N lines (10 s at most)
wait_lines() {
    i=0
    while [ "$(cat "$1" 2> /dev/null | wc -l)" -lt "$2" ] && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ "$(cat "$1" 2> /dev/null | wc -l)" -ge "$2" ] || fail "never started: $1"
}
# none_alive FILE: every pid in FILE is gone (zombies reaped by init count as gone)
none_alive() {
    for p in $(cat "$1"); do
        if kill -0 "$p" 2> /dev/null && ! grep -q '^State:.*Z' "/proc/$p/status" 2> /dev/null; then
            fail "$2: process $p outlived sagebuild: $(cat "/proc/$p/cmdline" 2> /dev/null | tr '\0' ' ')"
        fi
    done
}
# unchanged: the last good build's files, record and log are all still there, as they were
snapshot() { (cd "$out" && cat build-record.json build.log && ls lib include bin) > "$tmp/snap" 2>&1; }
unchanged() {
    (cd "$out" && cat build-record.json build.log && ls lib include bin) > "$tmp/now" 2>&1
    cmp -s "$tmp/snap" "$tmp/now" || fail "$1: the output folder changed: $(diff "$tmp/snap" "$tmp/now")"
}

build > "$tmp/o" 2>&1 || fail "first build: $(cat "$tmp/o")"
snapshot

# 1. SIGTERM (as from `timeout`): sagebuild dies of it, after its children.
# (... exec) so that $! is sagebuild itself, not a subshell
(FAKE_CMAKE_HANG_PIDS=$tmp/pids1 PATH="$bin:$PATH" exec $SB build --arch sm_120a \
    --cuda-home "$tmp/cuda" --out "$out" --force) > "$tmp/o" 2>&1 &
sb=$!
wait_lines "$tmp/pids1" 2
start=$(date +%s)
kill -TERM $sb
wait $sb
rc=$?
[ $rc = 143 ] || fail "SIGTERM: exit $rc, not death by SIGTERM (143): $(cat "$tmp/o")"
[ $(($(date +%s) - start)) -le 8 ] || fail "SIGTERM: sagebuild took too long to stop"
none_alive "$tmp/pids1" "SIGTERM"
unchanged "SIGTERM"

# 2. Ctrl-C on a terminal: the terminal's SIGINT reaches sagebuild's process group only.
if command -v script > /dev/null 2>&1; then
    mkfifo "$tmp/keys"
    # A background job of this shell has SIGINT ignored, and would hand that on: a terminal's
    # foreground job does not, so give it back its default first.
    FAKE_CMAKE_HANG_PIDS=$tmp/pids2 python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' script -qec "PATH='$bin:$PATH' $SB build --arch sm_120a \
        --cuda-home '$tmp/cuda' --out '$out' --force" /dev/null < "$tmp/keys" > "$tmp/o" 2>&1 &
    sc=$!
    exec 3> "$tmp/keys"
    wait_lines "$tmp/pids2" 2
    printf '\003' >&3
    i=0
    while kill -0 $sc 2> /dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    exec 3>&-
    kill -0 $sc 2> /dev/null && fail "Ctrl-C: sagebuild did not stop: $(cat "$tmp/o")"
    wait $sc
    none_alive "$tmp/pids2" "Ctrl-C"
    unchanged "Ctrl-C"
else
    echo "no script(1): the terminal Ctrl-C case is not run"
fi

# 3. The real cmake and ninja: ninja runs each command in a process group of its own.
if command -v cmake > /dev/null 2>&1 && command -v ninja > /dev/null 2>&1; then
    real=$tmp/real
    mkdir -p "$real/kernels/include"
    cat > "$real/kernels/CMakeLists.txt" << 'EOS'
cmake_minimum_required(VERSION 3.16)
project(fakekernels C)
add_library(sageattn SHARED k.c)
add_custom_target(maybe_slow ALL COMMAND sh ${CMAKE_SOURCE_DIR}/slow.sh VERBATIM)
install(TARGETS sageattn LIBRARY DESTINATION lib)
install(FILES include/sageattn.h DESTINATION include)
install(FILES sageattn.pc DESTINATION lib/pkgconfig)
install(PROGRAMS selftest.sh DESTINATION bin RENAME sageattn-selftest)
EOS
    echo 'int sa_fake(void) { return 1; }' > "$real/kernels/k.c"
    : > "$real/kernels/include/sageattn.h"
    : > "$real/kernels/sageattn.pc"
    printf '#!/bin/sh\nexit 77\n' > "$real/kernels/selftest.sh"
    printf '[ -n "${SLOW_PIDS:-}" ] || exit 0\necho $$ >> "$SLOW_PIDS"\nexec sleep 300\n' > "$real/kernels/slow.sh"
    rout=$tmp/rout
    rbuild() { SAGEBUILD_DATADIR=$real $SB build --arch sm_120a --cuda-home "$tmp/cuda" --out "$rout" "$@"; }
    rbuild > "$tmp/o" 2>&1 || fail "real cmake: first build: $(cat "$tmp/o")"
    cp "$rout/build-record.json" "$tmp/rrecord"
    (SLOW_PIDS=$tmp/pids3 SAGEBUILD_DATADIR=$real exec $SB build --arch sm_120a \
        --cuda-home "$tmp/cuda" --out "$rout" --force) > "$tmp/o" 2>&1 &
    sb=$!
    wait_lines "$tmp/pids3" 1
    kill -TERM $sb
    wait $sb
    rc=$?
    [ $rc = 143 ] || fail "real cmake, SIGTERM: exit $rc: $(cat "$tmp/o")"
    none_alive "$tmp/pids3" "real cmake and ninja"
    cmp -s "$rout/build-record.json" "$tmp/rrecord" || fail "real cmake: the record changed"
    [ -e "$rout/lib/libsageattn.so" ] || fail "real cmake: the installed library went away"

    # 4. The same through `all` (needs a toolkit the doctor accepts: CI's nvcc on PATH).
    if command -v nvcc > /dev/null 2>&1; then
        (SAGEBUILD_FAKE_GPUS=none SAGEBUILD_DATADIR=$real SLOW_PIDS=$tmp/pids4 \
            exec $SAGEBUILD all --arch sm_120a --out "$rout") > "$tmp/o" 2>&1 &
        sb=$!
        wait_lines "$tmp/pids4" 1
        kill -TERM $sb
        wait $sb
        rc=$?
        [ $rc = 143 ] || fail "all, SIGTERM: exit $rc: $(cat "$tmp/o")"
        none_alive "$tmp/pids4" "all's build stage"
    fi
else
    echo "no cmake or ninja: the real-cmake case is not run"
fi

# 5. The self-test: a hanging sageattn-selftest goes with sagebuild too.
(FAKE_SELFTEST=hang SAGEBUILD_FAKE_GPUS=none exec $SB selftest --build "$out") > "$tmp/o" 2>&1 &
sb=$!
i=0
pg=
while [ -z "$pg" ] && [ $i -lt 100 ]; do
    pid=$(pgrep -f "$out/bin/sageattn-selftest" | head -n 1)
    [ -n "$pid" ] && pg=$(ps -o pgid= -p "$pid" | tr -d ' ')
    [ -n "$pg" ] || sleep 0.1
    i=$((i + 1))
done
[ -n "$pg" ] || fail "the self-test never started"
kill -TERM $sb
wait $sb
rc=$?
[ $rc = 143 ] || fail "selftest, SIGTERM: exit $rc"
ps -eo pgid=,stat=,args= | awk -v g="$pg" '$1 == g && $2 !~ /Z/ { found = 1 } END { exit !found }' &&
    fail "selftest: its process group outlived sagebuild: $(ps -eo pid,pgid,args | awk -v g="$pg" '$2 == g')"

# 6. The doctor's probes: a python that hangs while torch is looked at goes too.
printf '#!/bin/sh\necho $$ >> "%s"\nexec sleep 300\n' "$tmp/pids6" > "$tmp/hang-python"
chmod +x "$tmp/hang-python"
(SAGEBUILD_FAKE_GPUS=none exec $SB doctor --python "$tmp/hang-python") > "$tmp/o" 2>&1 &
sb=$!
wait_lines "$tmp/pids6" 1
kill -TERM $sb
wait $sb
rc=$?
[ $rc = 143 ] || fail "doctor, SIGTERM: exit $rc: $(cat "$tmp/o")"
none_alive "$tmp/pids6" "the doctor's python probe"
echo ok
