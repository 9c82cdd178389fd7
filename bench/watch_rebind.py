#!/usr/bin/env python3
"""watch_rebind: how long `vigil watch --follow` is blind after a pointer
moves, for bench/watch.sh.

bench/targets/follow_writer re-points g_ptr N times and writes the leaf
(g_ptr->field) at fixed delays after each re-point.  vigil re-binds the
leaf breakpoint when it sees the pointer store; a leaf write before the
re-bind is not seen.  Reported: vigil's own re-bind latency
(rebind_latency_ns per generation: median, p90, max) and, from the
writer's side, the share of leaf writes caught at each delay.  No other
tool re-binds a hardware watchpoint without stopping the process (gdb's
`watch p->field` re-evaluates by stopping at every change of p), so
there is no ratio here.  Exit 3 when hardware breakpoints do not fire."""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--period-ms", type=int, default=5)
    ap.add_argument("--delays-us", default="0,10,20,50,100,200,500,1000,5000")
    a = ap.parse_args()
    delays = [int(x) for x in a.delays_us.split(",")]
    tgt = subprocess.Popen([a.target, str(a.n), str(a.period_ms)] + [str(d) for d in delays],
                           stdout=subprocess.PIPE, text=True)
    if tgt.stdout.readline().strip() != "ready":
        sys.exit("follow_writer did not start")
    duration = a.n * (a.period_ms + max(delays) / 1000 + 1) + 3000
    err_path = os.path.join(a.tmp, "rebind.err")
    with open(err_path, "w") as err:
        vg = subprocess.Popen([a.vigil, "watch", str(tgt.pid), "--follow", "g_ptr+8",
                               "--duration", str(int(duration)), "--max-samples", str(a.n * len(delays) + 10),
                               "--json"], stdout=subprocess.PIPE, stderr=err, text=True)
        for _ in range(200):
            time.sleep(0.05)
            if "# armed" in open(err_path).read() or vg.poll() is not None:
                break
    if vg.poll() is not None:
        tgt.kill()
        out = open(err_path).read()
        if vg.returncode == 3 and "do not fire" in out:
            print("re-bind window: hardware breakpoints do not fire on this machine: not measured")
            sys.exit(3)
        sys.exit(f"vigil watch --follow failed ({vg.returncode}): {out.strip()}")
    tgt.send_signal(signal.SIGUSR1)
    tgt.wait()
    time.sleep(0.3)
    vg.send_signal(signal.SIGINT)
    doc = json.loads(vg.communicate()[0])
    d = doc["dependent_watches"][0]
    lat = sorted(g["rebind_latency_ns"] / 1000 for g in d["generations"] if "rebind_latency_ns" in g)
    caught = {k: 0 for k in range(len(delays))}
    for s in d["samples"]:
        v = s.get("value") or {}
        if v.get("value") is not None:
            caught[int(v["value"], 16) & 0xff] = caught.get(int(v["value"], 16) & 0xff, 0) + 1
    if not lat:
        sys.exit("vigil reported no re-bind")
    p90 = lat[min(len(lat) - 1, int(len(lat) * 0.9))]
    print(f"re-bind latency over {len(lat)} re-points (vigil's rebind_latency_ns): "
          f"median {statistics.median(lat):.0f} us, p90 {p90:.0f} us, max {lat[-1]:.0f} us")
    print("leaf writes caught, by delay after the pointer store (the blind window from the writer's side):")
    print("  " + "  ".join(f"{dl:>6} us" for dl in delays))
    print("  " + "  ".join(f"{caught[k] * 100 / a.n:>7.0f}%" for k in range(len(delays))))
    print(f"  ({a.n} re-points, {a.period_ms} ms apart; counts_are_lower_bound "
          f"{doc['observation']['counts_are_lower_bound']}, as it must be)")


if __name__ == "__main__":
    main()
