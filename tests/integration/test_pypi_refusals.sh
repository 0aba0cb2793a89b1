#!/bin/sh
# fetch-cuda --source pypi failures, each clear and leaving nothing behind: a wheel whose bytes
# do not match the index's sha256, an index without the manifest's versions, CUDA 12 (refused
# before any request, naming the redist source), and usage errors.
. "$(dirname "$0")/fetch/lib.sh"
. "$REPO/tests/integration/pypi/lib.sh"
pypi_setup

# The index publishes a wrong sha256 for nvidia-cuda-crt.
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$IDX/bad/simple" --prefix "$T/p/bad" \
    --no-check >"$T/out1" 2>&1 && fail "a wrong hash was accepted"
grep -q "cuda_crt" "$T/out1" || fail "the error does not name the component: $(cat "$T/out1")"
grep -q "0000000000000000" "$T/out1" || fail "the error does not show the expected hash"
real=$(sha256sum "$WHEELS"/nvidia_cuda_crt-*.whl | cut -c1-64)
grep -q "$real" "$T/out1" || fail "the error does not show the real hash: $(cat "$T/out1")"
[ ! -e "$T/p/bad" ] || fail "a prefix was made from a wheel that failed its check"
# PyPI itself delivered nothing good: download elsewhere, not PyPI again.
grep -q "^  fix: sagebuild fetch-cuda --dry-run" "$T/out1" || fail "the fix: $(cat "$T/out1")"
no_debris "$T/p"
for f in "$SAGEBUILD_CACHE"/cuda/pypi/nvidia_cuda_crt-*; do
    case $f in
    *.whl) fail "the bad wheel was cached as $f" ;;
    *.part) [ ! -s "$f" ] || fail "the bad bytes were kept in $f" ;;
    esac
done

# The index has only other versions.
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$IDX/old/simple" --prefix "$T/p/old" \
    >"$T/out2" 2>&1
rc=$?
[ $rc = 2 ] || fail "no matching version: exit $rc: $(cat "$T/out2")"
grep -q "no wheel of nvidia-cuda-nvcc 13.0.88" "$T/out2" || fail "message: $(cat "$T/out2")"
grep -q "13.0.48" "$T/out2" || fail "the message does not list what the index has"
grep -q -- "--source redist" "$T/out2" || fail "the message does not name the redist source"
grep -q "fix:" "$T/out2" && fail "the message itself says what to do: $(cat "$T/out2")"
[ ! -e "$T/p/old" ] || fail "a prefix was made"

# An index that does not answer for the project, then one that does: tried in order.
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$IDX/none/simple" \
    --index-url "$IDX/simple" --prefix "$T/p/two" --dry-run >"$T/out3" 2>&1 ||
    fail "second index not used: $(cat "$T/out3")"
grep -q "$IDX/files/nvidia_nvvm-" "$T/out3" || fail "plan lacks the wheel URLs: $(cat "$T/out3")"

# Credentials in an index URL (private mirrors) are used but never shown.
CRED="http://ci:sekrit@127.0.0.1:$(cat "$T/port")"
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$CRED/simple" --prefix "$T/p/cred" \
    --dry-run --json >"$T/cred.json" 2>&1 || fail "index with credentials: $(cat "$T/cred.json")"
grep -q sekrit "$T/cred.json" && fail "the password was printed: $(cat "$T/cred.json")"
grep -q 'ci:\*\*\*@' "$T/cred.json" || fail "the redacted URL is missing: $(cat "$T/cred.json")"
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$CRED/none/simple" --prefix "$T/p/cred" \
    >"$T/cred.out" 2>&1 && fail "a missing project was accepted"
grep -q sekrit "$T/cred.out" && fail "the password was printed in an error: $(cat "$T/cred.out")"

# CUDA 12: refused before any request, naming the redist source.
lines=$(wc -l <"$T/index.log")
for v in 12.8 12.9.1; do
    $SB fetch-cuda --source pypi --cuda "$v" --index-url "$IDX/simple" --prefix "$T/p/12" \
        >"$T/out4" 2>&1 && fail "CUDA $v was not refused"
    grep -q "cannot come from PyPI" "$T/out4" || fail "refusal: $(cat "$T/out4")"
    grep -q -- "--source redist" "$T/out4" || fail "the refusal does not name --source redist"
    grep -q "fix:" "$T/out4" && fail "a refusal has no general fix: $(cat "$T/out4")"
done
# Through the environment's index and with a manifest naming 12.x, the same.
SAGEBUILD_INDEX_URLS="$IDX/simple" $SB fetch-cuda --source pypi \
    --manifest "$REPO/manifests/redistrib_12.8.1.json" --prefix "$T/p/12" --json >"$T/out5" 2>&1 &&
    fail "a 12.x manifest was not refused"
[ "$(json_get "$T/out5" 'd["status"]')" = error ] || fail "JSON refusal: $(cat "$T/out5")"
[ "$(wc -l <"$T/index.log")" = "$lines" ] || fail "a CUDA 12 request reached the index"

# Usage errors.
$SB fetch-cuda --source conda >/dev/null 2>"$T/err6"
[ $? = 64 ] || fail "--source conda is not a usage error"
grep -q "must be one of: redist, pypi, auto" "$T/err6" || fail "usage message: $(cat "$T/err6")"
exit 0
