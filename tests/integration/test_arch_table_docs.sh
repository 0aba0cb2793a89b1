#!/bin/sh
# The archs sagebuild builds come from kernels/archs/archs.def; the places that list them by hand
# (build --help, the man page, bash completion, the kernels' CMakeLists comment is checked by
# kernels/tests/arch-table-check.sh) must list the same ones, in the table's order.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
fail() { echo "FAIL: $*"; exit 1; }

# What the binary knows, from the table: the refusal of an arch lists every one.
said=$($SAGEBUILD build --arch sm_75 2>&1)
names=$(echo "$said" | sed -n "s/.*the kernels are built for: \(.*\) (or 'native', 'all').*/\1/p" | tr -d ',')
[ -n "$names" ] || fail "build --arch sm_75 does not list the archs: $said"
case " $names " in *" sm_90a "*) ;; *) fail "the table's archs lack sm_90a: $names" ;; esac

# the option's help may wrap anywhere: read it as one line
help=$($SAGEBUILD build --help 2>&1 | tr -s ' \n' '  ' |
    sed -n 's/.* --arch LIST \(sm_[0-9a-z_ ]*\), comma.*/\1/p')
[ "$help" = "$names" ] || fail "build --help lists '$help', the table '$names'"

man_list=$(sed -n 's/^Comma-separated archs: \(.*\) (also$/\1/p' "$top/man/sagebuild.1" | tr -d ',')
[ "$man_list" = "$names" ] || fail "the man page lists '$man_list', the table '$names'"

completion=$(sed -n "s/.*compgen -W 'native all \(sm_[^']*\)'.*/\1/p" "$top/share/completion/sagebuild.bash")
[ "$completion" = "$names" ] || fail "bash completion offers '$completion', the table '$names'"
echo ok
