#!/bin/bash
# Packs bin/sagebuild for the GPU machine, whose image has no libcurl/libarchive/cJSON
# development packages and no registry to install them from: relinks the binary with an rpath to
# .device-carry-cli/lib and copies there every shared library it needs that is not part of glibc.
# The libraries travel as .device-carry-cli/libs.tar.xz (the ICU data alone is 30 MB unpacked);
# bench/device_all.sh unpacks them. A device call carrying `bin` and `.device-carry-cli` then
# runs `bin/sagebuild` as README says.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.device-carry-cli/' .git/info/exclude 2>/dev/null || echo '/.device-carry-cli/' >>.git/info/exclude
# DT_RPATH (not RUNPATH) so the libraries' own dependencies are found there too; make turns $$ into $
# and the backslash keeps the recipe's shell from expanding $ORIGIN.
make -B bin/sagebuild LDFLAGS='-Wl,--disable-new-dtags,-rpath,\$$ORIGIN/../.device-carry-cli/lib' >/dev/null
rm -rf .device-carry-cli && mkdir -p .device-carry-cli/lib
ldd bin/sagebuild | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
    *) cp -L "$lib" .device-carry-cli/lib/ ;;
    esac
done
tar -C .device-carry-cli -cJf .device-carry-cli/libs.tar.xz lib
rm -rf .device-carry-cli/lib
readelf -d bin/sagebuild | grep -q 'rpath: \[\$ORIGIN/../.device-carry-cli/lib\]' || {
    echo "pack_cli: the rpath did not come out as \$ORIGIN/../.device-carry-cli/lib" >&2
    exit 1
}
du -sh .device-carry-cli bin
