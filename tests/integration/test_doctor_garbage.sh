#!/bin/sh
# Inputs that must never crash the doctor: a binary or unreadable version.py, an empty
# host_config.h, an nvcc that prints nothing or hangs (cut by the timeout and reported), and a
# libcuda that crashes, hangs or fails cuInit (built here as a real shared library).
. "$(dirname "$0")/doctor/lib.sh"
mk_gcc "$T/bin" gcc 13.3.0
mk_toolkit "$T/cuda" 13.0.88
mk_torch "$T/site" 2.11.0+cu130 13.0

# torch/version.py that is an ELF file, empty, a directory, or unreadable.
mkdir -p "$T/bin1/torch" "$T/empty/torch" "$T/dir/torch/version.py" "$T/noperm/torch"
head -c 4096 /bin/sh > "$T/bin1/torch/version.py"
: > "$T/empty/torch/version.py"
echo "__version__ = '2.11.0'" > "$T/noperm/torch/version.py"
chmod 000 "$T/noperm/torch/version.py"
for case in bin1 empty dir noperm; do
    doctor --torch-dir "$T/$case/torch" --cuda-home "$T/cuda"
    [ "$RC" -le 2 ] || fail "$case version.py: exit $RC (crash?)"
    # root reads a mode-000 file: then it is simply a good version.py.
    if [ "$case" = noperm ] && [ "$(id -u)" = 0 ]; then continue; fi
    expect torch.found error "$case version.py"
    expect torch.cuda skip "$case version.py"
done
# A torch folder that does not exist.
doctor --torch-dir "$T/absent/torch" --cuda-home "$T/cuda" torch.found
expect torch.found error "missing torch dir"

# A python that fails with invalid UTF-8 and several lines on stderr: still one valid JSON
# document and one human row.
script "$T/bin/python3" "printf 'Traceback\n  bad byte \377\376 here\nError\n' >&2; exit 1"
doctor --cuda-home "$T/cuda" torch.found
expect torch.found warn "python with binary stderr"
expect_in torch.found summary "bad byte ?? here" "python with binary stderr"
env -i HOME="$T/home" PATH="$T/bin" SAGEBUILD_FAKE_GPUS=none "$SB" doctor torch.found > "$T/h.txt"
[ "$(grep -c . "$T/h.txt")" -le 4 ] || fail "python with binary stderr: the row spans lines"
rm "$T/bin/python3"

# An empty and a binary host_config.h: no limit to compare with, never a crash.
: > "$T/cuda/include/crt/host_config.h"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" host.compiler
expect host.compiler skip "empty host_config.h"
head -c 8192 /bin/sh > "$T/cuda/include/crt/host_config.h"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" host.compiler
expect host.compiler skip "binary host_config.h"
mk_toolkit "$T/cuda" 13.0.88

# An nvcc that prints nothing, one that prints garbage, one that crashes, one that hangs.
mk_toolkit "$T/silent" 13.0.88
script "$T/silent/bin/nvcc" "exit 0"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/silent"
expect toolkit.nvcc error "silent nvcc"
expect_in toolkit.nvcc summary "printed nothing" "silent nvcc"
expect toolkit.version_match skip "silent nvcc"
expect toolkit.archs skip "silent nvcc"
script "$T/silent/bin/nvcc" "head -c 2000 /bin/sh"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/silent" toolkit.nvcc
expect toolkit.nvcc error "garbage nvcc"
script "$T/silent/bin/nvcc" "kill -SEGV \$\$"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/silent" toolkit.nvcc
expect toolkit.nvcc error "crashing nvcc"
expect_in toolkit.nvcc summary "signal" "crashing nvcc"
script "$T/silent/bin/nvcc" "exec /bin/sleep 60"
start=$(date +%s)
doctor --torch-dir "$T/site/torch" --cuda-home "$T/silent"
took=$(( $(date +%s) - start ))
[ "$took" -lt 20 ] || fail "hanging nvcc: the doctor took ${took}s"
expect toolkit.nvcc error "hanging nvcc"
expect_in toolkit.nvcc summary "timed out" "hanging nvcc"

# libcuda stand-ins: a real shared library whose entry points crash, hang or fail.
CC_REAL=$(command -v cc || command -v gcc || true)
if [ -z "$CC_REAL" ]; then
    echo "skipped the libcuda cases: no C compiler"
    finish
fi
cat > "$T/fakecuda.c" <<'EOC'
#include <stdlib.h>
#include <unistd.h>
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuInit(unsigned flags)
{
    const char *mode = getenv("FAKE_CUDA_MODE");
    (void)flags;
    if (mode && mode[0] == 'c')
        *(volatile int *)0 = 1;
    if (mode && mode[0] == 'h')
        for (;;)
            pause();
    return mode && mode[0] == 'm' ? 803 : 999;
}
int cuDeviceGetCount(int *n) { *n = 0; return 0; }
int cuDeviceGet(int *d, int i) { *d = i; return 0; }
int cuDeviceGetName(char *b, int n, int d) { (void)b; (void)n; (void)d; return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) { (void)a; (void)d; *v = 0; return 0; }
EOC
"$CC_REAL" -shared -fPIC -o "$T/libcuda.so.1" "$T/fakecuda.c" || { fail "building the fake libcuda"; finish; }
for mode in crash hang mismatch fail; do
    start=$(date +%s)
    FAKE_GPUS= DOCTOR_ENV="SAGEBUILD_LIBCUDA=$T/libcuda.so.1 SAGEBUILD_LIBNVML=$T/nope.so FAKE_CUDA_MODE=$mode" \
        doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda" driver
    took=$(( $(date +%s) - start ))
    [ "$took" -lt 20 ] || fail "libcuda $mode: the doctor took ${took}s"
    [ "$RC" -le 2 ] || fail "libcuda $mode: exit $RC"
    expect driver.present error "libcuda $mode"
    expect driver.gpus skip "libcuda $mode"
done
FAKE_GPUS= DOCTOR_ENV="SAGEBUILD_LIBCUDA=$T/libcuda.so.1 FAKE_CUDA_MODE=crash" doctor --torch-dir "$T/site/torch" driver.present
expect_in driver.present summary "signal 11" "libcuda crash"
FAKE_GPUS= DOCTOR_ENV="SAGEBUILD_LIBCUDA=$T/libcuda.so.1 FAKE_CUDA_MODE=mismatch" doctor --torch-dir "$T/site/torch" driver.present
expect_in driver.present fix "sudo reboot" "libcuda mismatch"
finish
