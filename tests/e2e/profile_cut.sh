#!/bin/bash
# profile_cut: the table says when stacks were cut.  tgt_profile qsort
# (main -> sort_loop -> libc qsort -> cmp_slow) profiled with --unwind
# dwarf --stack-bytes 64: the 64 bytes of stack copied per sample end the
# CFI walk long before main, so the table's second line must read
# "N of M stacks cut before their outermost frame (stack_end K...)" with
# N == M (every sample) and K > 0 (it said nothing: totals of callers
# looked complete).  With the default 8192 bytes the walk reaches _start:
# fewer than a tenth of the stacks may be cut.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_profile "$truth" qsort
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg small profile "$pid" --duration 700 --unwind dwarf --stack-bytes 64 --top 3
assert_rc 0
line=$(sed -n 2p "$T/small.out")
[[ $line =~ ^([0-9]+)\ of\ ([0-9]+)\ stacks\ cut\ before\ their\ outermost\ frame\ \(.*stack_end\ ([0-9]+).*\):\ their\ callers\ are\ missing ]] ||
	{ show_last; fail "$LAST_CMD: the table does not say that the stacks were cut (line 2: '$line')"; }
((BASH_REMATCH[2] > 0)) || { show_last; fail "$LAST_CMD: no samples"; }
((BASH_REMATCH[1] == BASH_REMATCH[2])) ||
	{ show_last; fail "$LAST_CMD: ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} stacks cut, expected all"; }
echo "ok: --stack-bytes 64: $line"

vg full profile "$pid" --duration 700 --unwind dwarf --top 3
assert_rc 0
line=$(sed -n 2p "$T/full.out")
if [[ $line =~ ^([0-9]+)\ of\ ([0-9]+)\ stacks\ cut ]]; then
	((BASH_REMATCH[1] * 10 < BASH_REMATCH[2])) ||
		{ show_last; fail "$LAST_CMD: $line (with 8192 bytes of stack)"; }
fi
echo "ok: default stack copy: ${line:0:120}"
