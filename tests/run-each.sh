#!/bin/sh
# Runs each test program or script given, reports pass/fail/skip, fails if any failed; the whole
# output of each failing test is printed and kept in build/test-logs/<suite>/ ($TEST_LOG_DIR).
# Exit 77 from a test means "skipped" (automake's convention) and prints its reason.
suite=$1
shift
pass=0 fail=0 skip=0 failed=""
for t in "$@"; do
    case $t in
    *.sh) sh "$t" > "${TMPDIR:-/tmp}/sb-test.$$.log" 2>&1 ;;
    *) "$t" > "${TMPDIR:-/tmp}/sb-test.$$.log" 2>&1 ;;
    esac
    rc=$?
    name=$(basename "$t")
    if [ $rc = 0 ]; then
        pass=$((pass + 1)); echo "  PASS  $name"
    elif [ $rc = 77 ]; then
        skip=$((skip + 1)); echo "  SKIP  $name: $(tail -n 1 "${TMPDIR:-/tmp}/sb-test.$$.log")"
    else
        fail=$((fail + 1)); failed="$failed $name"
        # the whole output of the failing test, shown here and kept for later
        keep=${TEST_LOG_DIR:-build/test-logs}/$(printf '%s' "$suite" | tr -c 'A-Za-z0-9_.-' '_')
        mkdir -p "$keep" && cp "${TMPDIR:-/tmp}/sb-test.$$.log" "$keep/$name.log"
        echo "  FAIL  $name (exit $rc; log: $keep/$name.log)"
        sed 's/^/        /' "${TMPDIR:-/tmp}/sb-test.$$.log"
    fi
done
rm -f "${TMPDIR:-/tmp}/sb-test.$$.log"
echo "$suite: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ] || { echo "$suite: failed:$failed"; exit 1; }
