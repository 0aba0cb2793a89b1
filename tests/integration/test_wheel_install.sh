#!/bin/sh
# sagebuild wheel and install with a real venv and a real pip, offline: the wheel holds the
# drop-in package, the library, its build record and only a recommendation written for that
# library; the same build gives the same bytes; pip installs it with --no-index, it imports
# without torch, a second install says what it replaces, an upstream SageAttention is replaced
# only when confirmed, and `pip uninstall` leaves no file behind.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
mkdir -p "$tmp/t"
export TMPDIR=$tmp/t
repo=$(cd "$here/../.." && pwd)

# The drop-in sources: the real package when the tree has it, else a stand-in with the same
# shape (the packing must not depend on the files' names).
share=$tmp/share
mkdir -p "$share/python"
if [ -f "$repo/share/python/sageattention/__init__.py" ]; then
    cp -R "$repo/share/python/sageattention" "$share/python/"
    real_package=1
else
    echo "note: share/python/sageattention is not in this tree; packing a stand-in package"
    mkdir -p "$share/python/sageattention/ops"
    printf '"""stand-in"""\n__version__ = "2.2.0+sagebuild.0.1.0"\n' \
        > "$share/python/sageattention/__init__.py"
    echo 'MODES = ()' > "$share/python/sageattention/ops/modes.py"
    real_package=0
fi
# Files Python writes itself are never packed.
mkdir -p "$share/python/sageattention/__pycache__"
echo junk > "$share/python/sageattention/__pycache__/x.cpython-311.pyc"
export SAGEBUILD_DATADIR=$share

# A finished build: any file named libsageattn.so and a build record.
b=$tmp/build
mkdir -p "$b/lib"
head -c 65536 /dev/urandom > "$b/lib/libsageattn.so"
cat > "$b/build-record.json" <<'EOF'
{"schema": 1, "sagebuild_version": "0.1.0", "archs": "sm_90,sm_120a", "head_dims": "64,128",
 "nvcc": {"path": "/opt/cuda/bin/nvcc", "version": "13.0.88"}}
EOF
lib_sha=$(sha256sum "$b/lib/libsageattn.so" | cut -d' ' -f1)

# --- wheel ---
$SB wheel --build "$b" --out "$tmp/w1" --json > "$tmp/j" 2> "$tmp/e"
rc=$?
[ $rc = 0 ] || fail "wheel: exit $rc: $(cat "$tmp/j" "$tmp/e")"
whl=$(json_get "$tmp/j" "d['wheel']['path']")
case $(basename "$whl") in
sageattention-2.2.0+sagebuild.*-py3-none-linux_$(uname -m).whl) ;;
*) fail "wheel name: $whl" ;;
esac
[ -f "$whl" ] || fail "no wheel at $whl"
[ "$(json_get "$tmp/j" "d['wheel']['archs'], d['wheel']['recommendation'], d['wheel']['library_sha256']")" = "sm_90,sm_120a False $lib_sha" ] ||
    fail "wheel JSON: $(cat "$tmp/j")"
[ "$(ls -A "$tmp/w1")" = "$(basename "$whl")" ] || fail "the out folder holds more than the wheel: $(ls -A "$tmp/w1")"

# What is inside, checked by Python's own zipfile and hashlib the way pip reads it.
check_wheel() { # check_wheel WHEEL EXPECT_RECOMMENDATION(0|1)
    python3 - "$1" "$2" "$share/python/sageattention" "$b" <<'EOF'
import base64, csv, hashlib, io, os, sys, zipfile
whl, want_rec, src, build = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4]
z = zipfile.ZipFile(whl)
names = z.namelist()
bad = []
di = [n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")][0]
rows = list(csv.reader(io.StringIO(z.read(di + "/RECORD").decode())))
listed = {r[0]: r for r in rows}
if set(listed) != set(names):
    bad.append("RECORD lists %s, the zip holds %s" % (sorted(listed), sorted(names)))
for path, digest, size in rows:
    if path == di + "/RECORD":
        if digest or size:
            bad.append("RECORD's own row must be empty: %r" % [path, digest, size])
        continue
    data = z.read(path)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if digest != want or int(size) != len(data):
        bad.append("%s: RECORD says %s,%s; the data is %s,%d" % (path, digest, size, want, len(data)))
if names[-1] != di + "/RECORD":
    bad.append("RECORD is not the last entry")
pkg = [n for n in names if n.startswith("sageattention/")]
if pkg != sorted(pkg):
    bad.append("entries are not sorted")
for root, dirs, files in os.walk(src):
    dirs[:] = [d for d in dirs if d != "__pycache__"]
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), src)
        n = "sageattention/" + rel
        if n not in names:
            bad.append("missing " + n)
        elif z.read(n) != open(os.path.join(root, f), "rb").read():
            bad.append("differs: " + n)
