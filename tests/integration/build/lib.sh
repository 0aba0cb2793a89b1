# Shared set-up for the build/selftest/all integration tests: fake toolkits, compilers, cmake
# and self-tests made of small shell scripts, so the CLI's choices can be checked without a GPU
# and in seconds. Source it after setting $tmp (a fresh folder the test removes).

SB=${SAGEBUILD_SAN:-$SAGEBUILD}
here=$(cd "$(dirname "$0")" && pwd)
helpers=$here/build

fail() {
    echo "FAIL: $*"
    exit 1
}

# A clean environment: no fetched toolkit, no compiler or CUDA choices from the caller.
sandbox_env() {
    export HOME=$tmp/home XDG_DATA_HOME=$tmp/data XDG_CACHE_HOME=$tmp/cache
    mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
    unset CC CXX CUDAHOSTCXX CUDA_HOME CUDA_PATH NVCC_CCBIN SAGEBUILD_DATADIR
    export NO_COLOR=1
}

# mk_toolkit DIR RELEASE(12.6) FULL(12.6.85) GCC_MAX ARCHS("75 80 86 89 90")
mk_toolkit() {
    mkdir -p "$1/bin" "$1/include/crt"
    cat > "$1/bin/nvcc" <<EOS
#!/bin/sh
case "\$*" in
*--version*)
    echo "nvcc: NVIDIA (R) Cuda compiler driver"
    echo "Cuda compilation tools, release $2, V$3" ;;
*--list-gpu-arch*)
    for a in $5; do echo compute_\$a; done ;;
*) echo "fake nvcc cannot compile" >&2; exit 1 ;;
esac
EOS
    chmod +x "$1/bin/nvcc"
    cat > "$1/include/crt/host_config.h" <<EOS
#if defined(__GNUC__)
#if __GNUC__ > $4
#error -- unsupported GNU version! gcc versions later than $4 are not supported!
#endif /* __GNUC__ > $4 */
#endif
EOS
}

# mk_compiler BINDIR NAME VERSION
mk_compiler() {
    mkdir -p "$1"
    printf '#!/bin/sh\ncase "$*" in *dumpversion*) echo %s ;; *) exit 1 ;; esac\n' "$3" > "$1/$2"
    chmod +x "$1/$2"
}

# mk_torch SITE CUDA: a torch for CUDA in SITE. torch/version.py is read, never imported: a
# version.py is all a torch needs here.
mk_torch() {
    mkdir -p "$1/torch"
    : > "$1/torch/__init__.py"
    printf "__version__ = '2.8.0+cu%s'\ncuda = '%s'\n" "$(echo "$2" | tr -d .)" "$2" > "$1/torch/version.py"
}

# two_pythons BINDIR SYS_CUDA PY_CUDA: BINDIR/python3, the system python with a torch for
# SYS_CUDA in $sys_site on its path, and $py, a venv without pip (so that `all` installs nothing
# anywhere: its install stage stops at "no pip") whose torch, in $py_site, is for PY_CUDA.
# Exits 77 where there is no python3 or its venv does not work.
two_pythons() {
    system_python=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
    mkdir -p "$1"
    sys_site=$tmp/site-sys
    mk_torch "$sys_site" "$2"
    printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$sys_site" "$system_python" > "$1/python3"
    chmod +x "$1/python3"
    if ! "$system_python" -m venv --without-pip "$tmp/venv" > "$tmp/o" 2>&1; then
        echo "skipped: python3 -m venv does not work here: $(tail -n 1 "$tmp/o")"
        exit 77
    fi
    py=$tmp/venv/bin/python
    py_site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    mk_torch "$py_site" "$3"
}

# mk_cmake BINDIR: a cmake that records each call in $FAKE_CMAKE_LOG and installs stand-ins
# for the contract's files (the self-test is $helpers/fake-selftest.sh).
mk_cmake() {
    mkdir -p "$1"
    cat > "$1/cmake" <<EOS
#!/bin/sh
echo "\$*" >> "\${FAKE_CMAKE_LOG:-/dev/null}"
case "\$1" in
--version) echo "cmake version 3.28.3"; exit 0 ;;
--build)
    echo "[1/1] fake compile"
    [ -z "\${FAKE_CMAKE_BUILD_OUTPUT:-}" ] || cat "\$FAKE_CMAKE_BUILD_OUTPUT"
    [ -z "\${FAKE_CMAKE_BUILD_SLEEP:-}" ] || sleep "\$FAKE_CMAKE_BUILD_SLEEP"
    # a compile leaves an object behind (build tells a real build from a no-op by them)
    [ -n "\${FAKE_CMAKE_NO_WORK:-}" ] || : > "\$2/fake-kernel.o"
    if [ -n "\${FAKE_CMAKE_HANG_PIDS:-}" ]; then
        # a compiler that does not stop by itself: only a signal ends it
        sleep 300 &
        echo \$! >> "\$FAKE_CMAKE_HANG_PIDS"
        echo \$\$ >> "\$FAKE_CMAKE_HANG_PIDS"
        wait
    fi
    exit \${FAKE_CMAKE_BUILD_RC:-0} ;;
--install)
    prefix=\$(cat "\$2/prefix")
    mkdir -p "\$prefix/lib/pkgconfig" "\$prefix/include" "\$prefix/bin"
    : > "\$prefix/lib/libsageattn.so"; : > "\$prefix/include/sageattn.h"
    : > "\$prefix/lib/pkgconfig/sageattn.pc"
    cp "$helpers/fake-selftest.sh" "\$prefix/bin/sageattn-selftest"
    exit 0 ;;
esac
bdir= prefix= gen= src= nvcc= host=
while [ \$# -gt 0 ]; do
    case "\$1" in
    -B) bdir=\$2; shift ;;
    -S) src=\$2; shift ;;
    -G) gen=\$2; shift ;;
    -DCMAKE_INSTALL_PREFIX=*) prefix=\${1#-DCMAKE_INSTALL_PREFIX=} ;;
    -DCMAKE_CUDA_COMPILER=*) nvcc=\${1#-DCMAKE_CUDA_COMPILER=} ;;
    -DCMAKE_CUDA_HOST_COMPILER=*) host=\${1#-DCMAKE_CUDA_HOST_COMPILER=} ;;
    esac
    shift
done
mkdir -p "\$bdir" && echo "\$prefix" > "\$bdir/prefix"
# Like CMake: the first configure fixes compilers and generator; another one is an error.
cache="CMAKE_GENERATOR:INTERNAL=\$gen
CMAKE_CUDA_COMPILER:UNINITIALIZED=\$nvcc
CMAKE_CUDA_HOST_COMPILER:UNINITIALIZED=\$host
CMAKE_HOME_DIRECTORY:INTERNAL=\$src"
if [ -f "\$bdir/CMakeCache.txt" ] && [ "\$(cat "\$bdir/CMakeCache.txt")" != "\$cache" ]; then
    echo "CMake Error: the cache was made with other compilers" >&2
    exit 1
fi
echo "\$cache" > "\$bdir/CMakeCache.txt"
echo "-- Configuring done"
EOS
    chmod +x "$1/cmake"
}

# mk_kernels DATADIR: a kernels/ tree the build can hash and hand to (fake) cmake.
mk_kernels() {
    mkdir -p "$1/kernels/src"
    echo "project(fake)" > "$1/kernels/CMakeLists.txt"
    echo "__global__ void k() {}" > "$1/kernels/src/a.cu"
}

json_get() { # json_get FILE PYTHON-EXPRESSION-ON-d
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}
