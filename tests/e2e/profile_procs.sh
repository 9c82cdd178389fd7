#!/bin/bash
# profile_procs: exec() and fork() during a profile (issue 15 items 1-2).
#   exec: the profile stops at the exec (stop_reason target_exec, exit 4),
#         process_changed true, a lower-bound reason; before the fix it went
#         on sampling the new program against the old one's images.
#   fork: process_tree names the K children whose time was not sampled.
source "$(dirname "$0")/lib.sh"

N=3000
K=3
start_target tgt_procs "$T/exec.truth" exec "$N"
pid_exec=$TPID
start_target tgt_procs "$T/fork.truth" fork "$N" "$K"
pid_fork=$TPID
wait_truth "$T/exec.truth" ready
wait_truth "$T/fork.truth" ready

# prof_start NAME PID: vigil profile PID --format json in the background,
# until its "# profiling" line (10 s).
prof_start() {
	local name=$1 i
	LAST=$name
	LAST_CMD="vigil profile $2 --format json"
	"$PYTHON" -S -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$VIGIL" profile "$2" --format json >"$T/$name.out" 2>"$T/$name.err" </dev/null &
	VGPID=$!
	track_pid "$VGPID"
	for ((i = 0; i < 1000; i++)); do
		grep -q '^# profiling' "$T/$name.err" && return 0
		kill -0 "$VGPID" 2>/dev/null || { show_last; fail "$LAST_CMD: exited before '# profiling'"; }
		sleep 0.01
	done
	fail "$LAST_CMD: no '# profiling' line within 10 s"
}

prof_start exec "$pid_exec"
kill -USR1 "$pid_exec"
vg_watch_wait 20
assert_rc 4 "vigil profile across an exec()"
vg_py "$T/exec.out" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import sys
from vgcheck import *
d, w = load_json(sys.argv[1]), sys.argv[2]
obs = d["observation"]
eq(w + ": stop_reason", "target_exec", obs.get("stop_reason"))
eq(w + ": process.process_changed", True, d["process"].get("process_changed"))
eq(w + ": counts_are_lower_bound", True, obs.get("counts_are_lower_bound"))
check(isinstance((obs.get("process_tree") or {}).get("exec"), dict), w + ": process_tree.exec")
done()
PY
echo "ok: exec: stopped at the exec, exit 4"

prof_start fork "$pid_fork"
kill -USR1 "$pid_fork"
wait_truth "$T/fork.truth" done
vg_watch_signal INT
assert_rc 0 "vigil profile of a forking process"
vg_py "$T/fork.truth" "$T/fork.out" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import sys
from vgcheck import *
t, d, w = Truth(sys.argv[1]), load_json(sys.argv[2]), sys.argv[3]
tree = d["observation"].get("process_tree") or {}
eq(w + ": process_tree.children_created", int(t.kv["children"][0]), tree.get("children_created"))
eq(w + ": process_tree.children_pids", sorted(int(x) for x in t.kv["child"]), sorted(tree.get("children_pids") or []))
done()
PY
echo "ok: fork: $K children named"