if any("__pycache__" in n or n.endswith(".pyc") for n in names):
    bad.append("bytecode packed")
if z.read("sageattention/_lib/libsageattn.so") != open(build + "/lib/libsageattn.so", "rb").read():
    bad.append("library differs")
if z.read("sageattention/_lib/build-record.json") != open(build + "/build-record.json", "rb").read():
    bad.append("build record differs")
info = z.getinfo("sageattention/_lib/libsageattn.so")
if (info.external_attr >> 16) & 0o111 == 0:
    bad.append("the library is not executable in the zip")
has_rec = "sageattention/_lib/recommendation.json" in names
if has_rec != want_rec:
    bad.append("recommendation.json %s" % ("present" if has_rec else "missing"))
meta = z.read(di + "/METADATA").decode()
wheel = z.read(di + "/WHEEL").decode()
for line in ("Metadata-Version: 2.1", "Name: sageattention"):
    if line not in meta.splitlines():
        bad.append("METADATA lacks " + line)
ver = [l.split(": ", 1)[1] for l in meta.splitlines() if l.startswith("Version: ")][0]
if di != "sageattention-%s.dist-info" % ver or "+sagebuild." not in ver:
    bad.append("version %s / dist-info %s" % (ver, di))
for line in ("Wheel-Version: 1.0", "Root-Is-Purelib: false"):
    if line not in wheel.splitlines():
        bad.append("WHEEL lacks " + line)
if z.read(di + "/top_level.txt") != b"sageattention\n":
    bad.append("top_level.txt")
print("\n".join(bad) if bad else "ok")
EOF
}
[ "$(check_wheel "$whl" 0)" = ok ] || fail "wheel content: $(check_wheel "$whl" 0)"

# Deterministic: the same build, another time zone and folder, the same bytes.
TZ=Asia/Kolkata $SB wheel --build "$b" --out "$tmp/w2" > "$tmp/o" 2>&1 || fail "second wheel: $(cat "$tmp/o")"
cmp -s "$whl" "$tmp/w2/$(basename "$whl")" || fail "two wheels of one build differ"
grep -q "recommendation none" "$tmp/o" || fail "human output: $(cat "$tmp/o")"

# A recommendation for another library is left out and said so; one for this library goes in.
printf '{"schema":1,"kind":"sageattn-recommendation","library_sha256":"%s","gpus":[]}\n' \
    "0000000000000000000000000000000000000000000000000000000000000000" > "$b/recommendation.json"
$SB wheel --build "$b" --out "$tmp/w3" --json > "$tmp/j" 2>&1 || fail "wheel with a stale recommendation"
[ "$(json_get "$tmp/j" "d['wheel']['recommendation'], 'another build' in d['notes'][0]")" = "False True" ] ||
    fail "stale recommendation: $(cat "$tmp/j")"
printf '{"schema":1,"kind":"sageattn-recommendation","library_sha256":"%s","gpus":[]}\n' \
    "$lib_sha" > "$b/recommendation.json"
