#!/bin/bash
# watch_stop: every stop reason, each with the full report and exact counts
# against what tgt_watch says it wrote:
#   target_exited     the target writes K times and exits mid-watch
#   interrupted       SIGINT (and SIGTERM) once the target has written K
#                     times: exit 0 and the whole document (and the table)
#   max_events        --max-events N < K: exactly N accepted
#   duration  --duration MS: all K writes in the window
source "$(dirname "$0")/lib.sh"

K=${WATCH_K:-300}
for c in exit int term text max dur; do
	mode=single
	[[ $c == exit ]] && mode=exit
	start_target tgt_watch "$T/$c.truth" "$mode" "$K"
	eval "pid_$c=$TPID"
done
for c in exit int term text max dur; do
	wait_truth "$T/$c.truth" ready
done
watch_probe "$pid_int"
watch_env "$T/int.truth" reg

# check NAME TRUTH STOP HITS [ALIVE]  - the report $T/NAME.out.
check() {
	vg_py "$T/$1.out" "$2" "$3" "$4" "${5:-true}" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import sys
from watchcheck import *
out, truth, stop, hits, alive = sys.argv[1], WatchTruth(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5] == "true"
w = f"watch stopped by {stop}"
doc = load_json(out)
obs = check_watch_header(doc, truth.pid, w, alive=alive)
eq(f"{w}: stop_reason", stop, obs.get("stop_reason"))
eq(f"{w}: target state", "done", truth.state)
wt = the_watch(doc, w, 0, n=1)
eq(f"{w}: accepted_hits", hits, wt.get("accepted_hits"))
sites = wt.get("writer_sites") or []
eq(f"{w}: number of writer sites", 1, len(sites))
check_site(site_at_line(sites, truth.lines["reg"], w), truth, "reg", w + " site", "store", hits=hits)
samples = wt.get("samples") or []
t = truth.threads[0]
eq_list(f"{w}: values", [t["first"] + i for i in range(hits)],
        values_of(samples, w, kind="register_store", register="rax"))
check(all(s.get("tid") == t["tid"] for s in samples), f"{w}: a sample from another thread than {t['tid']}")
if stop == "max_events":
    eq(f"{w}: observation.max_events", hits, obs.get("max_events"))
if stop == "duration":
    eq(f"{w}: requested_ms", 1500, obs.get("requested_ms"))
    e = obs.get("elapsed_ms")
    check(isinstance(e, (int, float)) and 1500 <= e < 10000, f"{w}: elapsed_ms {e!r} not in [1500, 10000)")
done()
PY
}

# --max-events: exactly N accepted, then vigil stops by itself.
n=$((K / 3))
vg_watch_start max watch "$pid_max" g_cell --regs --max-events "$n" --json
kill -USR1 "$pid_max"
wait_truth "$T/max.truth" done
vg_watch_wait 10
assert_rc 0 "vigil watch --max-events $n"
check max "$T/max.truth" max_events "$n"
echo "ok: max_events with $n of $K"

# --duration: the K writes fall inside the window.
vg_watch_start dur watch "$pid_dur" g_cell --regs --duration 1500 --json
kill -USR1 "$pid_dur"
wait_truth "$T/dur.truth" done
vg_watch_wait 10
assert_rc 0 "vigil watch --duration 1500"
check dur "$T/dur.truth" duration "$K"
echo "ok: duration with $K hits ($WATCH_MODE)"

# The target exits mid-watch: vigil stops by itself with what it saw.
vg_watch_start exit watch "$pid_exit" g_cell --regs --json
kill -USR1 "$pid_exit"
vg_watch_wait 10
assert_rc 0 "vigil watch of a target that exits"
wait_truth "$T/exit.truth" done
assert_eq "tgt_watch exit: writes" "$K" "$(truth_get "$T/exit.truth" total)"
check exit "$T/exit.truth" target_exited "$K" false
echo "ok: target_exited with $K hits"

# SIGINT, SIGTERM: stop at once, full report, exit 0.
for c in int term; do
	p=pid_$c
	vg_watch_start "$c" watch "${!p}" g_cell --regs --json
	kill -USR1 "${!p}"
	wait_truth "$T/$c.truth" done
	vg_watch_signal "${c^^}"
	assert_rc 0 "vigil watch stopped by SIG${c^^}"
	check "$c" "$T/$c.truth" interrupted "$K"
	echo "ok: SIG${c^^}: interrupted with $K hits"
done

# The table after SIGINT: the watch line and the stop reason.
vg_watch_start text watch "$pid_text" g_cell
kill -USR1 "$pid_text"
wait_truth "$T/text.truth" done
vg_watch_signal INT
assert_rc 0 "vigil watch (table) stopped by SIGINT"
grep -q "stop: interrupted" "$T/text.out" || { show_last; fail "$LAST_CMD: no 'stop: interrupted' in the table"; }
grep -Eq "^watch 1 .*g_cell.* writes $K  traps $K\$" "$T/text.out" || { show_last; fail "$LAST_CMD: no 'watch 1 ... g_cell ... writes $K  traps $K' line"; }
echo "ok: SIGINT: table"
