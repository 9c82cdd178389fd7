#!/bin/bash
# probe_procs: exec() and fork() during a probe (issue 15 items 1-2).
#   exec: tgt_procs calls procs_work N times, exec()s itself, and the new
#         program calls it without a pause for 20 ms, then N more times.
#         The probe stops at the exec (stop_reason target_exec, exit 4) and
#         process_changed is true.  Where the exec gate works (a BPF program
#         on sched:sched_process_exec closes the probe's gate in the kernel
#         at the exec), calls is the old program's N exactly, every time,
#         and a lower bound for the process.  Before it, vigil closed the
#         gate ~0.1-3 ms after the exec, from user space, and counted some
#         of the new program's calls in 8 runs of 20 (3064, 3001, ...)
#         while saying they were the old program's.
#   exec without the gate (VIGIL_PROBE_NO_EXEC_GATE=1, as on a kernel with
#         no tracefs): the report must not claim the old program's counts:
#         neither exact nor a lower bound, a count note with the delay.
#   fork: K children call procs_work N times each beside the parent's N:
#         calls == N (the parent's), process_tree names the K children and
#         the counts are a lower bound.  Before: "exact", no word of them.
source "$(dirname "$0")/lib.sh"
source "$E2E_DIR/probelib.bash"

N=3000
K=3
start_target tgt_procs "$T/exec.truth" exec "$N"
pid_exec=$TPID
start_target tgt_procs "$T/nogate.truth" exec "$N"
pid_nogate=$TPID
start_target tgt_procs "$T/fork.truth" fork "$N" "$K"
pid_fork=$TPID
wait_truth "$T/exec.truth" ready
wait_truth "$T/nogate.truth" ready
wait_truth "$T/fork.truth" ready

probe_bg exec wait "$T/exec.truth" "$pid_exec" probe "$pid_exec" procs_work --json
assert_rc 4 "vigil probe across an exec()"
# vigil stops at the exec; the new program writes the truth when it is done.
wait_truth "$T/exec.truth" done
check "$T/exec.truth" "$T/exec.out" '
obs = d["observation"]
eq(w + ": stop_reason", "target_exec", obs.get("stop_reason"))
eq(w + ": process.process_changed", True, d["process"].get("process_changed"))
tree = obs.get("process_tree") or {}
ex = tree.get("exec")
check(isinstance(ex, dict), w + ": process_tree.exec must say when: " + repr(tree))
ex = ex or {}
notes = obs.get("count_notes") or []
loc = d["locations"][0]
before = int(t.one("before_exec"))
if ex.get("stopped_in_kernel") is True:
    eq(w + ": calls (the old program made " + str(before) + ")", before, loc.get("calls"))
    eq(w + ": counts_are_lower_bound", True, obs.get("counts_are_lower_bound"))
    eq(w + ": count_notes", [], notes)
    check(any("exec()" in r and "in the kernel" in r for r in obs.get("lower_bound_reasons", [])),
          w + ": no lower-bound reason says the exec() closed the gate in the kernel")
else:
    # Only a kernel or privileges without the tracepoint excuse it.
    check(any("exec()" in n for n in notes), w + ": no count note names the exec(): " + repr(notes))
    check(not any("did not fire" in n for n in notes), w + ": the exec gate was armed and did not fire: " + repr(notes))
    eq(w + ": counts_are_lower_bound (no exec gate here)", False, obs.get("counts_are_lower_bound"))
    print("NOTE: no exec gate here, only the honest report was checked: " + repr(notes))
eq(w + ": calls_exact", False, loc.get("calls_exact"))
'
grep -q "called exec()" "$T/exec.err" || { show_last; fail "no stderr line saying the process called exec()"; }
echo "ok: exec: stopped at the exec, $N calls of the old program, lower bound, exit 4"

export VIGIL_PROBE_NO_EXEC_GATE=1
probe_bg nogate wait "$T/nogate.truth" "$pid_nogate" probe "$pid_nogate" procs_work --json
unset VIGIL_PROBE_NO_EXEC_GATE
assert_rc 4 "vigil probe across an exec() without the exec gate"
wait_truth "$T/nogate.truth" done
check "$T/nogate.truth" "$T/nogate.out" '
obs = d["observation"]
eq(w + ": stop_reason", "target_exec", obs.get("stop_reason"))
ex = (obs.get("process_tree") or {}).get("exec") or {}
eq(w + ": process_tree.exec.stopped_in_kernel", False, ex.get("stopped_in_kernel"))
after_us = ex.get("stopped_after_us")
check(isinstance(after_us, (int, float)) and after_us >= 0, w + ": stopped_after_us must be measured: " + repr(ex))
eq(w + ": counts_exact", False, obs.get("counts_exact"))
eq(w + ": counts_are_lower_bound", False, obs.get("counts_are_lower_bound"))
notes = obs.get("count_notes") or []
check(any("may include calls of the new program" in n and "VIGIL_PROBE_NO_EXEC_GATE" in n for n in notes),
      w + ": no count note says the new program may be counted, and why: " + repr(notes))
check(not any("exec()" in r for r in obs.get("lower_bound_reasons", [])), w + ": the exec() is not a lower-bound reason here")
loc = d["locations"][0]
before, after = int(t.one("before_exec")), int(t.one("after_exec"))
check(before <= loc.get("calls", -1) <= before + after,
      w + ": calls %r: the old program made %d, the new one %d" % (loc.get("calls"), before, after))
eq(w + ": calls_exact", False, loc.get("calls_exact"))
print("nogate: calls %d (the old program made %d), gate closed %.0f us after the exec" % (loc["calls"], before, after_us))
'
grep -q "may include calls of the new program" "$T/nogate.err" || { show_last; fail "no stderr line saying the counts may include the new program"; }
! grep -q "old program's" "$T/nogate.err" || { show_last; fail "stderr claims the old program's counts without the exec gate"; }
echo "ok: exec without the exec gate: neither exact nor a lower bound, and says why"

probe_bg fork int "$T/fork.truth" "$pid_fork" probe "$pid_fork" procs_work --json
assert_rc 0 "vigil probe of a forking process"
check "$T/fork.truth" "$T/fork.out" '
obs = d["observation"]
tree = obs.get("process_tree") or {}
eq(w + ": process_tree.children_created", int(t.one("children")), tree.get("children_created"))
eq(w + ": process_tree.children_pids", sorted(int(x) for x in t.kv["child"]), sorted(tree.get("children_pids") or []))
eq(w + ": process_tree.children_covered", False, tree.get("children_covered"))
eq(w + ": process_tree.exec", None, tree.get("exec"))
eq(w + ": counts_are_lower_bound (children run the code)", True, obs.get("counts_are_lower_bound"))
check(any("child process" in r for r in obs.get("lower_bound_reasons", [])), w + ": no lower-bound reason names the children")
loc = d["locations"][0]
eq(w + ": calls (the parent made " + t.one("parent_calls") + ")", int(t.one("parent_calls")), loc.get("calls"))
'
echo "ok: fork: $K children counted and named, the parent's $N calls, lower bound"
