#!/bin/sh
# The archs sagebuild builds come from kernels/archs/archs.def; the places that list them by hand
# (build --help, the man page, bash completion, the kernels' CMakeLists comment is checked by
# kernels/tests/arch-table-check.sh) must list the same ones, in the table's order. So must the
# docs that say what `auto` runs on each GPU (the table's auto_modes column): the README, the
# Python package's docstring and kernels/ALGORITHM.md.
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
# What auto runs, per GPU, as the C code reads the table (dump_arch_table --auto, built here).
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "skipped: no C compiler for the auto-mode part"; echo ok; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-archdocs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/dump" "$top/kernels/tests/dump_arch_table.c" \
    "$top/kernels/archs/sa_archs.c" || fail "dump_arch_table does not build"
"$tmp/dump" --auto > "$tmp/auto" || fail "dump_arch_table --auto failed"
[ -s "$tmp/auto" ] || fail "the table names no GPU auto runs on"
# "int8-fp16 on sm_80/86/87/90, int8-fp8-f16acc on sm_89/120/121, int8-fp8 on sm_100": modes in
# the order of their first GPU, each with its GPUs
phrase=$(awk '{ n = substr($1, 4); if (!($2 in gpus)) { order[++k] = $2; gpus[$2] = "sm_" n }
               else gpus[$2] = gpus[$2] "/" n }
              END { for (i = 1; i <= k; i++) printf "%s%s on %s", (i > 1 ? ", " : ""), order[i], gpus[order[i]] }' "$tmp/auto")
[ -n "$phrase" ] || fail "no phrase made of $(cat "$tmp/auto")"
for doc in README.md share/python/sageattention/__init__.py; do
    tr -s ' \n' '  ' < "$top/$doc" | grep -qE "(\(|: )$phrase\)" ||
        fail "$doc does not say what auto runs as the table does: ($phrase)"
done
f16acc=$(awk '$2 == "int8-fp8-f16acc" { list = list (list == "" ? "" : ", ") $1 } END { print list }' "$tmp/auto")
grep -qF "* **$f16acc: int8-fp8-f16acc.**" "$top/kernels/ALGORITHM.md" ||
    fail "kernels/ALGORITHM.md does not name the GPUs auto runs int8-fp8-f16acc on: $f16acc"
echo ok
