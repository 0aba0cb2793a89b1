# Sourced by the PyPI tests: puts NVIDIA's real wheels for the bundled CUDA 13 manifest into a
# cache outside git (downloaded once with pip) and sets WHEELS and PYPI_RELEASE. Exits 77 when
# pip cannot reach PyPI and the cache is empty.
PYPI_RELEASE=${PYPI_RELEASE:-13.0.2}
WHEELS="${SAGEBUILD_TEST_CACHE:-${HOME:-/tmp}/.cache/sagebuild-test}/wheels/$PYPI_RELEASE"
# The versions come from the bundled manifest, as fetch-cuda takes them.
PINS=$(python3 - "$REPO/manifests/redistrib_$PYPI_RELEASE.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
names = {"cuda_nvcc": "nvidia-cuda-nvcc", "cuda_crt": "nvidia-cuda-crt", "libnvvm": "nvidia-nvvm",
         "cuda_cccl": "nvidia-cuda-cccl", "cuda_cudart": "nvidia-cuda-runtime"}
print(" ".join("%s==%s" % (p, m[c]["version"]) for c, p in names.items()))
PY
) || fail "cannot read the bundled manifest for $PYPI_RELEASE"
have=$(ls "$WHEELS"/*.whl 2>/dev/null | wc -l)
if [ "$have" -lt 5 ]; then
    mkdir -p "$WHEELS"
    arch=$(uname -m)
    # shellcheck disable=SC2086
    if ! timeout 900 python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --platform "manylinux_2_27_$arch" --platform "manylinux2014_$arch" \
        --platform "manylinux_2_17_$arch" --python-version 3.11 -d "$WHEELS" $PINS \
        >"$WHEELS/.pip.log" 2>&1; then
        tail -3 "$WHEELS/.pip.log"
        echo "pip could not download NVIDIA's wheels from PyPI ($PINS): no network to PyPI"
        exit 77
    fi
fi
[ "$(ls "$WHEELS"/*.whl | wc -l)" -ge 5 ] || fail "expected 5 wheels in $WHEELS"
