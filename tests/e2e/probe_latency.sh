#!/bin/bash
# probe_latency: `vigil probe PID probe_sleep --latency` on tgt_probe
# latency, which calls probe_sleep() 40 times, 20 sleeping 10 ms and 20
# sleeping 1 ms, interleaved, and times each call itself: count == calls ==
# 40, nothing in flight, unmatched or unreturned; the log2 histogram holds
# both modes (20 calls in the buckets of 0.5-2 ms, 20 in 8-32 ms, when the
# target's own timings say the machine let it sleep that long; under load,
# each bucket as the target's own timings of the calls allow); min >= 1 ms
# and max >= 10 ms, and no duration longer than the
# target's own timing of the call (which brackets the probes); p50 (nearest
# rank: the 20th of 40, the slowest 1 ms call) within 20 % of the target's
# own 20th duration, p90 and p99 in the 10 ms mode; the code is restored.
source "$(dirname "$0")/lib.sh"

truth=$T/lat.truth
start_target tgt_probe "$truth" latency
pid=$TPID
wait_truth "$truth" ready

source "$E2E_DIR/probelib.bash"

probe_bg lat int "$truth" "$pid" probe "$pid" probe_sleep --latency --json
assert_rc 0 "vigil probe --latency"
final "$truth" "$pid"
check "$truth" "$T/lat.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_sleep", w, calls=40)
eq(w + ": the target made 40 calls (harness)", 40, len(t.durs))
ms1 = sorted(ns for us, ns in t.durs if us == 1000)
ms10 = sorted(ns for us, ns in t.durs if us == 10000)
allv = sorted(ns for us, ns in t.durs)
lat = loc.get("latency")
if not check(isinstance(lat, dict), w + ": latency must be an object, got %r" % (lat,)):
    done_now()
eq(w + ": latency.count", 40, lat.get("count"))
eq(w + ": latency.in_flight", 0, lat.get("in_flight"))
eq(w + ": latency.unmatched_returns", 0, lat.get("unmatched_returns"))
eq(w + ": latency.unreturned", 0, lat.get("unreturned"))
eq(w + ": latency.percentiles_exact", True, lat.get("percentiles_exact"))
h = lat.get("histogram") or []
def in_range(lo, hi):
    return sum(b.get("count", 0) for b in h if b.get("lo_ns", -1) >= lo and b.get("hi_ns", 1 << 62) <= hi)
shown = [(b.get("lo_ns"), b.get("hi_ns"), b.get("count")) for b in h]
# Each of vigil durations lies inside the target own timing x of the same
# call (the probes fire between its two clock reads) and at most SLACK
# shorter (the trap and return-probe overhead; 500 us allows a
# preemption there).  So for every bucket boundary B = 2^k, the number of
# vigil durations < B is at least #(x < B) and at most #(x - SLACK < B).
# On a quiet machine this is: 20 calls in the buckets of 1-2 ms, 20 in
# those of 8-32 ms; under load the target own timings show the outliers.
SLACK = 500000
for k in range(19, 26):
    B = 1 << k
    got = sum(b.get("count", 0) for b in h if b.get("hi_ns", 1 << 62) < B)
    lo = sum(1 for x in allv if x < B)
    hi = sum(1 for x in allv if x - SLACK < B)
    check(lo <= got <= hi, w + ": histogram: %d calls below 2^%d ns, expected %d..%d from the target own timings; buckets %r" % (got, k, lo, hi, shown))
quiet = all((1 << 19) <= x < (1 << 21) for x in ms1) and all((1 << 23) <= x < (1 << 25) for x in ms10)
if quiet:
    eq(w + ": histogram: calls in [2^19, 2^21) ns (the 1 ms mode) " + str(shown), 20, in_range(1 << 19, (1 << 21) - 1))
    eq(w + ": histogram: calls in [2^23, 2^25) ns (the 10 ms mode) " + str(shown), 20, in_range(1 << 23, (1 << 25) - 1))
else:
    print("note: the target itself timed calls outside their mode (a loaded machine): 1 ms calls %r ms, 10 ms calls %r ms" % ([round(x / 1e6, 2) for x in ms1], [round(x / 1e6, 2) for x in ms10]))
eq(w + ": histogram: total", 40, sum(b.get("count", 0) for b in h))
for b in h:
    lo, hi = b.get("lo_ns"), b.get("hi_ns")
    check(isinstance(lo, int) and lo > 0 and hi == 2 * lo - 1, w + ": histogram bucket %r is not a log2 bucket [2^k, 2^(k+1)-1]" % (b,))
    check(b.get("count", 0) > 0, w + ": histogram lists an empty bucket %r" % (b,))
mn, mx = lat.get("min_ns"), lat.get("max_ns")
p50, p90, p99 = lat.get("p50_ns"), lat.get("p90_ns"), lat.get("p99_ns")
if all(isinstance(x, int) for x in (mn, mx, p50, p90, p99)):
    check(1000000 <= mn <= ms1[0], w + ": min_ns %d: expected >= 1 ms (the sleep) and <= %d (the fastest 1 ms call as the target timed it)" % (mn, ms1[0]))
    check(10000000 <= mx <= allv[-1], w + ": max_ns %d: expected >= 10 ms and <= %d (the slowest call as the target timed it)" % (mx, allv[-1]))
    want = allv[19]
    check(1000000 <= p50 <= want and abs(p50 - want) <= 0.2 * want,
          w + ": p50_ns %d: expected within 20 %% of %d (the 20th of the target own 40 durations), and >= 1 ms" % (p50, want))
    check(10000000 <= p90 <= allv[35], w + ": p90_ns %d: expected in the 10 ms mode, <= %d" % (p90, allv[35]))
    check(10000000 <= p99 <= allv[-1], w + ": p99_ns %d: expected in the 10 ms mode, <= %d" % (p99, allv[-1]))
    check(p50 <= p90 <= p99 <= mx and mn <= p50, w + ": min <= p50 <= p90 <= p99 <= max")
    mean = lat.get("mean_ns")
    check(isinstance(mean, (int, float)) and mn <= mean <= mx, w + ": mean_ns %r not within [min, max]" % (mean,))
    print("latency: min %.3f ms p50 %.3f ms (target %.3f) p90 %.3f p99 %.3f max %.3f ms" % (mn / 1e6, p50 / 1e6, want / 1e6, p90 / 1e6, p99 / 1e6, mx / 1e6))
else:
    check(False, w + ": min/max/p50/p90/p99 must be integers, got %r" % ((mn, mx, p50, p90, p99),))
check_code_restored(t, ["probe_sleep"], w)
'
echo "ok: --latency: 40 calls paired, two modes in the histogram, p50 in the 1 ms mode"
