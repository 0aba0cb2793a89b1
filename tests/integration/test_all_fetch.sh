#!/bin/sh
# sagebuild all end to end with no GPU and no internet: the doctor finds the toolkit unfit (it
# names CUDA 12.8 while torch wants 13.0), fetch-cuda installs 13.0 from a local mirror built
# from the toolkit installed here and served on 127.0.0.1, build compiles the real kernels for
# one arch (sm_80: the fewest kernels) with the fetched nvcc, and the self-test reaches its
# no-GPU skip (exit 77, which `all` reports as success). Each stage's own result ("result" in
# its JSON) is checked against what really happened, so a stage that `all` misreads fails here.
. "$(dirname "$0")/fetch/lib.sh"
command -v cmake > /dev/null 2>&1 || { echo "skipped: no cmake on PATH"; exit 77; }
fetch_setup
server_start
SB=$SAGEBUILD # stages are this binary run again: the plain build, as test_all_flow.sh says

export HOME="$T/home" SAGEBUILD_FAKE_GPUS=none NO_COLOR=1 SAGEBUILD_MIRRORS="$M/ok/"
mkdir -p "$HOME"
unset CC CXX CUDAHOSTCXX CUDA_PATH NVCC_CCBIN SAGEBUILD_PYTHON
# torch 2.9 built for CUDA 13.0, as its version.py says: what fetch-cuda fetches by default.
mkdir -p "$T/site/torch"
printf "__version__ = '2.9.0+cu130'\ncuda = '13.0'\ngit_version = '0'\nhip = None\n" \
    > "$T/site/torch/version.py"
export PYTHONPATH="$T/site"
# The toolkit in CUDA_HOME is 12.8: the doctor's toolkit check says it does not fit torch.
mkdir -p "$T/old/bin" "$T/old/include/crt"
cat > "$T/old/bin/nvcc" <<'EOS'
#!/bin/sh
case "$*" in
*--version*) echo "Cuda compilation tools, release 12.8, V12.8.93" ;;
*--list-gpu-arch*) for a in 75 80 86 89 90 100 120; do echo compute_$a; done ;;
*) echo "this nvcc cannot compile" >&2; exit 1 ;;
esac
EOS
chmod +x "$T/old/bin/nvcc"
export CUDA_HOME="$T/old"
out="$T/out"

$SB all --arch sm_80 --yes --out "$out" --json > "$T/all.json" 2> "$T/all.err"
rc=$?
[ $rc = 0 ] || fail "all: exit $rc: $(cat "$T/all.json" "$T/all.err" | tail -n 80)"
. "$(dirname "$0")/build/all_stage.sh"
stage() { all_stage "$T/all.json" "$@"; } # over all's JSON of this test
[ "$(stage - "d['status'], d['exit_code'], d['stopped_at']")" = "warn 0 None" ] ||
    fail "all's result: $(cat "$T/all.json")"
[ "$(stage doctor "s['status'], r['command'], r['status']")" = "warn doctor error" ] ||
    fail "doctor: $(stage doctor 's')"
stage doctor "[f['id'] for f in p['findings'] if f['status']=='error']" | grep -q "toolkit\." ||
    fail "the doctor's result names no toolkit finding: $(stage doctor 'p')"
# fetch-cuda: installed, and `all` took its prefix from the result.
[ "$(stage fetch-cuda "s['status'], r['status'], o['status'], r['exit_code']")" = "ok ok installed 0" ] ||
    fail "fetch-cuda: $(stage fetch-cuda 's')"
prefix=$(stage fetch-cuda "p['prefix']")
[ "$prefix" = "$(stage fetch-cuda "o['prefix']")" ] || fail "fetch-cuda's payload prefix differs"
[ "$(stage fetch-cuda "s['summary']")" = "toolkit in $prefix" ] || fail "fetch line: $(stage fetch-cuda 's')"
[ -x "$prefix/bin/nvcc" ] || fail "no nvcc in the fetched prefix $prefix"
[ "$(stage fetch-cuda "p['release']")" = 13.0.9 ] || fail "release: $(stage fetch-cuda 'p')"
# build: with the fetched nvcc, for sm_80, into --out; all's line is the build's own summary.
[ "$(stage build "s['status'], r['status'], p['out'], p['archs'], p['up_to_date']")" = "ok ok $out sm_80 False" ] ||
    fail "build: $(stage build 'r')"
[ "$(stage build "s['summary'] == r['summary']")" = True ] || fail "build line: $(stage build 's')"
json_get "$out/build-record.json" "d['nvcc']['path']" | grep -q "^$prefix/" ||
    fail "the build did not use the fetched nvcc: $(json_get "$out/build-record.json" "d['nvcc']")"
for f in lib/libsageattn.so include/sageattn.h bin/sageattn-selftest; do
    [ -e "$out/$f" ] || fail "missing $out/$f"
done
# selftest: the real program on a machine with no GPU: skipped, exit 77, not a failure.
[ "$(stage selftest "s['status'], r['status'], r['exit_code'], o['exit_code']")" = "skipped skipped 77 77" ] ||
    fail "selftest: $(stage selftest 's')"
stage selftest "p['skipped']" | grep -q '^no GPU' || fail "skip reason: $(stage selftest 'p')"
[ "$(stage selftest "s['summary'] == r['summary']")" = True ] || fail "selftest line"
# SB_STAGE_FIXTURES=DIR: keep each stage's JSON, with the temporary paths made stable (how
# tests/unit/fixtures/stages/ was captured).
if [ -n "${SB_STAGE_FIXTURES:-}" ]; then
    python3 - "$T/all.json" "$SB_STAGE_FIXTURES" "$T" "$REPO" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = {"fetch-cuda": "fetch-installed", "build": "build-ok", "selftest": "selftest-skipped"}
for s in d["stages"]:
    if s["stage"] in names:
        text = json.dumps(s["output"], indent=2).replace(sys.argv[3], "/home/u")
        open("%s/%s.json" % (sys.argv[2], names[s["stage"]]), "w").write(
            text.replace(sys.argv[4], "/src/sagebuild") + "\n")
PY
fi
# The stages on their own give the results `all` read (exit status = result's exit code).
$SB selftest --build "$out" --json > "$T/st.json"
rc=$?
[ "$rc $(json_get "$T/st.json" "d['result']['exit_code']") $(json_get "$T/st.json" "d['result']['status']")" = "77 77 skipped" ] ||
    fail "selftest alone: exit $rc, $(cat "$T/st.json")"

# Again, for people: nothing to compile, the toolkit fetched again from the cache, the same end.
$SB all --arch sm_80 --yes --out "$out" > "$T/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "second all: exit $rc: $(cat "$T/o")"
grep -q "fetch-cuda *toolkit in $prefix" "$T/o" || fail "fetch line: $(cat "$T/o")"
grep -q "build *sm_80 in $out: up to date, no work done" "$T/o" || fail "build line: $(cat "$T/o")"
grep -q 'selftest *skipped: no GPU' "$T/o" || fail "selftest line: $(cat "$T/o")"
grep -q 'built; the self-test needs a GPU' "$T/o" || fail "last line: $(cat "$T/o")"
echo ok
