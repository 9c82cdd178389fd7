#!/bin/bash
# probe_count: `vigil probe PID probe_counted` on tgt_probe count N, whose
# probe_counted() is called N times in all by three threads, one of them
# created after the probe is armed: the location's calls == N exactly and
# calls_exact, at the target's own address and file offset; --per-thread:
# the three tids with each thread's own count, the late thread included;
# --duration with --interval: stop_reason "duration", the same exact count
# and one live line per interval; the table view shows N.  After each run
# the target reads its code again (SIGUSR2): the bytes are those from before
# vigil started, and the int3 was there while the probe was armed.
source "$(dirname "$0")/lib.sh"

N=${PROBE_N:-30000}
for c in json thread dur table; do
	start_target tgt_probe "$T/$c.truth" count "$N"
	eval "pid_$c=$TPID"
done
for c in json thread dur table; do
	wait_truth "$T/$c.truth" ready
done

source "$E2E_DIR/probelib.bash"

probe_bg json int "$T/json.truth" "$pid_json" probe "$pid_json" probe_counted --json
assert_rc 0 "vigil probe stopped by SIGINT"
final "$T/json.truth" "$pid_json"
check "$T/json.truth" "$T/json.out" '
eq(w + ": the per-thread calls add up to the calls line (harness)", t.int("calls"), sum(x["calls"] for x in t.threads))
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_counted", w, calls=t.int("calls"))
eq(w + ": per_thread (not asked)", None, loc.get("per_thread"))
eq(w + ": latency (not asked)", None, loc.get("latency"))
eq(w + ": args (not asked)", None, loc.get("args"))
eq(w + ": stacks (not asked)", None, loc.get("stacks"))
check_code_restored(t, ["probe_counted"], w)
'
echo "ok: calls == $N exactly, code restored"

probe_bg thread int "$T/thread.truth" "$pid_thread" probe "$pid_thread" probe_counted --per-thread --json
assert_rc 0 "vigil probe --per-thread"
final "$T/thread.truth" "$pid_thread"
check "$T/thread.truth" "$T/thread.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_counted", w, calls=t.int("calls"))
eq(w + ": the target has 3 threads (harness)", ["early", "late", "main"], sorted(x["role"] for x in t.threads))
pt = loc.get("per_thread")
if check(isinstance(pt, list), w + ": per_thread must be a list, got %r" % (pt,)):
    got = sorted((x.get("tid"), x.get("calls")) for x in pt)
    want = sorted((x["tid"], x["calls"]) for x in t.threads)
    eq(w + ": per_thread (tid, calls), the late thread " + str([x["tid"] for x in t.threads if x["role"] == "late"]) + " included", want, got)
check_code_restored(t, ["probe_counted"], w)
'
echo "ok: --per-thread: 3 threads, each its own count, the one created after arming too"

probe_bg dur wait "$T/dur.truth" "$pid_dur" probe "$pid_dur" probe_counted --duration 3000 --interval 500 --json
assert_rc 0 "vigil probe --duration 3000"
final "$T/dur.truth" "$pid_dur"
check "$T/dur.truth" "$T/dur.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="duration")
check_function_location(locs[0], t, "probe_counted", w, calls=t.int("calls"))
ms = obs.get("duration_ms") or 0
check(2900 <= ms <= 4500, w + ": duration_ms %r for --duration 3000" % (ms,))
check_code_restored(t, ["probe_counted"], w)
'
n=$(grep -Ec '^# \+[0-9]+\.[0-9]{3}s +probe_counted [0-9.]+/s' "$T/dur.err" || true)
((n >= 4 && n <= 8)) || { show_last; fail "$LAST_CMD: $n interval lines '# +S.SSSs  probe_counted N/s' on stderr, expected 4..8 for 3000 ms / 500 ms"; }
grep -q '^# probe: stopped (duration)' "$T/dur.err" || { show_last; fail "$LAST_CMD: no closing line '# probe: stopped (duration) ...' on stderr"; }
echo "ok: --duration 3000 --interval 500: stop duration, $n interval lines, calls == $N"

probe_bg table int "$T/table.truth" "$pid_table" probe "$pid_table" probe_counted
assert_rc 0 "vigil probe (table)"
Nc=$(sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$N")  # 30,000
grep -E "probe_counted" "$T/table.out" | grep -Eq "(^|[^0-9,])($N|$Nc)([^0-9,]|\$)" ||
	{ show_last; fail "$LAST_CMD: no table line with probe_counted and $N"; }
grep -q '^# probe: stopped (interrupted)' "$T/table.err" || { show_last; fail "$LAST_CMD: no closing line '# probe: stopped (interrupted) ...' on stderr"; }
echo "ok: table"
