#!/bin/sh
# Mistakes caught before any work, with what is wrong and what would work: a mirror or index
# that is not a URL, a prefix that cannot be installed into, a release nobody knows, a self-test
# folder that does not exist, a mirror of a cache without archives. And when NVIDIA's archives
# cannot be downloaded for CUDA 13, the fix offers NVIDIA's wheels from PyPI first.
set -u
SB=${SAGEBUILD_SAN:-$SAGEBUILD}
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/sb-upfront.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export HOME=$T/home SAGEBUILD_CACHE=$T/cache XDG_DATA_HOME=$T/data SAGEBUILD_DATADIR=$here/../..
export SAGEBUILD_RETRIES=1 SAGEBUILD_TIMEOUT=5
unset SAGEBUILD_MIRRORS SAGEBUILD_INDEX_URLS PIP_INDEX_URL
mkdir -p "$HOME"

# 1. --mirror / --index-url must be URLs (scheme and host), checked before the plan is printed.
$SB fetch-cuda --cuda 13.0 --offline --mirror not-a-url --dry-run > "$T/o" 2> "$T/e"
[ $? = 64 ] || fail "--mirror not-a-url: want 64: $(cat "$T/o" "$T/e")"
grep -q "not-a-url" "$T/o" && fail "the bad mirror was printed as a URL: $(cat "$T/o")"
grep -q -- "--mirror 'not-a-url': it is not a URL" "$T/e" || fail "mirror message: $(cat "$T/e")"
$SB fetch-cuda --mirror https:///redist --dry-run > /dev/null 2> "$T/e"
[ $? = 64 ] && grep -q "no host" "$T/e" || fail "--mirror without a host: $(cat "$T/e")"
$SB fetch-cuda --source pypi --index-url ftp://pypi.example/simple --dry-run > /dev/null 2> "$T/e"
[ $? = 64 ] && grep -q "'ftp' is not supported" "$T/e" || fail "--index-url ftp: $(cat "$T/e")"
$SB fetch-cuda --cuda 13.0 --offline --mirror "file://$T/m" --mirror http://127.0.0.1:9/r/ \
    --dry-run > "$T/o" 2> "$T/e" || fail "good mirrors refused: $(cat "$T/e")"

# 2. --prefix that cannot be installed into: refused in the dry run, saying why.
$SB fetch-cuda --cuda 13.0 --offline --prefix /proc/forbidden --dry-run > "$T/o" 2> "$T/e"
[ $? = 2 ] || fail "--prefix /proc/forbidden passed the dry run: $(cat "$T/o" "$T/e")"
grep -q "cannot install into /proc/forbidden: /proc refuses new files" "$T/e" ||
    fail "prefix message: $(cat "$T/e")"
grep -q "choose another --prefix" "$T/e" || fail "prefix fix: $(cat "$T/e")"
grep -q "fix:" "$T/e" && fail "the message itself says what to do: $(cat "$T/e")"
: > "$T/afile"
$SB fetch-cuda --cuda 13.0 --offline --prefix "$T/afile/cuda" --dry-run --json > "$T/j" 2> "$T/e"
[ $? = 2 ] || fail "a prefix under a file passed the dry run"
grep -q "$T/afile is a file, not a folder" "$T/j" || fail "prefix under a file: $(cat "$T/j")"
$SB fetch-cuda --cuda 13.0 --offline --prefix "$T/new/deep/cuda" --dry-run > "$T/o" 2> "$T/e" ||
    fail "a prefix whose parents can be made was refused: $(cat "$T/e")"
[ -e "$T/new" ] && fail "the dry run created folders"

# 3. --cuda 99.9: the releases known here are listed.
$SB fetch-cuda --cuda 99.9 --offline --dry-run > "$T/o" 2> "$T/e"
[ $? = 2 ] || fail "--cuda 99.9: exit"
grep -q "releases known here (bundled or cached): 12.6.3, 12.8.1, 12.9.1, 13.0.2" "$T/e" ||
    fail "--cuda 99.9 does not list the known releases: $(cat "$T/e")"
grep -q "fix:" "$T/e" && fail "--cuda 99.9: the message itself says what to do: $(cat "$T/e")"

