#!/bin/bash
# probe_filter: `vigil probe PID probe_args --filter ...` on tgt_probe args
# (probe_args(size_t size, int delta, const char *name, unsigned char
# flag): (4096, -5, name_a, 1) x7 and (512, 3, name_b, 0) x3, the counts
# in the target's own truth): only matching calls are counted and their
# arguments recorded, the calls seen are 10.  Terms by DWARF name
# ('size == 4096'), by argN with a signed comparison ('arg1 < 0': delta is
# an int, -5 in esi), ANDed ('size > 100 && flag == 0'); a filter nothing
# matches counts 0 of 10.  Bad filters: exit 2 with one line.
source "$(dirname "$0")/lib.sh"

cases="name signed and none"
for c in $cases; do
	start_target tgt_probe "$T/$c.truth" args
	eval "pid_$c=$TPID"
done
for c in $cases; do
	wait_truth "$T/$c.truth" ready
done

source "$E2E_DIR/probelib.bash"

# want: (index of the args_call that matches, or None)
expect='
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
c1, c2 = t.args_calls
eq(w + ": the target calls (harness)", (7, 3), (c1["count"], c2["count"]))
calls = [c1, c2][want]["count"] if want is not None else 0
eq(w + ": calls (matched)", calls, loc.get("calls"))
eq(w + ": calls_seen", 10, loc.get("calls_seen"))
args = loc.get("args") or [{}]
top = [(x.get("value"), x.get("count")) for x in args[0].get("top") or []]
eq(w + ": size of the matched calls", [(str([c1, c2][want]["size"]), calls)] if calls else [], top)
check_code_restored(t, ["probe_args"], w)
'

run_case() {   # CASE WANT FILTER
	probe_bg "$1" int "$T/$1.truth" "$(eval echo \$pid_$1)" probe "$(eval echo \$pid_$1)" probe_args \
		--args 1 --filter "$3" --json
	assert_rc 0 "vigil probe --filter '$3'"
	final "$T/$1.truth" "$(eval echo \$pid_$1)"
	check "$T/$1.truth" "$T/$1.out" "want = $2
$expect"
	echo "ok: --filter '$3': exact matched count and calls seen"
}
run_case name 0 'size == 4096'
run_case signed 0 'arg1 < 0'
run_case and 1 'size > 100 && flag == 0'
run_case none None 'size == 1'

bad() {   # WHAT EXPECTED-TEXT FILTER
	vg bad probe "$pid_name" probe_args --filter "$3" --duration 100ms
	assert_rc 2 "$1"
	assert_one_error_line
	grep -qF -- "$2" "$T/bad.err" || { show_last; fail "$1: the error must say '$2'"; }
	echo "ok: $1: exit 2, one line"
}
bad "unknown parameter" "no parameter 'lenn' (the function's parameters: size, delta, name, flag" 'lenn > 4'
bad "missing operator" "expected ==, !=, <, <=, > or >= after 'size'" 'size 4'
bad "missing number" "expected a number" 'size >'
bad "negative unsigned" "'size' is not signed" 'size > -1'
bad "five terms" "at most 4 terms" 'arg0 > 0 && arg0 > 0 && arg0 > 0 && arg0 > 0 && arg0 > 0'

