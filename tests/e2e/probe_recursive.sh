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

source "$E2E_DIR/probelib.bash"

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
