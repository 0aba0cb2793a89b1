#!/bin/sh
# The bash completion offers what the program really accepts: commands, each command's options
# (read from its --help), doctor's check ids and fixed values.
set -u
command -v bash >/dev/null || { echo "skipped: no bash"; exit 77; }
SB=$SAGEBUILD
here=$(cd "$(dirname "$0")/../.." && pwd)
complete_words() { # complete_words WORD... : the candidates for the last word
    bash -c '
        source "$1/share/completion/sagebuild.bash"
        shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _sagebuild
        printf "%s\n" "${COMPREPLY[@]}"
    ' _ "$here" "$@"
}
fail() { echo "FAIL: $*"; exit 1; }

out=$(complete_words "$SB" "")
for c in doctor fetch-cuda env mirror build selftest wheel install all help; do
    echo "$out" | grep -qx "$c" || fail "command $c not offered: $out"
done
complete_words "$SB" sel | grep -qx selftest || fail "prefix 'sel' does not give selftest"
out=$(complete_words "$SB" selftest --)
echo "$out" | grep -qx -- --full || fail "selftest --full missing: $out"
echo "$out" | grep -qx -- --quick || fail "selftest --quick missing"
out=$(complete_words "$SB" fetch-cuda --)
for o in --cuda --mirror --prefix --offline --source --index-url --dry-run; do
    echo "$out" | grep -qx -- "$o" || fail "fetch-cuda $o missing"
done
# Every option a command's --help lists (which is what the completion offers) is documented in
# the man page, so --help, completion and man stay in step.
man=$here/man/sagebuild.1
for c in doctor fetch-cuda env mirror build selftest wheel install all; do
    n=0
    for o in $(complete_words "$SB" "$c" --); do
        n=$((n + 1))
        grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$man" || fail "$c $o is not in the man page"
    done
    [ $n -gt 0 ] || fail "no options offered for $c"
done
complete_words "$SB" doctor tool | grep -qx toolkit.nvcc || fail "doctor check ids not offered"
[ "$(complete_words "$SB" all --source p)" = pypi ] || fail "--source values"
echo ok
