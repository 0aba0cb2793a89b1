#!/bin/sh
# share/docker/Dockerfile stays in step with the program (no Docker daemon in CI to build it):
# every sagebuild command line in it uses options that command's --help lists, it builds the
# wheel with --json and reads the exit status, and it installs the wheel offline.
set -u
SB=${SAGEBUILD:?}
here=$(cd "$(dirname "$0")/../.." && pwd)
file=$here/share/docker/Dockerfile
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$file" ] || fail "no $file"
lines=$(grep -v '^ *#' "$file" | grep -o 'sagebuild [a-z][a-z-]* [^|;&}]*' || true)
[ -n "$lines" ] || fail "no sagebuild command in the Dockerfile"
n=0
echo "$lines" | while read -r _ cmd rest; do
    help=$("$SB" "$cmd" --help 2>&1) || { echo "FAIL: sagebuild $cmd --help: $help"; exit 1; }
    for word in $rest; do
        case $word in
        --*) echo "$help" | grep -q -- "${word%%=*}" || { echo "FAIL: $cmd $word is not in its --help"; exit 1; } ;;
        esac
    done
done || exit 1
grep -q 'sagebuild wheel --arch "$ARCH" --out /dist --json' "$file" || fail "the wheel step"
grep -q 'sagebuild fetch-cuda --cuda "$CUDA" --json' "$file" || fail "the fetch step"
grep -q 'pip install --no-index --no-deps /dist/\*.whl' "$file" || fail "the offline install check"
grep -q 'import sageattention' "$file" || fail "the import check"
# The packages the image installs cover what make needs (share/dev/ensure-deps.sh).
for pkg in libcurl4-openssl-dev libarchive-dev libcjson-dev libssl-dev pkg-config cmake python3-venv; do
    grep -q "$pkg" "$file" || fail "the image lacks $pkg"
done
echo ok
