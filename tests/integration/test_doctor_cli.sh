#!/bin/sh
# The doctor's command line and outputs: usage errors (64), --list-checks, check selection,
# the schema-1 JSON, human output with -v and -q, exit statuses, and the < 1 s budget.
. "$(dirname "$0")/doctor/lib.sh"
mk_gcc "$T/bin" gcc 13.3.0
mk_gcc "$T/bin" ninja 1.11.1
mk_toolkit "$T/cuda" 13.0.88
mk_torch "$T/site" 2.11.0+cu130 13.0
run() { env -i HOME="$T/home" PATH="$T/bin" LANG=C SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA GeForce RTX 5090:12.0" "$SB" doctor "$@"; }

run --bogus > /dev/null 2>&1; [ $? = 64 ] || fail "unknown option must exit 64"
run no.such.check > /dev/null 2> "$T/e"; [ $? = 64 ] || fail "unknown check must exit 64"
grep -q "list-checks" "$T/e" || fail "unknown check names --list-checks"
run -v -q > /dev/null 2>&1; [ $? = 64 ] || fail "-v with -q must exit 64"
run --arch sm_12x > /dev/null 2>&1; [ $? = 64 ] || fail "bad --arch must exit 64"
run --python > /dev/null 2>&1; [ $? = 64 ] || fail "--python without a value must exit 64"
run --help | grep -q -- "--torch-dir" || fail "--help lists the options"
run --list-checks > "$T/list"; [ $? = 0 ] || fail "--list-checks exits 0"
for id in torch.found torch.cuda torch.triton driver.present driver.gpus driver.torch torch.gpu_arch \
    toolkit.cuda_home toolkit.nvcc toolkit.version_match toolkit.components toolkit.consistency \
    toolkit.archs toolkit.driver_ptx host.compiler build.ninja build.jobs build.disk arch.list \
    sageattention.install sageattention.imports; do
    grep -q "^$id " "$T/list" || fail "--list-checks lacks $id"
done
ntool=$(grep -c '^toolkit\.' "$T/list")
[ "$ntool" -ge 7 ] && [ "$(run --list-checks toolkit | wc -l)" = "$ntool" ] || fail "--list-checks toolkit lists the toolkit checks"
# Every id listed is documented in the man page.
MAN=$(dirname "$0")/../../man/sagebuild.1
if [ -f "$MAN" ]; then
    for id in $(cut -d' ' -f1 "$T/list"); do
        grep -q -- "$id" "$MAN" || fail "man/sagebuild.1 does not document $id"
    done
fi

# The JSON: schema 1, every check once with the five keys, counts that add up, exit status.
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda"
"$ASSERT_PY" - "$T/out.json" "$RC" "$T/list" <<'EOP' || fail "JSON schema"
import json, sys
d = json.load(open(sys.argv[1]))
rc = int(sys.argv[2])
listed = [line.split()[0] for line in open(sys.argv[3])]
assert d["schema"] == 1, d["schema"]
ids = [c["id"] for c in d["checks"]]
assert ids == listed and len(set(ids)) == len(ids), (ids, listed)
for c in d["checks"]:
    assert set(["id", "status", "summary", "evidence", "fix"]) <= set(c), c
    assert c["status"] in ("ok", "warn", "error", "skip"), c
    assert isinstance(c["evidence"], dict) and all(isinstance(v, str) for v in c["evidence"].values())
    assert c["summary"], c
    if c["status"] in ("warn", "error"):
        assert c["fix"], c
counts = d["counts"]
for s in ("ok", "warn", "error", "skip"):
    assert counts[s] == sum(1 for c in d["checks"] if c["status"] == s), (s, counts)
assert rc == (2 if counts["error"] else 1 if counts["warn"] else 0), (rc, counts)
EOP
# A subset: a group and an id, in table order.
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" host.compiler driver
ids=$("$ASSERT_PY" -c 'import json,sys; print(" ".join(c["id"] for c in json.load(open(sys.argv[1]))["checks"]))' "$T/out.json")
[ "$ids" = "driver.present driver.gpus driver.torch host.compiler" ] || fail "subset: $ids"
expect_rc 0 "healthy subset"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" toolkit.version_match --arch sm_120a,sm_90a
expect_rc 0 "--arch after a check id"

# Human output: marks, fix lines, evidence only with -v, problems only with -q, a summary.
run --torch-dir "$T/site/torch" --cuda-home "$T/cuda" > "$T/h.txt"
grep -q '^\[ok\] torch (torch.found): torch 2.11.0+cu130' "$T/h.txt" || fail "human: ok row"
grep -q '^\[!\] .*(sageattention.install)' "$T/h.txt" && fail "human: skip shown as warning"
grep -q '^\[-\] .*(sageattention.install)' "$T/h.txt" || fail "human: skip row"
grep -q 'Doctor found\|No issues found' "$T/h.txt" || fail "human: summary line"
grep -q '    - cuda_home:' "$T/h.txt" && fail "human: evidence without -v"
run -v --torch-dir "$T/site/torch" --cuda-home "$T/cuda" > "$T/v.txt"
grep -q "    - cuda_home: $T/cuda" "$T/v.txt" || fail "human -v: evidence"
FAKE=none
env -i HOME="$T/home" PATH="$T/bin" LANG=C.UTF-8 SAGEBUILD_FAKE_GPUS=none "$SB" doctor -q \
    --torch-dir "$T/site/torch" --cuda-home "$T/cuda" > "$T/q.txt"
[ $? = 1 ] || fail "no driver: warnings only, exit 1"
grep -q '^\[!\] NVIDIA driver' "$T/q.txt" || fail "-q shows the warning"
grep -q '    fix: ' "$T/q.txt" || fail "-q shows the fix"
grep -q '\[✓\]' "$T/q.txt" && fail "-q hides ok rows"
grep -q '^! Doctor found 0 errors and ' "$T/q.txt" || fail "-q summary"
# No colour when not a TTY; an error run exits 2.
grep -q "$(printf '\033')" "$T/h.txt" && fail "colour escape in a pipe"
run --torch-dir "$T/site/torch" --cuda-home "$T/nowhere" > /dev/null; [ $? = 2 ] || fail "errors exit 2"

# Time: a whole run with nothing hanging stays well under a second (plain build).
PLAIN=${SAGEBUILD:-$SB}
ms=$("$ASSERT_PY" - "$PLAIN" "$T" <<'EOP'
import os, subprocess, sys, time
sb, t = sys.argv[1], sys.argv[2]
env = {"HOME": t + "/home", "PATH": t + "/bin", "SAGEBUILD_FAKE_GPUS": "580.65.06;NVIDIA GeForce RTX 5090:12.0"}
best = 1e9
for _ in range(3):
    start = time.monotonic()
    subprocess.run([sb, "doctor", "--torch-dir", t + "/site/torch", "--cuda-home", t + "/cuda"],
                   env=env, stdout=subprocess.DEVNULL)
    best = min(best, time.monotonic() - start)
print(int(best * 1000))
EOP
)
echo "whole doctor run: ${ms} ms"
[ "$ms" -lt 1000 ] || fail "a doctor run took ${ms} ms (budget 1000)"
finish
