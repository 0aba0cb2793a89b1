#!/bin/sh
# sagebuild all --python PY: after build and selftest, the drop-in is installed into PY (a real
# venv, offline pip) and a real call runs through PY on each GPU; without a GPU, or without torch
# (or a torch that sees no GPU) in PY, the call is skipped with the reason. Uses a stand-in cmake
# and the CI's nvcc, as test_all_flow.sh does.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-allpy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
mkdir -p "$tmp/t"
export TMPDIR=$tmp/t
command -v nvcc > /dev/null 2>&1 || { echo "skipped: no nvcc on PATH for the build stage"; exit 77; }
if ! python3 -m venv "$tmp/venv" > "$tmp/o" 2>&1; then
    echo "skipped: python3 -m venv does not work here: $(tail -n 1 "$tmp/o")"
    exit 77
fi
py=$tmp/venv/bin/python
repo=$(cd "$here/../.." && pwd)
# Stages are this binary run again: the plain build (see test_all_flow.sh).
SB=$SAGEBUILD
bin=$tmp/bin
mk_cmake "$bin"
mk_kernels "$tmp/share"
mkdir -p "$tmp/share/python"
if [ -f "$repo/share/python/sageattention/__init__.py" ]; then
    cp -R "$repo/share/python/sageattention" "$tmp/share/python/"
else
    mkdir -p "$tmp/share/python/sageattention"
    echo '__version__ = "2.2.0+sagebuild"' > "$tmp/share/python/sageattention/__init__.py"
fi
export SAGEBUILD_DATADIR=$tmp/share PATH="$bin:$PATH"
out=$tmp/out

# No GPU: built for --arch, self-test and call skipped, installed into the venv.
SAGEBUILD_FAKE_GPUS=none FAKE_SELFTEST=skip $SB all --arch sm_120a --out "$out" --python "$py" > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "no GPU: exit $rc: $(cat "$tmp/o")"
grep -q "install *sageattention 2.2.0+sagebuild.* into $py" "$tmp/o" || fail "install line: $(cat "$tmp/o")"
grep -q 'call *skipped: no GPU here' "$tmp/o" || fail "call line: $(cat "$tmp/o")"
grep -q "now runs these kernels" "$tmp/o" || fail "final line: $(cat "$tmp/o")"
"$py" -m pip show sageattention 2>/dev/null | grep -q '^Version: 2.2.0+sagebuild' || fail "not installed"

# A GPU, and no torch in the venv: the install replaces our earlier one; the call says why not.
SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" FAKE_SELFTEST=pass $SB all --arch sm_90 --out "$out" --python "$py" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 0 ] || fail "no torch: exit $rc: $(cat "$tmp/j")"
[ "$(json_get "$tmp/j" "[s['stage'] for s in d['stages']][5:], d['stages'][5]['status'], d['stages'][5]['output']['replaced']['ours'], d['stages'][5]['output']['selftest']")" = "['install', 'call'] ok True None" ] ||
    fail "install stage JSON (install must not run the self-test again): $(cat "$tmp/j")"
[ "$(json_get "$tmp/j" "d['stages'][6]['status']")" = skipped ] || fail "call stage: $(cat "$tmp/j")"
json_get "$tmp/j" "d['stages'][6]['summary']" | grep -q 'torch does not import' || fail "call reason: $(cat "$tmp/j")"

# A torch that sees no GPU: skipped with torch's version named.
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/torch/nn"
printf '__version__ = "2.11.0+cpu"\nclass cuda:\n    @staticmethod\n    def is_available():\n        return False\n' > "$site/torch/__init__.py"
: > "$site/torch/nn/__init__.py"
: > "$site/torch/nn/functional.py"
SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" FAKE_SELFTEST=pass $SB all --arch sm_90 --out "$out" --python "$py" > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "CPU torch: exit $rc: $(cat "$tmp/o")"
grep -q 'call *skipped: torch 2.11.0+cpu sees no CUDA GPU' "$tmp/o" || fail "CPU torch call line: $(cat "$tmp/o")"

# A torch that sees a GPU but is a stand-in, which the package cannot import with: the call
# stage says that `import sageattention` fails in that python (exit 2), with the error.
cat > "$site/torch/__init__.py" <<'EOF'
__version__ = "2.11.0+fake"
float16 = "float16"
class _T:
    def __init__(self, v=1.0): self.v = v
    def float(self): return self
    def double(self): return self
    def flatten(self): return self
    def abs(self): return self
    def sum(self): return self
    def all(self): return True
    def __sub__(self, o): return _T(0.0)
    def __truediv__(self, o): return 0.0
    def __float__(self): return float(self.v)
class device:
    def __init__(self, kind, index=0): self.index = index
class Generator:
    def __init__(self, device=None): pass
    def manual_seed(self, s): return self
def randn(*shape, **kw): return _T()
def isfinite(t): return _T()
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def device_count(): return 1
    @staticmethod
    def get_device_name(i): return "Fake GPU"
    @staticmethod
    def get_device_capability(i): return (9, 0)
    @staticmethod
    def is_initialized(): return False
    class device:
        def __init__(self, d): pass
        def __enter__(self): return self
        def __exit__(self, *a): return False
EOF
printf 'def scaled_dot_product_attention(q, k, v, **kw):\n    return q\ndef cosine_similarity(a, b, dim=0):\n    return 1.0\n' > "$site/torch/nn/functional.py"
SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" FAKE_SELFTEST=pass $SB all --arch sm_90 --out "$out" --python "$py" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 2 ] || fail "a call that raises: exit $rc: $(cat "$tmp/j")"
[ "$(json_get "$tmp/j" "d['stopped_at'], d['stages'][6]['status'], list(d['stages'][6]['output'][0])")" = "call error ['import_error']" ] ||
    fail "call error JSON: $(json_get "$tmp/j" "d['stages'][6]")"
json_get "$tmp/j" "d['stages'][6]['summary']" | grep -q 'import sageattention` with torch loaded fails in .*Error' ||
    fail "call error summary: $(json_get "$tmp/j" "d['stages'][6]['summary']")"
rm -rf "${site:?}/torch"

# A python that is not one: the install stage stops the run with its error.
SAGEBUILD_FAKE_GPUS=none FAKE_SELFTEST=skip $SB all --arch sm_120a --out "$out" --python "$tmp/none" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 2 ] || fail "bad python: exit $rc"
[ "$(json_get "$tmp/j" "d['stopped_at'], d['stages'][6]['status']")" = "install not run" ] || fail "bad python JSON: $(cat "$tmp/j")"
# Without --python there is no install or call stage, and the hint names the command.
SAGEBUILD_FAKE_GPUS=none FAKE_SELFTEST=skip $SB all --arch sm_120a --out "$out" > "$tmp/o" 2>&1 || fail "plain all: $(cat "$tmp/o")"
grep -q 'sagebuild install --python' "$tmp/o" || fail "install hint: $(cat "$tmp/o")"
echo ok
