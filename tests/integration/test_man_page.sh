#!/bin/sh
# The man page renders cleanly at 80 columns: no groff/man warnings (lines that cannot be
# adjusted or broken, unknown glyphs) and the right glyphs (Q·K, not the micro sign).
set -u
here=$(cd "$(dirname "$0")" && pwd)
page=$here/../../man/sagebuild.1
fail() { echo "FAIL: $*"; exit 1; }
# ensure-deps.sh --test installs man-db and groff-base; a CI without them must not pass silently.
command -v man > /dev/null 2>&1 || fail "man is not installed (share/dev/ensure-deps.sh --test installs man-db)"
man --version > /dev/null 2>&1 || fail "man does not run (a minimized image's stub?): $(man --version 2>&1)"

warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 > /dev/null)
[ -z "$warnings" ] || fail "man --warnings at 80 columns:
$warnings"
text=$(MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$page" 2> /dev/null)
echo "$text" | grep -q 'Q·K' || fail "the kernels' product Q·K is not rendered with a middle dot"
echo "$text" | grep -q 'µ' && fail "the page renders a micro sign (\\(mc where \\(pc was meant)"
# every rendered line fits in 80 columns
long=$(echo "$text" | python3 -c 'import sys
for n, line in enumerate(sys.stdin.read().splitlines(), 1):
    if len(line) > 80: print(n, line)')
[ -z "$long" ] || fail "lines wider than 80 columns:
$long"
echo ok