$SB wheel --build "$b" --out "$tmp/w3" --json > "$tmp/j" 2>&1 || fail "wheel with a recommendation"
[ "$(json_get "$tmp/j" "d['wheel']['recommendation']")" = True ] || fail "recommendation: $(cat "$tmp/j")"
[ "$(check_wheel "$(json_get "$tmp/j" "d['wheel']['path']")" 1)" = ok ] ||
    fail "wheel with recommendation: $(check_wheel "$(json_get "$tmp/j" "d['wheel']['path']")" 1)"

# No build: exit 2 with the command that makes one; nothing left behind.
$SB wheel --build "$tmp/nothing" --out "$tmp/w4" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 2 ] || fail "no build: exit $rc"
json_get "$tmp/j" "d['error']['fix']" | grep -q -- '--arch' || fail "no-build fix: $(cat "$tmp/j")"
[ -z "$(ls -A "$tmp/w4" 2>/dev/null)" ] || fail "a failed wheel left files: $(ls -A "$tmp/w4")"
$SB wheel --bogus > /dev/null 2>&1
[ $? = 64 ] || fail "unknown option must be a usage error"

# In the source tree the package is found without SAGEBUILD_DATADIR.
if [ $real_package = 1 ]; then
    env -u SAGEBUILD_DATADIR $SB wheel --build "$b" --out "$tmp/w5" --json > "$tmp/j" 2>&1 ||
        fail "wheel from the source tree: $(cat "$tmp/j")"
    [ "$(json_get "$tmp/j" "d['wheel']['package_dir']")" = "$repo/share/python/sageattention" ] ||
        fail "package dir: $(cat "$tmp/j")"
fi

# --arch builds first, in-process, with the build command's rules (a fake toolkit here).
bin=$tmp/bin
mk_cmake "$bin"
mk_compiler "$bin" g++ 12.2.0
mk_toolkit "$tmp/cuda" 12.8 12.8.93 13 "75 80 86 89 90 100 120"
mk_kernels "$share"
PATH="$bin:$PATH" $SB wheel --arch sm_90 --cuda-home "$tmp/cuda" --build "$tmp/b2" --out "$tmp/w6" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 0 ] || fail "wheel --arch: exit $rc: $(cat "$tmp/j")"
[ "$(json_get "$tmp/j" "d['build']['status'], d['wheel']['archs']")" = "ok sm_90" ] ||
    fail "wheel --arch JSON: $(cat "$tmp/j")"
PATH="$bin:$PATH" $SB wheel --arch sm_120a --cuda-home "$tmp/cuda" --build "$tmp/b2" --out "$tmp/w6" > "$tmp/o" 2>&1 ||
    fail "wheel --arch sm_120a: $(cat "$tmp/o")"
grep -q 'build: sm_120a in' "$tmp/o" || fail "wheel --arch human output: $(cat "$tmp/o")"
# a build that fails: the build's error and exit code, no wheel
FAKE_CMAKE_BUILD_RC=1 PATH="$bin:$PATH" $SB wheel --arch sm_89 --cuda-home "$tmp/cuda" --build "$tmp/b2" --out "$tmp/w7" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 2 ] || fail "failed build: exit $rc"
[ "$(json_get "$tmp/j" "d['status'], d['wheel'], d['build']['status']")" = "error None error" ] ||
    fail "failed build JSON: $(cat "$tmp/j")"

# --- install into a real venv ---
if ! python3 -m venv "$tmp/venv" > "$tmp/o" 2>&1 || [ ! -x "$tmp/venv/bin/python" ]; then
    echo "skipped: python3 -m venv does not work here: $(tail -n 1 "$tmp/o")"
    exit 77
fi
py=$tmp/venv/bin/python
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
platsite=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
leftovers() { find "$site" "$platsite" -maxdepth 1 -iname 'sageattention*' 2>/dev/null | sort -u; }

$SB install --build "$b" > "$tmp/o" 2>&1
[ $? = 64 ] || fail "install without --python must be a usage error"
SAGEBUILD_FAKE_GPUS=580.65.06 $SB install --python "$tmp/no-such-python" --build "$b" --json > "$tmp/j" 2>&1
[ $? = 2 ] || fail "a missing python: $(cat "$tmp/j")"

