#!/bin/sh
# README notes a new user needs where they look for them: how a CMake consumer finds the
# installed package (CMAKE_PREFIX_PATH next to find_package).
set -u
here=$(cd "$(dirname "$0")" && pwd)
readme=$here/../../README.md
fail() { echo "FAIL: $*"; exit 1; }

# The paragraph that names find_package must also say how CMake finds <out>.
python3 - "$readme" <<'PY' || fail "README: find_package without -DCMAKE_PREFIX_PATH=<out> beside it"
import sys
paras = open(sys.argv[1]).read().split("\n\n")
hits = [p for p in paras if "find_package(sageattn)" in p]
sys.exit(0 if hits and all("-DCMAKE_PREFIX_PATH=<out>" in p for p in hits) else 1)
PY
echo ok
