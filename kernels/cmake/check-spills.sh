#!/bin/sh
# Reads the `ptxas -v` reports that nvcc-log.sh kept and prints one line per compiled function:
#   ARCH REGISTERS SPILL_STORES SPILL_LOADS STACK FUNCTION
# Exits 1 when a function whose (demangled) name matches HOT_REGEX spills, 2 when no report
# was found (the build did not run ptxas -v), 0 otherwise.
#   check-spills.sh LOGDIR [HOT_REGEX]
logdir=$1
hot=${2:-.}
set -- "$logdir"/*.log
[ -e "$1" ] || { echo "check-spills: no ptxas logs in $logdir" >&2; exit 2; }
demangle=cat
command -v c++filt >/dev/null 2>&1 && demangle=c++filt
table=$(awk '
    /Compiling entry function/ {
        arch = $0; sub(/.*for \047/, "", arch); sub(/\047.*/, "", arch)
    }
    /Function properties for/ { cur = arch " " $NF; next }
    /bytes stack frame/ && cur != "" {
        stack[cur] = $1; stores[cur] = $5; loads[cur] = $9
        if (!(cur in seen)) { seen[cur] = 1; order[++n] = cur }
    }
    /Used [0-9]+ registers/ && cur != "" {
        r = $0; sub(/.*Used /, "", r); sub(/ registers.*/, "", r); regs[cur] = r
    }
    END { for (i = 1; i <= n; i++) { k = order[i]; split(k, p, " ")
        printf "%s %s %s %s %s %s\n", p[1], (k in regs) ? regs[k] : "?", stores[k], loads[k], stack[k], p[2] } }
' "$@")
[ -n "$table" ] || { echo "check-spills: the logs hold no ptxas -v report" >&2; exit 2; }
bad=0
printf '%s\n' "$table" | while read -r arch regs st ld stack fn; do
    name=$(printf '%s\n' "$fn" | $demangle)
    printf '%-8s regs=%-4s spill_st=%-5s spill_ld=%-5s stack=%-5s %s\n' "$arch" "$regs" "$st" \
        "$ld" "$stack" "$name"
done
# A second pass decides, since the loop above runs in a subshell.
bad=$(printf '%s\n' "$table" | while read -r arch regs st ld stack fn; do
    name=$(printf '%s\n' "$fn" | $demangle)
    if [ "$st" != 0 ] || [ "$ld" != 0 ]; then
        printf '%s\n' "$name" | grep -Eq -- "$hot" && echo "$arch $name"
    fi
done)
if [ -n "$bad" ]; then
    echo "check-spills: hot kernels spill registers:" >&2
    printf '%s\n' "$bad" | sed 's/^/  /' >&2
    exit 1
fi
exit 0
