#!/usr/bin/env python3
"""bench/probe_bench.py - the measuring half of bench/probe.sh.

For each tool, a fresh `tgt_probe TRUTH spin SECS` (tests/targets/tgt_probe.c):
the target calls probe_bench() in a tight loop for SECS seconds after its
go (SIGUSR1) and then stops calling, writing how many calls it made and in
how long ("calls N", "seconds S", "state done").  Protocol:
  1. start the tool on the target and wait until it is armed (vigil: its
     "# probing" line; bpftrace: its "Attaching" line; perf stat and ltrace
     print nothing when ready: ARM_WAIT seconds after their start);
  2. the go; wait for "state done" (the target makes no call before the go
     or after its SECS: every call it counts happened while the tool was
     attached, so an exact tool counts exactly the target's N);
  3. SIGINT to the tool; its count (vigil: locations[0].calls of --json;
     bpftrace: "@: N"; perf stat -x,: the event's count; ltrace -c: the
     calls column of probe_bench).
Reported per tool: the target's calls/s under it, the ratio to no tool and
to bpftrace's count-only probe, the cost per call (1/rate - 1/rate with no
tool), the tool's count and whether it equals the target's."""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time


def die(msg):
    sys.exit(f"probe.sh: {msg}")


def read_truth(path):
    kv = {}
    try:
        with open(path) as f:
            for ln in f.read().splitlines():
                k, _, v = ln.partition(" ")
                kv.setdefault(k, v)
                if k == "state":
                    kv["state"] = v
    except FileNotFoundError:
        pass
    return kv


