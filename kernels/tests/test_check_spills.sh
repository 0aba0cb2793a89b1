#!/bin/sh
# cmake/check-spills.sh on a fixed ptxas -v report: a spilling hot kernel fails, a spilling
# kernel that is not hot does not, the table names arch, registers and spills, and a folder
# without reports is an error of its own.
here=$(cd "$(dirname "$0")" && pwd)
check="$here/../cmake/check-spills.sh"
fixture="$here/fixtures/ptxas"
failed=0
expect() { # expect RC WHAT COMMAND...
    want=$1 what=$2
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    if [ $rc != "$want" ]; then
        echo "test_check_spills: $what: exit $rc, want $want"
        printf '%s\n' "$out"
        failed=1
    fi
}
expect 1 "hot kernel spills" sh "$check" "$fixture" sa_attn_kernel
expect 0 "only a cold kernel spills" sh "$check" "$fixture" 'sa_attn_kernel<1, 64'
table=$(sh "$check" "$fixture" nothing-matches)
printf '%s\n' "$table" | grep -q 'sm_90 .*regs=255 .*spill_st=76 .*spill_ld=76 .*sa_attn_kernel<1, 128, false>' ||
    { echo "test_check_spills: table lacks the sm_90 attention kernel:"; printf '%s\n' "$table"; failed=1; }
printf '%s\n' "$table" | grep -q 'sm_120a .*regs=168 .*spill_st=0 ' ||
    { echo "test_check_spills: table lacks the sm_120a kernel"; failed=1; }
# The known-spill budget: exactly the bytes pass, one byte more or another arch fails.
budget=$(mktemp)
printf '# comment\nsm_90 76 76 sa_attn_kernel<1, 128,\n' >"$budget"
expect 0 "spill within its budget" sh "$check" "$fixture" sa_attn_kernel "$budget"
printf 'sm_90 75 76 sa_attn_kernel<1, 128,\n' >"$budget"
expect 1 "one store byte over the budget" sh "$check" "$fixture" sa_attn_kernel "$budget"
printf 'sm_90 76 75 sa_attn_kernel<1, 128,\n' >"$budget"
expect 1 "one load byte over the budget" sh "$check" "$fixture" sa_attn_kernel "$budget"
printf 'sm_120a 76 76 sa_attn_kernel<1, 128,\n' >"$budget"
expect 1 "a budget for another arch" sh "$check" "$fixture" sa_attn_kernel "$budget"
printf 'sm_90 76 76 sa_attn_kernel<2, 128,\n' >"$budget"
expect 1 "a budget for another kernel" sh "$check" "$fixture" sa_attn_kernel "$budget"
rm -f "$budget"
expect 2 "an unreadable budget" sh "$check" "$fixture" sa_attn_kernel /nonexistent/budget
empty=$(mktemp -d)
expect 2 "no reports" sh "$check" "$empty" sa_attn_kernel
rmdir "$empty"
[ $failed = 0 ] && echo "test_check_spills: passed"
exit $failed
