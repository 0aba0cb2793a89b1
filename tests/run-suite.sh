#!/bin/sh
# Runs one test suite (a make target) for `make test`: its whole output (compiler commands, each
# test's PASS line) goes to build/test-logs/TARGET.log, and a person reads one line for it. On a
# failure it prints the failing tests' own logs (run-each.sh shows each one whole), or, when
# the suite did not get as far as its tests (a compile error), the end of the suite's output.
#   run-suite.sh NAME TARGET        (MAKE: the make to run, from the Makefile)
name=$1
target=$2
dir=build/test-logs
log=$dir/$target.log
mkdir -p "$dir"
start=$(date +%s)
${MAKE:-make} --no-print-directory "$target" > "$log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
# run-each.sh ends with "SUITE: N passed, M failed, K skipped"
counts=$(grep -E ': [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1 | sed 's/^[^:]*: //')
# python's unittest ends with "Ran N tests in S" and "OK (skipped=K)"
[ -n "$counts" ] && [ -z "${counts##*passed*}" ] ||
    counts=$(grep -E '^Ran [0-9]+ tests? in ' "$log" | tail -n 1 | sed 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1 run/')
if [ $rc = 0 ]; then
    printf '  ok    %-28s %4d s%s\n' "$name" "$secs" "${counts:+  ($counts)}"
    exit 0
fi
printf '  FAIL  %-28s %4d s%s   (whole output: %s)\n' "$name" "$secs" "${counts:+  ($counts)}" "$log"
if grep -q '^  FAIL  ' "$log"; then
    # each FAIL line with the whole output under it, then the suite's own summary
    awk '/^  (PASS|SKIP)  / { show = 0 } /^  FAIL  / { show = 1 }
         show || / [0-9]+ passed, [0-9]+ failed/ || /: failed:/' "$log"
else
    tail -n 60 "$log"
fi
exit 1
