#!/usr/bin/env bash
# kernels/archs/archs.def is read by the C code (CLI, sageattn-selftest) and by CMake; this
# check fails when CMake reads it differently from the C code (dump_arch_table), when its nvcc
# floors are not enforced exactly (each arch configures at its floor and stops one release
# below), or when kernels/CMakeLists.txt's option comment lists other archs.
#   arch-table-check.sh PATH/TO/dump_arch_table
set -u
dump_bin=$1
here=$(cd "$(dirname "$0")" && pwd)
kernels=$(dirname "$here")
if ! command -v cmake >/dev/null 2>&1; then
    echo "arch-table-check: skipped: no cmake on PATH"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "arch-table-check: FAIL: $*"; fail=1; }

"$dump_bin" >"$tmp/c.txt" || { echo "arch-table-check: $dump_bin failed"; exit 1; }
cmake -DMODE=dump -DOUT="$tmp/cmake.txt" -P "$here/arch_table.cmake" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; bad "cmake could not read archs.def"; }
if ! diff -u "$tmp/c.txt" "$tmp/cmake.txt" >"$tmp/diff"; then
    cat "$tmp/diff"
    bad "CMake reads archs.def differently from the C code (- C, + CMake)"
fi
[ -s "$tmp/c.txt" ] || bad "no arch in the table"

# One release below a version: 12.4 -> 12.3, 13.0 -> 12.9.
below() { local ma=${1%%.*} mi=${1#*.}; if [ "$mi" -gt 0 ]; then echo "$ma.$((mi - 1))"; else echo "$((ma - 1)).9"; fi; }
# cmake wraps its messages: $tmp/said holds the log on one line.
normalize() {
    local rc=0
    cmake -DMODE=normalize -DARCHS="$1" -DNVCC="$2" -DOUT="$tmp/n.txt" \
        -P "$here/arch_table.cmake" >"$tmp/log" 2>&1 || rc=$?
    tr -s ' \n' '  ' <"$tmp/log" >"$tmp/said"
    return $rc
}

while read -r name floor families code; do
    num=${name#sm_}
    if normalize "$name" "$floor"; then
        want="-gencode=arch=compute_$num,code=sm_$num"
        [ "$code" = ptx ] && want="-gencode=arch=compute_$num,code=compute_$num"
        wgmma=""
        case ",$families," in *,wgmma,*) wgmma=$name ;; esac
        got=$(cat "$tmp/n.txt")
        [ "$got" = "$name|$want|$wgmma" ] || bad "$name at nvcc $floor: got '$got', want '$name|$want|$wgmma'"
    else
        cat "$tmp/log"
        bad "$name refused by nvcc $floor, its floor in archs.def"
    fi
    old=$(below "$floor")
    if normalize "$name" "$old"; then
        bad "$name accepted with nvcc $old, below its floor $floor"
    elif ! grep -q "$name needs nvcc $floor or newer" "$tmp/said"; then
        cat "$tmp/log"
        bad "$name with nvcc $old: not the floor message"
    fi
done <"$tmp/c.txt"

names=$(cut -d' ' -f1 "$tmp/c.txt" | tr '\n' ' ' | sed 's/ $//')
if normalize "sm_75" "13.0"; then
    bad "sm_75, which the table has no kernels for, was accepted"
elif ! grep -q "use any of $names" "$tmp/said"; then
    cat "$tmp/log"
    bad "the refusal of sm_75 does not list the table's archs ($names)"
fi
grep -q "^#   SAGEATTN_ARCHS       SASS targets: $names\$" "$kernels/CMakeLists.txt" ||
    bad "kernels/CMakeLists.txt's SAGEATTN_ARCHS comment does not list $names"

[ $fail -eq 0 ] && echo "arch-table-check: CMake and C read the same $(wc -l <"$tmp/c.txt") archs; floors enforced"
exit $fail
