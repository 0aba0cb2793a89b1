#!/bin/bash
# Builds the two libraries bench/device_prepass.sh compares, here (nvcc, no GPU), from the
# repository's HEAD: .gpu/prepass-a with kernels/src/attn/quant.cu as it was at BASE (the
# reference pre-pass) and .gpu/prepass-b as HEAD is; everything else is HEAD's in both, so the
# two differ only in the pre-pass.
#   bash bench/prepare_prepass.sh [BASE] [ARCH]     (defaults: 69794e0, the commit before the
#                                                    pre-pass rewrite; sm_90a)
# Then, on the GPU, from the repository root, carrying .gpu/prepass-a/libsageattn.so and
# .gpu/prepass-b/libsageattn.so:
#   bash bench/device_prepass.sh .gpu/prepass-a/libsageattn.so .gpu/prepass-b/libsageattn.so
set -euo pipefail
base=${1:-69794e0}
arch=${2:-sm_90a}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for x in a b; do
    mkdir -p "$tmp/$x"
    git archive HEAD | tar -x -C "$tmp/$x"
done
git show "$base:kernels/src/attn/quant.cu" >"$tmp/a/kernels/src/attn/quant.cu"
if cmp -s "$tmp/a/kernels/src/attn/quant.cu" "$tmp/b/kernels/src/attn/quant.cu"; then
    echo "prepare_prepass.sh: quant.cu is the same at $base and HEAD: nothing to compare" >&2
    exit 2
fi
rm -rf .gpu/prepass-a .gpu/prepass-b
# one after the other: each build already runs one nvcc per source file
bash "$tmp/a/bench/build.sh" "$root/.gpu/prepass-a" "$arch"
bash "$tmp/b/bench/build.sh" "$root/.gpu/prepass-b" "$arch"
echo "built .gpu/prepass-a (quant.cu of $base) and .gpu/prepass-b" \
    "(HEAD $(git rev-parse --short HEAD)) for $arch"
