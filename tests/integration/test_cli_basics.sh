#!/bin/sh
# The command table and global options: exit codes and messages a user or CI script relies on.
set -u
SB=${SAGEBUILD_SAN:-$SAGEBUILD}
fail() { echo "FAIL: $*"; exit 1; }

$SB --version | grep -q '^sagebuild [0-9]' || fail "--version"
$SB --help | grep -q 'fetch-cuda' || fail "--help lists commands"
$SB >/dev/null 2>&1; [ $? = 64 ] || fail "no command must exit 64"
$SB frobnicate 2>/tmp/sb-err.$$; [ $? = 64 ] || fail "unknown command must exit 64"
grep -q "not a command" /tmp/sb-err.$$ || fail "unknown command message"
$SB --bogus-flag >/dev/null 2>&1; [ $? = 64 ] || fail "unknown global option must exit 64"
$SB help nonexistent >/dev/null 2>&1; [ $? = 64 ] || fail "help of unknown command must exit 64"
rm -f /tmp/sb-err.$$
echo ok
