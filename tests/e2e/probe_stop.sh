#!/bin/bash
# probe_stop: every way a probe ends gives exit 0, the complete report and
# no probe left in the target:
#   target_exited  tgt_probe exit 1000 calls probe_counted() for 1 s after
#                  the go, then exits: stop_reason "target_exited", calls ==
#                  the target's own count exactly
#   interrupted    SIGINT while tgt_probe spin is calling probe_bench() in a
#                  tight loop: "interrupted", 0 < calls <= the target's
#                  calls; the target survives the removal mid-call and
#                  finishes its loop
#   SIGTERM        after tgt_probe count 3000: "interrupted", exactly 3000
# After each run against a live target, the target reads its code again
# (SIGUSR2): the bytes are those from before vigil started (the kernel
# restored them when vigil closed the probes).  Also: no uprobe naming
# tgt_probe is left in tracefs' uprobe_events (vigil's PMU probes never
# appear there; perf probe's would).
source "$(dirname "$0")/lib.sh"

start_target tgt_probe "$T/exit.truth" exit 1000
pid_exit=$TPID
start_target tgt_probe "$T/int.truth" spin 3
pid_int=$TPID
start_target tgt_probe "$T/term.truth" count 3000
pid_term=$TPID
for c in exit int term; do
	wait_truth "$T/$c.truth" ready
done

source "$E2E_DIR/probelib.bash"

# The target exits mid-probe.
probe_bg exit wait "$T/exit.truth" "$pid_exit" probe "$pid_exit" probe_counted --json
assert_rc 0 "vigil probe of a target that exits"
for ((i = 0; i < 500; i++)); do
	[[ -e /proc/$pid_exit/exe ]] || break
	sleep 0.01
done
check "$T/exit.truth" "$T/exit.out" '
eq(w + ": target state", "done", t.state)
obs, locs = check_probe_doc(d, t.pid, w, stop="target_exited", alive=False)
n = t.int("calls")
check(n > 0, w + ": the target made no calls (harness)")
check_function_location(locs[0], t, "probe_counted", w, calls=n)
'
grep -q '^# probe: stopped (target_exited)' "$T/exit.err" || { show_last; fail "$LAST_CMD: no closing line '# probe: stopped (target_exited) ...' on stderr"; }
echo "ok: target_exited: $(truth_get "$T/exit.truth" calls) calls, exact"

# SIGINT while the target is calling the probed function.
probe_bg int int@1000 "$T/int.truth" "$pid_int" probe "$pid_int" probe_bench --json
assert_rc 0 "vigil probe stopped by SIGINT mid-calls"
wait_truth "$T/int.truth" done
kill -0 "$pid_int" 2>/dev/null || fail "tgt_probe spin died after vigil removed its probe mid-call"
final "$T/int.truth" "$pid_int"
check "$T/int.truth" "$T/int.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_bench", w)
n, c = t.int("calls"), loc.get("calls")
check(isinstance(c, int) and 0 < c < n, w + ": calls %r: expected > 0 and < the target own %d (it went on calling after vigil stopped)" % (c, n))
eq(w + ": the code the target read at the end of its loop (after vigil exited)",
   t.code["code"].get("probe_bench"), t.code["code_after"].get("probe_bench"))
check_code_restored(t, ["probe_bench"], w, armed=False)
ms = obs.get("duration_ms") or 0
check(800 <= ms <= 3000, w + ": duration_ms %r for a SIGINT 1000 ms after the go" % (ms,))
'
grep -q '^# probe: stopped (interrupted)' "$T/int.err" || { show_last; fail "$LAST_CMD: no closing line '# probe: stopped (interrupted) ...' on stderr"; }
echo "ok: SIGINT mid-calls: interrupted, the target survives, code restored"

probe_bg term term "$T/term.truth" "$pid_term" probe "$pid_term" probe_counted --json
assert_rc 0 "vigil probe stopped by SIGTERM"
final "$T/term.truth" "$pid_term"
check "$T/term.truth" "$T/term.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
check_function_location(locs[0], t, "probe_counted", w, calls=3000)
check_code_restored(t, ["probe_counted"], w)
'
echo "ok: SIGTERM: interrupted, 3000 calls, code restored"

ev=/sys/kernel/tracing/uprobe_events
[[ -r $ev ]] || ev=/sys/kernel/debug/tracing/uprobe_events
if [[ -r $ev ]]; then
	! grep -q tgt_probe "$ev" || fail "a uprobe on tgt_probe is left in $ev: $(grep tgt_probe "$ev" | head -n3)"
	echo "ok: no uprobe on tgt_probe in $ev"
else
	echo "note: no readable uprobe_events (tracefs not mounted): not checked"
fi
