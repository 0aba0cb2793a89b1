#!/bin/sh
# The doctor against the real toolkit at /usr/local/cuda (CI has CUDA 13.0): its nvcc, its
# components, its host_config.h limit against the real gcc, computed here independently.
. "$(dirname "$0")/doctor/lib.sh"
CUDA=/usr/local/cuda
[ -x "$CUDA/bin/nvcc" ] || { echo "skipped: no toolkit at $CUDA"; exit 77; }
rel=$("$CUDA/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
[ -n "$rel" ] || { fail "cannot read the real nvcc's release"; finish; }
mk_torch "$T/site" "2.11.0+cu$(echo "$rel" | tr -d .)" "$rel"

real_env() {
    env -i HOME="$T/home" PATH="$PATH" LANG=C SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA H200:9.0" \
        "$SB" doctor --json "$@" > "$T/out.json" 2> "$T/err.txt"
    RC=$?
}
real_env --torch-dir "$T/site/torch" --cuda-home "$CUDA" --arch sm_90a,sm_120a
expect toolkit.cuda_home ok real
expect toolkit.nvcc ok real
expect_in toolkit.nvcc release "$rel" real
expect toolkit.version_match ok real
expect toolkit.components ok real
case $(status toolkit.consistency) in ok | warn) ;; *) fail "real: toolkit.consistency $(status toolkit.consistency): $(field toolkit.consistency summary)" ;; esac
expect toolkit.archs ok "real, sm_90a and sm_120a"

# host.compiler: the limit as grep reads it, against gcc -dumpversion.
hc=$CUDA/include/crt/host_config.h
[ -f "$hc" ] || hc=$(ls "$CUDA"/targets/*/include/crt/host_config.h 2>/dev/null | head -n 1)
limit=$(sed -n 's/^#if __GNUC__ > \([0-9]*\)$/\1/p' "$hc" | head -n 1)
expect_in host.compiler gcc_max "$limit" "real host_config.h"
if command -v gcc > /dev/null; then
    gmajor=$(gcc -dumpversion | cut -d. -f1)
    if [ "$gmajor" -le "$limit" ]; then want=ok; else want=error; fi
    expect host.compiler $want "real gcc $gmajor vs limit $limit"
fi
# The PATH nvcc of this machine, if any, is compared with CUDA_HOME's.
if command -v nvcc > /dev/null; then
    env -i HOME="$T/home" PATH="$PATH" LANG=C SAGEBUILD_FAKE_GPUS=none "$SB" doctor --json \
        --torch-dir "$T/site/torch" toolkit.cuda_home > "$T/out.json"
    expect_in toolkit.cuda_home nvcc_on_path "nvcc" "real PATH nvcc"
fi
finish
