#!/bin/sh
# An index page from an untrusted PyPI mirror that lists 100 000 wheels (17 MB) is read in
# linear time: fetch-cuda --source pypi answers within seconds, also under ASan (the listing
# grew one entry at a time, and the versions it names were searched one by one: minutes), its
# error names a few of the versions, not all of them, and SIGTERM during the GET still ends it.
. "$(dirname "$0")/fetch/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/sb-bigidx.XXXXXX")
SERVER_PID=""
trap 'fetch_cleanup' EXIT INT TERM
[ -n "$SB" ] || fail "SAGEBUILD is not set"
export SAGEBUILD_CACHE="$T/cache" XDG_DATA_HOME="$T/data" SAGEBUILD_DATADIR="$REPO"
unset SAGEBUILD_MIRRORS SAGEBUILD_INDEX_URLS PIP_INDEX_URL
MIRROR_DIR="$T/idx"
python3 - "$MIRROR_DIR" <<'PY' || fail "writing the index page"
import os, sys
root = sys.argv[1]
for project in ("nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-nvvm", "nvidia-cuda-cccl",
                "nvidia-cuda-runtime"):
    d = os.path.join(root, "simple", project)
    os.makedirs(d)
    wheel = project.replace("-", "_")
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<html><body>\n")
        for i in range(100000):
            name = f"{wheel}-{13 + i // 1000}.{i % 1000}.1-py3-none-manylinux_2_27_x86_64.whl"
            f.write(f'<a href="../../files/{name}#sha256={i:064x}">{name}</a>\n')
        f.write("</body></html>\n")
PY
server_start
start=$(date +%s)
timeout 120 $SB fetch-cuda --source pypi --cuda 13.0 --index-url "$M/ok/simple" \
    --prefix "$T/p/cuda" --dry-run >"$T/big.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
[ $rc != 124 ] || fail "a 100 000-link index page took more than 120 s"
[ $rc = 2 ] || fail "exit $rc: $(head -c 2000 "$T/big.out")"
[ $took -le 30 ] || fail "a 100 000-link index page took $took s"
grep -q "the index has no nvidia-cuda-nvcc 13.0.88" "$T/big.out" ||
    fail "the missing version is not named: $(head -c 2000 "$T/big.out")"
grep -q "13.0.1 13.1.1 .* \.\.\." "$T/big.out" || fail "the versions seen are not shown: $(head -c 2000 "$T/big.out")"
[ "$(wc -c <"$T/big.out")" -lt 4000 ] || fail "the error is $(wc -c <"$T/big.out") bytes long"
echo "100 000 links: $took s"
echo ok
