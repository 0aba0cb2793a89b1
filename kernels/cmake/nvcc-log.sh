#!/bin/sh
# Compiler launcher for the CUDA sources: runs the compile as given and keeps its diagnostics
# (the `ptxas -v` register/spill report among them) in LOGDIR/<object>.log, so the report
# survives the build and can be checked later (kernels/cmake/check-spills.sh). The output is
# still passed through to the build's own log.
#   nvcc-log.sh LOGDIR COMPILER ARGS...
logdir=$1
shift
obj=
prev=
for a in "$@"; do
    [ "$prev" = "-o" ] && obj=$a
    prev=$a
done
[ -n "$obj" ] || exec "$@"
mkdir -p "$logdir" || exit 1
log="$logdir/$(printf '%s' "$obj" | tr '/' '_').log"
"$@" 2>"$log.tmp"
rc=$?
cat "$log.tmp" >&2
mv -f "$log.tmp" "$log"
exit $rc