def wait_state(path, state, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if read_truth(path).get("state") == state:
            return True
        time.sleep(0.01)
    return False


def start_target(target, truth, secs):
    if os.path.exists(truth):
        os.unlink(truth)
    p = subprocess.Popen([target, truth, "spin", str(secs)], stdin=subprocess.DEVNULL)
    if not wait_state(truth, "ready", 5):
        p.kill()
        die("tgt_probe wrote no truth within 5 s")
    return p


def sigint_default():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(path, pattern, proc, secs):
    end = time.monotonic() + secs
    rx = re.compile(pattern, re.M)
    while time.monotonic() < end:
        try:
            with open(path) as f:
                if rx.search(f.read()):
                    return True
        except FileNotFoundError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


# Each tool: (label, argv(pid), ready (file key, regex) or None, count(out, err))
def vigil_count(out, err):
    try:
        d = json.loads(out)
        return d["locations"][0]["calls"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def bpftrace_count(out, err):
    m = re.search(r"^@: (\d+)", out, re.M)
    return int(m.group(1)) if m else None


def perf_count(out, err):
    for ln in (out + err).splitlines():
        f = ln.split(",")
        if len(f) > 2 and "probe_bench" in f[2] and f[0].strip().isdigit():
            return int(f[0])
    return None


def ltrace_count(out, err):
    # ltrace -c: "% time     seconds  usecs/call     calls      function"
    for ln in (out + err).splitlines():
        f = ln.split()
        if len(f) >= 5 and f[-1].startswith("probe_bench") and f[3].isdigit():
            return int(f[3])
    return None


def run_tool(args, label, argv_fn, ready, count_fn, tmp):
    truth = os.path.join(tmp, "truth")
    tgt = start_target(args.target, truth, args.secs)
    out, err = os.path.join(tmp, "tool.out"), os.path.join(tmp, "tool.err")
    p = None
    try:
        if argv_fn:
            with open(out, "w") as fo, open(err, "w") as fe:
                p = subprocess.Popen(argv_fn(tgt.pid), stdout=fo, stderr=fe,
                                     stdin=subprocess.DEVNULL, preexec_fn=sigint_default)
            if ready:
                which, rx = ready
                if not wait_for(out if which == "out" else err, rx, p, 30):
                    die(f"{label}: not armed within 30 s: {read(err)[-800:]}{read(out)[-400:]}")
            else:
                time.sleep(args.arm_wait)
            if p.poll() is not None:
                die(f"{label}: exited ({p.returncode}) before the go: {read(err)[-800:]}")
        os.kill(tgt.pid, signal.SIGUSR1)
        if not wait_state(truth, "done", args.secs + 60):
            die(f"{label}: the target did not finish within {args.secs + 60} s")
        rc, count = None, None
        if p:
            p.send_signal(signal.SIGINT)
            try:
                rc = p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                die(f"{label}: did not stop within 60 s of SIGINT")
            count = count_fn(read(out), read(err))
            if count is None:
                die(f"{label}: no count in its output (exit {rc}): {read(err)[-800:]}{read(out)[-800:]}")
        kv = read_truth(truth)
        calls, secs = int(kv["calls"]), float(kv["seconds"])
        return {"tool": label, "calls": calls, "seconds": secs, "rate": calls / secs,
                "count": count, "exit": rc}
    finally:
        if p and p.poll() is None:
            p.kill()
            p.wait()
        tgt.kill()
        tgt.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--arm-wait", type=float, default=2.0)
    ap.add_argument("--perf-event", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--tools", default="none,vigil,vigil_latency,bpftrace,perf,ltrace")
    args = ap.parse_args()
    V, B = args.vigil, args.target
    tools = {
        "none": ("no tool", None, None, None),
        "vigil": ("vigil probe (count)", lambda pid: [V, "probe", str(pid), "probe_bench", "--json"],
                  ("err", r"^# probing"), vigil_count),
        "vigil_latency": ("vigil probe --latency", lambda pid: [V, "probe", str(pid), "probe_bench", "--latency", "--json"],
                          ("err", r"^# probing"), vigil_count),
        "bpftrace": ("bpftrace uprobe count()", lambda pid: ["bpftrace", "-p", str(pid), "-e",
                                                              f"uprobe:{B}:probe_bench {{ @ = count(); }}"],
                     ("out", r"^Attaching"), bpftrace_count),
        "perf": ("perf probe + perf stat", lambda pid: ["perf", "stat", "-x,", "-e", args.perf_event, "-p", str(pid)],
                 None, perf_count),
        "ltrace": ("ltrace -c -x probe_bench", lambda pid: ["ltrace", "-c", "-x", "probe_bench", "-e", "-*", "-p", str(pid)],
                   None, ltrace_count),
    }
    res = []
    for key in args.tools.split(","):
        label, argv_fn, ready, count_fn = tools[key]
        r = run_tool(args, label, argv_fn, ready, count_fn, args.tmp)
        r["key"] = key
        res.append(r)
        print(f"  {label}: {r['calls']:,} calls in {r['seconds']:.2f} s, tool count {r['count']}", flush=True)
    base = next((r for r in res if r["key"] == "none"), None)
    bpf = next((r for r in res if r["key"] == "bpftrace"), None)
    print()
    print(f"| tool | target calls/s | vs no tool | vs bpftrace | cost µs/call | tool count / target calls | exact |")
    print(f"|---|---:|---:|---:|---:|---:|---|")
    for r in res:
        vs_base = r["rate"] / base["rate"] if base else float("nan")
        vs_bpf = r["rate"] / bpf["rate"] if bpf else float("nan")
        cost = (1 / r["rate"] - 1 / base["rate"]) * 1e6 if base else float("nan")
        r["cost_us"] = cost
        if r["count"] is None:
            cnt, exact = "-", "-"
        else:
            cnt = f"{r['count']:,} / {r['calls']:,}"
            exact = "yes" if r["count"] == r["calls"] else f"no ({r['count'] - r['calls']:+,})"
        r["exact"] = r["count"] == r["calls"] if r["count"] is not None else None
        print(f"| {r['tool']} | {r['rate']:,.0f} | {vs_base:.5f}x | {vs_bpf:.3f}x | "
              f"{cost if r['key'] != 'none' else 0:.3f} | {cnt} | {exact} |")
    by = {r["key"]: r for r in res}
    print()
    if "vigil" in by and bpf:
        print(f"goal: vigil count throughput >= 0.98x bpftrace's: {by['vigil']['rate'] / bpf['rate']:.3f}x "
              f"({'met' if by['vigil']['rate'] >= 0.98 * bpf['rate'] else 'missed'})")
    if "vigil" in by and "vigil_latency" in by and base:
        k = by["vigil_latency"]["cost_us"] / by["vigil"]["cost_us"]
        print(f"goal: vigil --latency cost per call <= 1.5x the counting mode's: {k:.2f}x "
              f"({'met' if k <= 1.5 else 'missed'})")
    if "vigil" in by:
        print(f"goal: vigil counts exact: {'met' if by['vigil']['exact'] and by.get('vigil_latency', by['vigil'])['exact'] else 'missed'}")
    with open(args.results, "w") as f:
        json.dump(res, f, indent=1)
    if any(r["key"].startswith("vigil") and (r["exit"] != 0 or not r["exact"]) for r in res):
        die("vigil failed or miscounted (see above)")


if __name__ == "__main__":
    main()
