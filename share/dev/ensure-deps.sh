#!/bin/sh
# Makes sure the libraries sagebuild builds against are installed. As root on a Debian-like
# machine it installs what is missing; otherwise it prints the exact command and fails.
#   ensure-deps.sh          what `make` needs
#   ensure-deps.sh --test   also what `make test` needs (cmocka, cmake, ninja, python3, pip, xz,
#                           man and groff for the man page lint, script for the TTY tests,
#                           procps for the interruption tests)
set -u
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

missing=""
need() { missing="$missing $1"; }

command -v pkg-config >/dev/null 2>&1 || need pkg-config
command -v cc >/dev/null 2>&1 || need gcc
command -v make >/dev/null 2>&1 || need make
for pair in libcurl:libcurl4-openssl-dev libarchive:libarchive-dev libcjson:libcjson-dev \
    openssl:libssl-dev; do
    mod=${pair%%:*}
    pkg=${pair#*:}
    pkg-config --exists "$mod" 2>/dev/null || need "$pkg"
done
if [ $want_test = 1 ]; then
    pkg-config --exists cmocka 2>/dev/null || need libcmocka-dev
    command -v cmake >/dev/null 2>&1 || need cmake
    command -v ninja >/dev/null 2>&1 || need ninja-build
    command -v python3 >/dev/null 2>&1 || need python3
    # The fetch-cuda --source pypi tests download NVIDIA's wheels once with pip.
    python3 -m pip --version >/dev/null 2>&1 || need python3-pip
    # The wheel/install tests make a fresh venv (Debian keeps ensurepip in python3-venv).
    python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need python3-venv
    command -v xz >/dev/null 2>&1 || need xz-utils
    command -v unzip >/dev/null 2>&1 || need unzip
    # The man page is linted with `man --warnings` (tests/integration/test_man_page.sh); a
    # minimized image's man stub does not run, hence the --version check.
    man --version >/dev/null 2>&1 || need man-db
    command -v groff >/dev/null 2>&1 || need groff-base
    # TTY behaviour (live progress lines) is tested under script(1).
    command -v script >/dev/null 2>&1 || need bsdutils
    # The interruption tests look for processes left behind with ps and pgrep.
    command -v pgrep >/dev/null 2>&1 || need procps
fi

[ -z "$missing" ] && exit 0

line="apt-get install -y$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "sagebuild: installing build dependencies:$missing" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null 2>&1 ||
        { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null; } ||
        { echo "sagebuild: '$line' failed; run it by hand to see why." >&2; exit 1; }
    exit 0
fi
echo "sagebuild: missing build dependencies:$missing" >&2
if command -v apt-get >/dev/null 2>&1; then
    echo "  install them with:  sudo $line" >&2
else
    echo "  install the development packages for: libcurl, libarchive, cJSON, OpenSSL, cmocka" >&2
fi
exit 1
