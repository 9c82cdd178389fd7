#!/bin/bash
# probe_recursive: `vigil probe PID probe_recurse --latency` on tgt_probe
# recursive: 50 calls of probe_recurse(10), each recursing 10 deep (a real
# call per level, not a loop): 550 entries, the count the target makes
# itself.  calls == latency.count == 550: every entry paired with its own
# return through the per-thread stack, none unmatched, unreturned or in
# flight; the histogram holds the 550; the code is restored.
source "$(dirname "$0")/lib.sh"

truth=$T/rec.truth
start_target tgt_probe "$truth" recursive
pid=$TPID
wait_truth "$truth" ready

# probe_bg NAME STOP TRUTH TPID ARGS...  - vigil ARGS in the background,
# the go (SIGUSR1) to TPID once vigil printed '# probing', then, once TRUTH
# says "state done", stopped by STOP (int, term, or wait: by itself); $RC.
probe_bg() {
	local name=$1 stop=$2 truth=$3 tpid=$4
	shift 4
	LAST=$name
	LAST_CMD="vigil $*"
	"$PYTHON" -S "$E2E_DIR/probecheck.py" run "$name" "$stop" "$truth" "$tpid" "$VIGIL" "$@" ||
		harness_error "probecheck.py run failed"
	RC=$(cat "$T/$name.rc")
	case $RC in
	notarmed) RC=$(cat "$T/$name.rc2"); show_last; fail "$LAST_CMD: exited before its '# probing' line" ;;
	noarm) show_last; fail "$LAST_CMD: no '# probing' line on stderr within 10 s" ;;
	notdone) show_last; fail "$LAST_CMD: the target did not finish its calls within 30 s of the go" ;;
	timeout) show_last; fail "$LAST_CMD: still running 20 s after the stop ($stop; killed)" ;;
	esac
}

# final TRUTH PID  - SIGUSR2 to the target (vigil has exited): it re-reads
# its code into TRUTH ("code_final" lines, "state final").
final() {
	kill -USR2 "$2"
	wait_truth "$1" final
}

# check TRUTH OUT PYTHON  - the report OUT against TRUTH (t: ProbeTruth,
# d: the document, w: what is checked).
check() {
	vg_py "$1" "$2" "$3" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import sys
from probecheck import *
t, d, code, w = ProbeTruth(sys.argv[1]), load_json(sys.argv[2]), sys.argv[3], sys.argv[4]
exec(code)
done()
PY
}

probe_bg rec int "$truth" "$pid" probe "$pid" probe_recurse --latency --json
assert_rc 0 "vigil probe --latency probe_recurse"
final "$truth" "$pid"
check "$truth" "$T/rec.out" '
eq(w + ": the target entered probe_recurse 550 times (harness)", 550, t.int("calls"))
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_recurse", w, calls=550)
lat = loc.get("latency")
if not check(isinstance(lat, dict), w + ": latency must be an object, got %r" % (lat,)):
    done_now()
eq(w + ": latency.count (entries paired with their returns)", 550, lat.get("count"))
eq(w + ": latency.unmatched_returns", 0, lat.get("unmatched_returns"))
eq(w + ": latency.unreturned", 0, lat.get("unreturned"))
eq(w + ": latency.in_flight", 0, lat.get("in_flight"))
eq(w + ": histogram total", 550, sum(b.get("count", 0) for b in lat.get("histogram") or []))
eq(w + ": observation.records (550 entries + 550 returns)", 1100, obs.get("records"))
mn, mx = lat.get("min_ns"), lat.get("max_ns")
check(isinstance(mn, int) and isinstance(mx, int) and 0 < mn <= mx,
      w + ": min_ns %r max_ns %r: expected 0 < min <= max" % (mn, mx))
check_code_restored(t, ["probe_recurse"], w)
'
echo "ok: recursion: 550 entries, 550 paired returns"
