#!/bin/bash
# probe_filter_latency: --filter with --latency and --retval.  The filter
# decides at the entry whether a call is counted and timed; the return of
# a call it dropped must pair with that call, never with a counted one.
#   recursive: probe_recurse(10) 50 times (11 nested entries each, 550 in
#     all; probe_recurse(d) returns d + 1) with --filter 'depth >= 5':
#     exactly 300 calls (depths 10..5) of 550 seen, latency count 300,
#     nothing unmatched, unreturned or in flight, and the return values
#     exactly 6..11 fifty times each: a dropped inner call's return (value
#     5 or less) paired with a counted outer entry would show up here;
#   latency: probe_sleep(us), 20 x 10000 us and 20 x 1000 us interleaved,
#     each timed by the target, with --filter 'us > 5000': 20 calls of 40,
#     20 durations, each within the target's own timing of a 10 ms call
#     (min >= the 10 ms sleep, max <= the slowest 10 ms call as timed by
#     the target), every return value 10000.
source "$(dirname "$0")/lib.sh"
source "$E2E_DIR/probelib.bash"

truth=$T/rec.truth
start_target tgt_probe "$truth" recursive
pid=$TPID
wait_truth "$truth" ready
probe_bg rec int "$truth" "$pid" probe "$pid" probe_recurse --filter 'depth >= 5' --latency --retval --json
assert_rc 0 "vigil probe --filter --latency --retval (recursive)"
check "$truth" "$T/rec.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
eq(w + ": the target entered probe_recurse 550 times (harness)", 550, t.int("calls"))
eq(w + ": calls (depth >= 5)", 300, loc.get("calls"))
eq(w + ": calls_seen", 550, loc.get("calls_seen"))
lat = loc.get("latency") or {}
eq(w + ": latency counts", {"count": 300, "in_flight": 0, "unmatched_returns": 0, "unreturned": 0},
   {k: lat.get(k) for k in ("count", "in_flight", "unmatched_returns", "unreturned")})
rv = loc.get("retval") or {}
vals = {}
for v in rv.get("top") or []:
    vals[int(v["value"])] = v["count"]
hist_total = sum(b.get("count", 0) for b in rv.get("histogram") or [])
eq(w + ": retval total", 300, hist_total)
check(all(6 <= v <= 11 for v in vals), w + ": a return value outside 6..11 (a dropped call paired): %r" % (vals,))
check(all(n == 50 for n in vals.values()), w + ": each value 6..11 fifty times, got %r" % (vals,))
'
kill "$pid"
echo "ok: recursive: 300 of 550 calls counted, timed and paired with their own returns (values 6..11 x 50)"

truth=$T/lat.truth
start_target tgt_probe "$truth" latency
pid=$TPID
wait_truth "$truth" ready
probe_bg lat int "$truth" "$pid" probe "$pid" probe_sleep --filter 'us > 5000' --latency --retval --json
assert_rc 0 "vigil probe --filter --latency --retval (latency)"
check "$truth" "$T/lat.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
ms10 = sorted(ns for us, ns in t.durs if us == 10000)
eq(w + ": the target made 20 calls of 10 ms (harness)", 20, len(ms10))
eq(w + ": calls (us > 5000)", 20, loc.get("calls"))
eq(w + ": calls_seen", 40, loc.get("calls_seen"))
lat = loc.get("latency") or {}
eq(w + ": latency counts", {"count": 20, "in_flight": 0, "unmatched_returns": 0, "unreturned": 0},
   {k: lat.get(k) for k in ("count", "in_flight", "unmatched_returns", "unreturned")})
mn, mx = lat.get("min_ns"), lat.get("max_ns")
check(isinstance(mn, int) and 10000000 <= mn <= ms10[0],
      w + ": min_ns %r: expected >= 10 ms (the sleep) and <= %d (the fastest 10 ms call as the target timed it)" % (mn, ms10[0]))
check(isinstance(mx, int) and mx <= ms10[-1],
      w + ": max_ns %r: expected <= %d (the slowest 10 ms call as the target timed it)" % (mx, ms10[-1]))
rv = loc.get("retval") or {}
eq(w + ": return values", [("10000", 20)], [(v["value"], v["count"]) for v in rv.get("top") or []])
print("filtered latency: 20 calls, min %.3f ms, max %.3f ms" % (mn / 1e6, mx / 1e6))
'
kill "$pid"
echo "ok: latency: 20 of 40 calls, each timed within the target's own timing of a 10 ms call"