# 3b. A release whose manifest is neither here nor on the mirror: the manifest file itself (or
# another --mirror) is the way out; not a dry run, which stops at the same point, and not PyPI,
# whose versions come from that manifest.
$SB fetch-cuda --cuda 13.0.99 --mirror http://127.0.0.1:9/redist/ --no-default-mirror \
    --dry-run > "$T/o" 2> "$T/e"
[ $? = 2 ] || fail "--cuda 13.0.99: exit: $(cat "$T/e")"
grep -q "no mirror has the manifest for CUDA 13.0.99" "$T/e" || fail "13.0.99: $(cat "$T/e")"
grep -q "^  fix: sagebuild fetch-cuda --manifest FILE" "$T/e" || fail "13.0.99 fix: $(cat "$T/e")"
$SB fetch-cuda --cuda 13.0.99 --offline --dry-run --json > "$T/j" 2> "$T/e"
[ $? = 2 ] || fail "--cuda 13.0.99 --offline: exit: $(cat "$T/j")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["fix"].startswith("sagebuild fetch-cuda --manifest FILE"))' "$T/j" ||
    fail "13.0.99 --offline fix in JSON: $(cat "$T/j")"

# 4. selftest --build of a folder that does not exist is a usage error, not "skipped".
SAGEBUILD_FAKE_GPUS=none $SB selftest --build "$T/nonexistent" > "$T/o" 2> "$T/e"
rc=$?
[ $rc = 64 ] || fail "selftest --build nonexistent: exit $rc (want 64): $(cat "$T/o" "$T/e")"
grep -q "no such folder" "$T/e" || fail "selftest message: $(cat "$T/e")"

# 5. mirror with nothing cached, then with only a manifest cached (a dry run caches it).
$SB mirror --out "$T/mirror" > "$T/o" 2> "$T/e"
[ $? != 0 ] || fail "mirror of an empty cache succeeded: $(cat "$T/o")"
$SB fetch-cuda --cuda 13.0 --offline --dry-run > /dev/null 2>&1 || fail "dry run"
ls "$SAGEBUILD_CACHE"/cuda/redistrib_13.0.2.json > /dev/null 2>&1 ||
    fail "test premise: the dry run caches the manifest"
$SB mirror --out "$T/mirror" > "$T/o" 2> "$T/e"
[ $? = 2 ] || fail "mirror with no archives: exit: $(cat "$T/o" "$T/e")"
grep -q "mirror ready" "$T/o" && fail "mirror ready with nothing in it: $(cat "$T/o")"
grep -q "nothing to mirror.*holds no archive of CUDA 13.0.2" "$T/e" || fail "mirror message: $(cat "$T/e")"
[ -e "$T/mirror/index.html" ] && fail "an empty mirror was written"

# 6. NVIDIA's site unreachable (a port nobody listens on): for CUDA 13 the fix is PyPI first.
$SB fetch-cuda --cuda 13.0.2 --mirror http://127.0.0.1:9/redist/ --no-default-mirror \
    --prefix "$T/p13" --no-check > "$T/o" 2> "$T/e"
[ $? = 2 ] || fail "unreachable mirror: exit: $(cat "$T/e")"
grep -q "^  fix: sagebuild fetch-cuda --source pypi" "$T/e" || fail "CUDA 13 fix: $(cat "$T/e")"
$SB fetch-cuda --cuda 13.0.2 --mirror http://127.0.0.1:9/redist/ --no-default-mirror \
    --prefix "$T/p13" --no-check --json > "$T/j" 2> "$T/e"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["fix"].startswith("sagebuild fetch-cuda --source pypi"))' "$T/j" ||
    fail "CUDA 13 fix in JSON: $(cat "$T/j")"
# CUDA 12's wheels hold no nvcc: no PyPI there
$SB fetch-cuda --cuda 12.8.1 --mirror http://127.0.0.1:9/redist/ --no-default-mirror \
    --prefix "$T/p12" --no-check > "$T/o" 2> "$T/e"
grep -q "^  fix: " "$T/e" || fail "CUDA 12 has a fix line: $(cat "$T/e")"
grep -q "source pypi" "$T/e" && fail "CUDA 12 must not be offered PyPI: $(cat "$T/e")"
echo ok
