#!/bin/sh
# `make test` prints what a person reads: one line per suite, and for a failure the failing
# test's whole output (not the compiler commands before it); every suite's whole output stays
# in build/test-logs/. Run on a small Makefile of suites that pass and fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-runner.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$tmp/t"
printf '#!/bin/sh\necho fine\n' > "$tmp/t/test_good.sh"
printf '#!/bin/sh\ni=1\nwhile [ $i -le 150 ]; do echo "detail line $i"; i=$((i + 1)); done\nexit 3\n' > "$tmp/t/test_bad.sh"
printf '#!/bin/sh\necho "needs a GPU"\nexit 77\n' > "$tmp/t/test_skip.sh"
cat > "$tmp/Makefile" << EOS
noise:
	@i=1; while [ \$\$i -le 100 ]; do echo "cc -O2 -c src/file\$\$i.c -o build/file\$\$i.o"; i=\$\$((i + 1)); done
passing: noise
	@sh $root/tests/run-each.sh "demo" t/test_good.sh t/test_skip.sh
failing: noise
	@sh $root/tests/run-each.sh "demo" t/test_good.sh t/test_bad.sh
broken: noise
	@echo "src/x.c:3: error: expected ';'"; exit 2
EOS
cd "$tmp" || fail "cd"

sh "$root/tests/run-suite.sh" "demo suite" passing > out 2>&1 || fail "a passing suite failed: $(cat out)"
[ "$(wc -l < out)" = 1 ] || fail "a passing suite prints one line: $(cat out)"
grep -q '^  ok    demo suite .* s  (1 passed, 0 failed, 1 skipped)$' out || fail "ok line: $(cat out)"
grep -q 'cc -O2 -c src/file100.c' build/test-logs/passing.log || fail "the whole output is kept"

sh "$root/tests/run-suite.sh" "demo suite" failing > out 2>&1 && fail "a failing suite passed"
head -n 1 out | grep -q '^  FAIL  demo suite .*(whole output: build/test-logs/failing.log)' ||
    fail "FAIL line: $(head -n 1 out)"
for i in 1 75 150; do
    grep -q "detail line $i\$" out || fail "the failing test's output is not shown whole (line $i): $(cat out)"
done
grep -q 'cc -O2' out && fail "compiler commands shown for a test failure: $(head -n 5 out)"
grep -q 'PASS' out && fail "passing tests listed under a failure: $(cat out)"
grep -q '^demo: 1 passed, 1 failed, 0 skipped$' out || fail "the suite's summary: $(tail -n 3 out)"
[ -f build/test-logs/demo/test_bad.sh.log ] || fail "the failing test's log is not kept"
[ "$(wc -l < build/test-logs/demo/test_bad.sh.log)" = 150 ] || fail "kept log is not whole"

sh "$root/tests/run-suite.sh" "demo build" broken > out 2>&1 && fail "a broken suite passed"
grep -q "src/x.c:3: error: expected ';'" out || fail "a compile error is shown: $(cat out)"
[ "$(wc -l < out)" -le 61 ] || fail "a compile error shows the end of the output only"

# README says what make test costs.
grep -q 'make test.*takes about [0-9]* minutes' "$root/README.md" ||
    fail "README does not say how long make test takes"
echo ok
