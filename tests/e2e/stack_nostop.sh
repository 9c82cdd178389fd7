#!/bin/bash
# stack_nostop: vigil stack neither stops nor wakes a thread.  A thread
# blocked in a system call was switched out once and stays so: its
# voluntary + nonvoluntary context switches (/proc/PID/task/TID/status)
# do not move unless something wakes it, and a ptrace attach or a stop
# signal does (the thread must leave its wait to stop).  On
# tgt_stack_basic the blocked threads (the two nappers and the reader)
# must have the same counts, and state S, before and after vigil stack as
# a table, --json, --tid and --every; the spinner, on a CPU or preempted,
# is not counted.  The control that the check sees a stop: eu-stack -p
# (when installed) moves the same counts.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_stack_basic "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
blocked=$(awk '$1 == "thread" && $3 != "spinner" { print $2 }' "$truth")
[[ $(wc -w <<<"$blocked") == 3 ]] || harness_error "expected 3 blocked threads in the truth: $blocked"

# "TID STATE SWITCHES" per blocked thread.
counts() {
	local tid
	for tid in $blocked; do
		awk -v tid="$tid" '$1 == "State:" { s = $2 }
			$1 == "voluntary_ctxt_switches:" || $1 == "nonvoluntary_ctxt_switches:" { n += $2 }
			END { print tid, s, n }' "/proc/$pid/task/$tid/status"
	done
}

before=$(counts)
grep -q ' [^S] ' <<<"$before" && harness_error "a blocked thread is not sleeping: $before"
vg table stack "$pid"
assert_rc 0
vg json stack "$pid" --json
assert_rc 0
first=$(head -n1 <<<"$blocked")
vg tid stack "$pid" --tid "$first" --json
assert_rc 0
vg every stack "$pid" --every 10ms --duration 200ms --format folded
assert_rc 0
after=$(counts)
[[ $before == "$after" ]] || fail "vigil stack woke or stopped a blocked thread (TID STATE SWITCHES):
before:
$before
after:
$after"
echo "ok: blocked threads untouched by vigil stack: $(tr '\n' ';' <<<"$after")"

if command -v eu-stack >/dev/null; then
	eu-stack -p "$pid" >/dev/null 2>&1 || true
	control=$(counts)
	[[ $control != "$after" ]] || fail "the control failed: eu-stack -p did not move the blocked threads' switch counts, so this check could not see a stop"
	echo "ok: control: eu-stack -p moves them ($(tr '\n' ';' <<<"$control"))"
fi