# First install (no GPU: no self-test), from a relative python path.
(cd "$tmp" && SAGEBUILD_FAKE_GPUS=580.65.06 $SB install --python venv/bin/python --build "$b" --json) > "$tmp/j" 2> "$tmp/e"
rc=$?
[ $rc = 0 ] || fail "install: exit $rc: $(cat "$tmp/j" "$tmp/e")"
ver=$(json_get "$tmp/j" "d['wheel']['version']")
[ "$(json_get "$tmp/j" "d['replaced'], d['import']['version'], d['import']['cuda_initialized'], d['selftest']")" = "None $ver False None" ] ||
    fail "install JSON: $(cat "$tmp/j")"
case $(json_get "$tmp/j" "d['import']['file']") in
"$site"/sageattention/__init__.py | "$platsite"/sageattention/__init__.py) ;;
*) fail "imported from $(json_get "$tmp/j" "d['import']['file']")" ;;
esac
"$py" -m pip show sageattention > "$tmp/show" 2>&1 || fail "pip show: $(cat "$tmp/show")"
grep -qx "Version: $ver" "$tmp/show" || fail "pip show: $(cat "$tmp/show")"
(cd "$tmp" && "$py" -c 'import sys, sageattention; assert "torch" not in sys.modules, "imported torch"; print(sageattention.__version__)') > "$tmp/o" 2>&1 ||
    fail "import sageattention without torch: $(cat "$tmp/o")"
[ -f "$site/sageattention/_lib/libsageattn.so" ] || [ -f "$platsite/sageattention/_lib/libsageattn.so" ] ||
    fail "the library is not installed"

# Again: says it replaces our own earlier install.
SAGEBUILD_FAKE_GPUS=580.65.06 $SB install --python "$py" --build "$b" > "$tmp/o" 2>&1 || fail "reinstall: $(cat "$tmp/o")"
grep -q "replacing sageattention $ver (sagebuild's drop-in" "$tmp/o" || fail "reinstall message: $(cat "$tmp/o")"
grep -q "pip uninstall sageattention" "$tmp/o" || fail "the uninstall command is not named"

# Another sageattention first on the path: the install works, and the warning says so.
mkdir -p "$tmp/shadow/sageattention"
echo '__version__ = "0.0.1"' > "$tmp/shadow/sageattention/__init__.py"
PYTHONPATH=$tmp/shadow SAGEBUILD_FAKE_GPUS=580.65.06 $SB install --python "$py" --build "$b" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 1 ] || fail "shadowed: exit $rc: $(cat "$tmp/j")"
json_get "$tmp/j" "d['notes'][0]" | grep -q "not the copy just installed" || fail "shadowed note: $(cat "$tmp/j")"

# A GPU the build has code for: the self-test runs first (through the selftest command).
mkdir -p "$b/bin"
cp "$helpers/fake-selftest.sh" "$b/bin/sageattn-selftest"
FAKE_SELFTEST=pass SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" $SB install --python "$py" --build "$b" --json > "$tmp/j" 2> "$tmp/e"
rc=$?
[ $rc = 0 ] || fail "install with a GPU: exit $rc: $(cat "$tmp/j" "$tmp/e")"
[ "$(json_get "$tmp/j" "d['selftest']['status'], d['replaced']['ours']")" = "pass True" ] ||
    fail "self-test before install: $(cat "$tmp/j")"
# ... and its recommendation, written for this library, is what the wheel carries.
[ "$(json_get "$b/recommendation.json" "d['gpus'][0]['mode']")" = int8-fp16 ] ||
    fail "the self-test's recommendation: $(cat "$b/recommendation.json")"
[ "$(json_get "$tmp/j" "d['wheel']['recommendation']")" = True ] ||
    fail "the wheel does not carry the self-test's recommendation: $(cat "$tmp/j")"
