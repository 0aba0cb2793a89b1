#!/bin/sh
# Reads the `ptxas -v` reports that nvcc-log.sh kept and prints one line per compiled function:
#   ARCH REGISTERS SPILL_STORES SPILL_LOADS STACK FUNCTION
# Exits 1 when a function whose (demangled) name matches HOT_REGEX spills, 2 when no report
# was found (the build did not run ptxas -v), 0 otherwise.
#   check-spills.sh LOGDIR [HOT_REGEX [BUDGET_FILE]]
# BUDGET_FILE lists known spills that are accepted until they are removed, one per line:
#   ARCH MAX_STORE_BYTES MAX_LOAD_BYTES NAME_SUBSTRING...
# A hot kernel of that arch whose demangled name contains the substring may spill up to those
# bytes; more, or a spill in any other hot kernel, still fails: the budget only ratchets down.
logdir=$1
hot=${2:-.}
budget=${3:-}
[ -z "$budget" ] || [ -r "$budget" ] || { echo "check-spills: cannot read $budget" >&2; exit 2; }
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
# within_budget ARCH STORES LOADS NAME: a budget line covers it.
within_budget() {
    grep -v '^[[:space:]]*#' "$budget" | while read -r b_arch b_st b_ld b_name; do
        [ -n "$b_name" ] && [ "$b_arch" = "$1" ] || continue
        case $4 in *"$b_name"*) ;; *) continue ;; esac
        [ "$2" -le "$b_st" ] && [ "$3" -le "$b_ld" ] && echo yes && break
    done | grep -q yes
}
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
        printf '%s\n' "$name" | grep -Eq -- "$hot" || continue
        if [ -n "$budget" ] && within_budget "$arch" "$st" "$ld" "$name"; then
            echo "check-spills: within the known-spill budget: $arch $st/$ld bytes $name" >&2
            continue
        fi
        echo "$arch $name ($st/$ld bytes)"
    fi
done)
if [ -n "$bad" ]; then
    echo "check-spills: hot kernels spill registers:" >&2
    printf '%s\n' "$bad" | sed 's/^/  /' >&2
    exit 1
fi
exit 0
