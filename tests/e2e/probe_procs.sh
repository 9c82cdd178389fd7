#!/bin/bash
# probe_procs: exec() and fork() during a probe (issue 15 items 1-2).
#   exec: tgt_procs calls procs_work N times, exec()s itself and calls it N
#         more: the probe stops at the exec (stop_reason target_exec, exit
#         4), counts the old program's N exactly, says the counts are a
#         lower bound for the process, process_changed is true.  Before the
#         fix it went on counting the new program and said nothing.
#   fork: K children call procs_work N times each beside the parent's N:
#         calls == N (the parent's), process_tree names the K children and
#         the counts are a lower bound.  Before: "exact", no word of them.
source "$(dirname "$0")/lib.sh"
source "$E2E_DIR/probelib.bash"

N=3000
K=3
start_target tgt_procs "$T/exec.truth" exec "$N"
pid_exec=$TPID
start_target tgt_procs "$T/fork.truth" fork "$N" "$K"
pid_fork=$TPID
wait_truth "$T/exec.truth" ready
wait_truth "$T/fork.truth" ready

probe_bg exec wait "$T/exec.truth" "$pid_exec" probe "$pid_exec" procs_work --json
assert_rc 4 "vigil probe across an exec()"
check "$T/exec.truth" "$T/exec.out" '
obs = d["observation"]
eq(w + ": stop_reason", "target_exec", obs.get("stop_reason"))
eq(w + ": process.process_changed", True, d["process"].get("process_changed"))
eq(w + ": counts_are_lower_bound", True, obs.get("counts_are_lower_bound"))
check(any("exec()" in r for r in obs.get("lower_bound_reasons", [])), w + ": no lower-bound reason names the exec()")
tree = obs.get("process_tree") or {}
check(isinstance(tree.get("exec"), dict), w + ": process_tree.exec must say when: " + repr(tree))
loc = d["locations"][0]
eq(w + ": calls (the old program made " + t.one("before_exec") + ")", int(t.one("before_exec")), loc.get("calls"))
eq(w + ": calls_exact", False, loc.get("calls_exact"))
'
grep -q "called exec()" "$T/exec.err" || { show_last; fail "no stderr line saying the process called exec()"; }
echo "ok: exec: stopped at the exec, $N calls of the old program, lower bound, exit 4"

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