# a failing self-test warns (exit 1) and still installs
FAKE_SELFTEST=crash SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" $SB install --python "$py" --build "$b" --json > "$tmp/j" 2> "$tmp/e"
rc=$?
[ $rc = 1 ] || fail "failed self-test: exit $rc: $(cat "$tmp/j")"
[ "$(json_get "$tmp/j" "d['status'], d['import'] is not None")" = "warn True" ] || fail "failed self-test JSON: $(cat "$tmp/j")"
# --skip-selftest does not run it
FAKE_SELFTEST=crash SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" $SB install --python "$py" --build "$b" --skip-selftest --json > "$tmp/j" 2>&1 ||
    fail "--skip-selftest: $(cat "$tmp/j")"
# A GPU the build has no code for: a build for it is attempted (here with no toolkit: an error).
cp -R "$b" "$tmp/b3"
SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA GeForce RTX 4090:8.9" $SB install --python "$py" --build "$tmp/b3" --cuda-home "$tmp/no-toolkit" --json > "$tmp/j" 2>&1
rc=$?
[ $rc = 2 ] || fail "uncovered GPU: exit $rc: $(cat "$tmp/j")"
json_get "$tmp/j" "d['error']['summary']" | grep -q '^build:' || fail "uncovered GPU must build: $(cat "$tmp/j")"

# An upstream SageAttention: refused without --yes (no terminal to ask on), replaced with it.
"$py" -m pip uninstall -y sageattention > /dev/null 2>&1
python3 - "$tmp/up" <<'EOF'
import base64, hashlib, os, sys, zipfile
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
files = {"sageattention/__init__.py": b"from .core import sageattn\n",
         "sageattention/core.py": b"def sageattn(*a, **k):\n    raise RuntimeError('upstream')\n",
         "sageattention-2.2.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\n",
         "sageattention-2.2.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = ""
with zipfile.ZipFile(out + "/sageattention-2.2.0-py3-none-any.whl", "w") as z:
    for n, d in files.items():
        z.writestr(n, d)
        rec += "%s,sha256=%s,%d\n" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d))
    z.writestr("sageattention-2.2.0.dist-info/RECORD", rec + "sageattention-2.2.0.dist-info/RECORD,,\n")
EOF
"$py" -m pip install --no-index --no-deps "$tmp/up/sageattention-2.2.0-py3-none-any.whl" > "$tmp/o" 2>&1 ||
    fail "installing the upstream stand-in: $(cat "$tmp/o")"
SAGEBUILD_FAKE_GPUS=580.65.06 $SB install --python "$py" --build "$b" < /dev/null > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "upstream without --yes: exit $rc: $(cat "$tmp/o")"
grep -q "replacing sageattention 2.2.0 (the upstream SageAttention" "$tmp/o" || fail "upstream message: $(cat "$tmp/o")"
grep -q -- "--yes" "$tmp/o" || fail "upstream fix: $(cat "$tmp/o")"
"$py" -m pip show sageattention 2>/dev/null | grep -qx "Version: 2.2.0" || fail "upstream was replaced without --yes"
SAGEBUILD_FAKE_GPUS=580.65.06 $SB install --python "$py" --build "$b" --yes --json > "$tmp/j" 2>&1 ||
    fail "upstream with --yes: $(cat "$tmp/j")"
[ "$(json_get "$tmp/j" "d['replaced']['version'], d['replaced']['ours'], d['import']['version']")" = "2.2.0 False $ver" ] ||
    fail "upstream replaced: $(cat "$tmp/j")"
[ ! -e "$site/sageattention/core.py" ] || [ "$real_package" = 1 ] || fail "upstream's files are left over"

# Uninstall leaves nothing: RECORD named every file (pip's own byte-code included).
(cd "$tmp" && "$py" -c 'import sageattention') > /dev/null 2>&1 # writes __pycache__
"$py" -m pip uninstall -y sageattention > "$tmp/o" 2>&1 || fail "pip uninstall: $(cat "$tmp/o")"
[ -z "$(leftovers)" ] || fail "pip uninstall left: $(leftovers)"
[ -z "$(ls -A "$tmp/t" | grep sagebuild)" ] || fail "install left temp files: $(ls -A "$tmp/t")"
echo ok
