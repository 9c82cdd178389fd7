#!/bin/bash
# probe_inflight: calls still running at the stop are reported as such,
# not dropped.  tgt_probe inflight: probe_sleep(100 us) 10 times, then
# probe_sleep(60 s), which writes "state done" once entered.  vigil probe --latency, stopped by
# SIGINT once the target is done: calls == 11 (every entry counted), the
# latency of the 10 short calls (count 10, each at least 100 us), and the
# long call in flight (in_flight 1, running for at least as long as from
# its start to the stop), with no unmatched or unreturned return.
source "$(dirname "$0")/lib.sh"
source "$E2E_DIR/probelib.bash"

start_target tgt_probe "$T/f.truth" inflight
pid=$TPID
wait_truth "$T/f.truth" ready

probe_bg f int "$T/f.truth" "$pid" probe "$pid" probe_sleep --latency --json
assert_rc 0 "vigil probe --latency (a call running at the stop)"
check "$T/f.truth" "$T/f.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
eq(w + ": calls (10 short + 1 running)", 11, loc.get("calls"))
lat = loc.get("latency") or {}
eq(w + ": latency.count (the short calls)", 10, lat.get("count"))
eq(w + ": latency.in_flight (the 60 s call)", 1, lat.get("in_flight"))
eq(w + ": unmatched_returns", 0, lat.get("unmatched_returns"))
eq(w + ": unreturned", 0, lat.get("unreturned"))
check((lat.get("min_ns") or 0) >= 100000, w + ": min_ns %r below the 100 us sleep" % (lat.get("min_ns"),))
check((lat.get("max_ns") or 10**12) < 60 * 10**9, w + ": max_ns %r: the running call was timed" % (lat.get("max_ns"),))
check((lat.get("in_flight_oldest_ns") or 0) > 0, w + ": in_flight_oldest_ns %r must be the running call age" % (lat.get("in_flight_oldest_ns"),))
'
echo "ok: 11 calls, 10 timed, 1 in flight at the stop"
