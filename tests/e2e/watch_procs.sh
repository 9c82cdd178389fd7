#!/bin/bash
# watch_procs: exec() and fork() during a watch (issue 15 items 1-2).
#   exec: tgt_procs writes g_cell N times, exec()s itself and writes N more
#         (the new program's g_cell is elsewhere): the watch stops at the
#         exec (stop_reason target_exec, exit 4) with the old program's N
#         hits, counts a lower bound, process_changed true.  Before the fix:
#         "exact", process_changed false, exit 0.
#   fork: K children write their own copies of g_cell: the parent's N hits,
#         and process_tree names the K children.
# Under the uprobe emulation (breakpoints that do not fire, or
# WATCH_MODE_FORCE=emulation) the traps are uprobes on the label after
# tgt_procs's store ("emu cell"): the same checks hold, since the cut at
# the exec is by time and children are counted from FORK records; only
# what emulation cannot show is left out (the lower bound is then also
# for threads created after setup, so its reasons are not checked).
source "$(dirname "$0")/lib.sh"

N=3000
K=3
start_target tgt_procs "$T/probe.truth" fork 1 1
wait_truth "$T/probe.truth" ready
watch_probe "$TPID"

start_target tgt_procs "$T/exec.truth" exec "$N"
pid_exec=$TPID
start_target tgt_procs "$T/fork.truth" fork "$N" "$K"
pid_fork=$TPID
wait_truth "$T/exec.truth" ready
wait_truth "$T/fork.truth" ready

watch_env "$T/exec.truth" cell
vg_watch_start exec watch "$pid_exec" g_cell --json
kill -USR1 "$pid_exec"
vg_watch_wait 20
assert_rc 4 "vigil watch across an exec()"
wait_truth "$T/exec.truth" done
vg_py "$T/exec.truth" "$T/exec.out" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import os, sys
from vgcheck import *
t, d, w = Truth(sys.argv[1]), load_json(sys.argv[2]), sys.argv[3]
obs = d["observation"]
eq(w + ": backend", {"real": "perf_breakpoint", "emulation": "uprobe_emulation"}[os.environ["WATCH_MODE"]], d.get("backend"))
eq(w + ": stop_reason", "target_exec", obs.get("stop_reason"))
eq(w + ": process.process_changed", True, d["process"].get("process_changed"))
eq(w + ": counts_are_lower_bound", True, obs.get("counts_are_lower_bound"))
check(isinstance((obs.get("process_tree") or {}).get("exec"), dict), w + ": process_tree.exec")
eq(w + ": process_tree.exec.stopped_in_kernel (samples cut by time)", None,
   ((obs.get("process_tree") or {}).get("exec") or {}).get("stopped_in_kernel", "absent"))
eq(w + ": accepted_hits (the old program wrote " + t.kv["before_exec"][0] + ")", int(t.kv["before_exec"][0]),
   d["watches"][0].get("accepted_hits"))
done()
PY
echo "ok: exec ($WATCH_MODE): stopped at the exec, $N hits of the old program, lower bound, exit 4"

watch_env "$T/fork.truth" cell
vg_watch_start fork watch "$pid_fork" g_cell --json
kill -USR1 "$pid_fork"
wait_truth "$T/fork.truth" done
vg_watch_signal INT
assert_rc 0 "vigil watch of a forking process"
vg_py "$T/fork.truth" "$T/fork.out" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import sys
from vgcheck import *
t, d, w = Truth(sys.argv[1]), load_json(sys.argv[2]), sys.argv[3]
tree = d["observation"].get("process_tree") or {}
eq(w + ": process_tree.children_created", int(t.kv["children"][0]), tree.get("children_created"))
eq(w + ": process_tree.children_pids", sorted(int(x) for x in t.kv["child"]), sorted(tree.get("children_pids") or []))
eq(w + ": accepted_hits (the parent's writes)", int(t.kv["parent_calls"][0]), d["watches"][0].get("accepted_hits"))
done()
PY
grep -q "child process" "$T/fork.err" || { show_last; fail "no stderr line about the child processes"; }
echo "ok: fork ($WATCH_MODE): $K children named, the parent's $N hits"
