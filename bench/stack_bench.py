#!/usr/bin/env python3
"""bench/stack.sh's measuring half.

For each thread count, two targets (bench/out/stack_threads N) one after
the other, each waited for until "ready":

  unpinned  the target and the tools go where the scheduler puts them, as
            in real use.  Each tool dumps RUNS times, each dump timed
            (wall clock, the tool's whole run including its start): the
            times and ratios come from here.  The stall the gap meter
            sees is stop + contention: a tool that stops nothing still
            competes with the meter for two cores.
  pinned    the gap meter is pinned to one CPU and every tool run with
            `taskset -c` on another; the other threads of the target are
            blocked.  What the meter sees then is the tool stopping the
            process (ptrace freezes every thread) and not CPU contention.

Around each dump: SIGUSR1 (the gap meter forgets its maximum), the dump,
SIGUSR2 (it writes its maximum): one stall figure per dump.  "none" is the
target alone over windows as long as vigil's median dump."""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time


def die(msg):
    sys.exit(f"stack.sh: {msg}")


def start_target(target, n, tmp, cpu=None):
    gapfile = os.path.join(tmp, f"gap{n}{'p' if cpu is not None else ''}.txt")
    cmd = [target, str(n), gapfile] + ([str(cpu)] if cpu is not None else [])
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        why = p.stderr.read().strip()
        if cpu is not None:   # pinning or SCHED_FIFO refused (not root)
            print(f"pinned figures skipped: {why or line!r}")
            return None, None
        die(f"stack_threads {n} did not start: {why or line!r}")
    return p, gapfile


def read_gap(p, gapfile):
    try:
        os.unlink(gapfile)
    except FileNotFoundError:
        pass
    p.send_signal(signal.SIGUSR2)
    for _ in range(2000):
        if os.path.exists(gapfile):
            with open(gapfile) as f:
                m = re.match(r"gap_max_ns (\d+) iterations (\d+)(?: stopped_ns (\d+) looks (\d+))?", f.read())
            if m:
                return (int(m.group(1)) / 1e6, int(m.group(3)) / 1e6 if m.group(3) else None,
                        int(m.group(4)) if m.group(4) else None)
        time.sleep(0.001)
    die("the gap meter did not answer")


def reset_gap(p):
    p.send_signal(signal.SIGUSR1)
    time.sleep(0.005)     # the meter resets at its next wake-up (200 us)


def run_tool(cmd, runs, p, gapfile):
    """[seconds per dump], [(stall ms, stopped ms or None, looks) per dump], last stdout."""
    times, gaps, out = [], [], ""
    for _ in range(runs):
        reset_gap(p)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - t0)
        time.sleep(0.001)  # the meter's wake-up after the tool let go
        gaps.append(read_gap(p, gapfile))
        if r.returncode != 0:
            die(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[:300]}")
        out = r.stdout
    return times, gaps, out


def run_none(window_s, runs, p, gapfile):
    gaps = []
    for _ in range(runs):
        reset_gap(p)
        time.sleep(window_s + 0.001)
        gaps.append(read_gap(p, gapfile))
    return gaps


def eu_frames(text):
    """{tid: [(addr, file_basename or None, line or None)]} from eu-stack -i -s."""
    threads, cur, last = {}, None, None
    for ln in text.splitlines():
        m = re.match(r"TID (\d+):", ln)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#\d+\s+0x([0-9a-f]+)\s+(\S+)?", ln)
        if m and cur is not None:
            last = [int(m.group(1), 16), None, None, m.group(2)]
            cur.append(last)
            continue
        m = re.match(r"\s+(\S+?):(\d+)(?::\d+)?$", ln)
        if m and last is not None:
            last[1], last[2] = os.path.basename(m.group(1)), int(m.group(2))
    return threads


def vigil_frames(doc):
    """{tid: [(addr, file_basename, line, function)]} from vigil stack --json
    (line 0 or None: none known)."""
    threads = {}
    for t in doc.get("threads", []):
        st = t.get("stack", t)
        fr = []
        for f in st.get("frames", []):
            addr = f.get("pc")
            if isinstance(addr, str):
                addr = int(addr, 16)
            file = f.get("file")
            fr.append([addr, os.path.basename(file) if file else None, f.get("line"), f.get("function")])
        threads[int(t["tid"])] = fr
    return threads


def agree(eu, vg):
    """Threads whose eu-stack frames all appear, in order, in vigil's; and
    the frames where eu-stack names a line and vigil, at the same address
    and function, none (listed apart, not counted against vigil: elfutils
    0.188 gives _start, which has no line table, the last line of the
    sequence just before it, main's)."""
    ok, bad, eu_only = 0, [], []
    for tid, efr in eu.items():
        vfr = vg.get(tid)
        if vfr is None:
            bad.append((tid, "missing in vigil"))
            continue
        i = 0
        for e in efr:
            while i < len(vfr) and not (vfr[i][0] == e[0] and
                                        (e[2] is None or (vfr[i][1], vfr[i][2]) == (e[1], e[2]) or
                                         (not vfr[i][2] and vfr[i][3] == e[3]))):
                i += 1
            if i == len(vfr):
                bad.append((tid, f"eu-stack frame 0x{e[0]:x} {e[3]} {e[1]}:{e[2]} not in vigil's order"))
                break
            if e[2] is not None and not vfr[i][2]:
                eu_only.append((tid, f"0x{e[0]:x} {e[3]}: eu-stack {e[1]}:{e[2]}, vigil no line"))
            i += 1
        else:
            ok += 1
    return ok, bad, eu_only


def stall_summary(gaps):
    """The gap meter's longest late wake-up per dump (min, median, max) and,
    pinned, the time the observer saw it stopped per dump."""
    stalls = [g[0] for g in gaps]
    out = {"min_ms": min(stalls), "median_ms": statistics.median(stalls), "max_ms": max(stalls),
           "per_dump_ms": stalls}
    if all(g[1] is not None for g in gaps):
        stopped = [g[1] for g in gaps]
        out.update({"stopped_median_ms": statistics.median(stopped), "stopped_max_ms": max(stopped),
                    "stopped_total_ms": sum(stopped), "stopped_per_dump_ms": stopped,
                    "observer_looks": sum(g[2] for g in gaps)})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--threads", default="11,100,1000")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json-out", required=True)
    a = ap.parse_args()

    cpus = sorted(os.sched_getaffinity(0))
    pin = len(cpus) >= 2 and shutil.which("taskset")
    if not pin:
        print("pinned figures skipped: they need two CPUs and taskset (util-linux)")
    else:
        print(f"pinned: the gap meter on CPU {cpus[0]}, every tool on CPU {cpus[1]}")

    results = []
    first = True
    for n in [int(x) for x in a.threads.split(",")]:
        runs = a.runs if n <= 100 else max(2, a.runs // 4)

        def tools(pid):
            return [
                ("vigil stack", [a.vigil, "stack", pid]),
                ("vigil stack --json", [a.vigil, "stack", pid, "--json"]),
                ("eu-stack", ["eu-stack", "-p", pid]),
                ("eu-stack -i -s", ["eu-stack", "-p", pid, "-i", "-s"]),
                ("gdb thread apply all bt", ["gdb", "-nx", "-batch", "-p", pid, "-ex", "thread apply all bt"]),
            ]

        def runs_of(name):
            return runs if not name.startswith("gdb") or n <= 100 else 1

        row = {"threads": n, "runs": runs, "tools": {}}
        outs = {}
        # Unpinned: times, stop + contention.
        p, gapfile = start_target(a.target, n, a.tmp)
        try:
            for name, cmd in tools(str(p.pid)):
                times, gaps, out = run_tool(cmd, runs_of(name), p, gapfile)
                outs[name] = out
                row["tools"][name] = {"median_ms": statistics.median(times) * 1e3,
                                      "min_ms": min(times) * 1e3, "runs": len(times),
                                      "stall_unpinned": stall_summary(gaps)}
            window = row["tools"]["vigil stack"]["median_ms"] / 1e3
            row["tools"]["none"] = {"runs": runs,
                                    "stall_unpinned": stall_summary(run_none(window, runs, p, gapfile))}
            if first:
                ok, bad, eu_only = agree(eu_frames(outs["eu-stack -i -s"]),
                                         vigil_frames(json.loads(outs["vigil stack --json"])))
                row["agreement"] = {"threads_agreeing": ok, "disagreements": bad,
                                    "eu_stack_only_lines": eu_only}
                first = False
        finally:
            p.kill()
            p.wait()
        # Pinned: the stop alone.
        if pin:
            p, gapfile = start_target(a.target, n, a.tmp, cpus[0])
            pin = p is not None
        if pin:
            try:
                for name, cmd in tools(str(p.pid)):
                    _, gaps, _ = run_tool(["taskset", "-c", str(cpus[1])] + cmd, runs_of(name), p, gapfile)
                    row["tools"][name]["stall_pinned"] = stall_summary(gaps)
                row["tools"]["none"]["stall_pinned"] = stall_summary(run_none(window, runs, p, gapfile))
            finally:
                p.kill()
                p.wait()
        results.append(row)

        ref = row["tools"]["eu-stack -i -s"]["median_ms"]
        ref2 = row["tools"]["eu-stack"]["median_ms"]
        names = ["none"] + [name for name, _ in tools("0")]
        print(f"\n{n} threads ({runs} dumps per tool, gdb {runs_of('gdb')})")
        print(f"  {'tool':<26} {'median ms':>10} {'vs eu-stack -i -s':>18} {'vs eu-stack':>12}")
        for name in names[1:]:
            t = row["tools"][name]
            print(f"  {name:<26} {t['median_ms']:>10.1f} {t['median_ms'] / ref:>17.2f}x "
                  f"{t['median_ms'] / ref2:>11.2f}x")
        print("  stall: the gap meter's longest late wake-up in one dump, ms (min / median / max);")
        print("  stopped: ms per dump the observer saw it stopped (median / max)")
        print(f"  {'':<26} {'pinned (the stop)':^38}   {'unpinned (stop + contention)':^28}")
        print(f"  {'tool':<26} {'stall':^22} {'stopped':^15}   {'stall':^28}")
        for name in names:
            t = row["tools"][name]
            un = t["stall_unpinned"]
            pt = t.get("stall_pinned")
            if pt:
                pin_txt = f"{pt['min_ms']:>6.2f} {pt['median_ms']:>7.2f} {pt['max_ms']:>7.2f}"
                stop_txt = (f"{pt['stopped_median_ms']:>7.2f} {pt['stopped_max_ms']:>7.2f}"
                            if "stopped_median_ms" in pt else f"{'-':>7} {'-':>7}")
            else:
                pin_txt, stop_txt = f"{'-':>6} {'-':>7} {'-':>7}", f"{'-':>7} {'-':>7}"
            label = "none (the target alone)" if name == "none" else name
            print(f"  {label:<26} {pin_txt}  {stop_txt}   {un['min_ms']:>8.2f} {un['median_ms']:>9.2f} "
                  f"{un['max_ms']:>9.2f}")
        if pin:
            base = row["tools"]["none"]["stall_pinned"]["median_ms"]
            print("  pinned stall added (median minus the target alone's): " +
                  ", ".join(f"{name} {row['tools'][name]['stall_pinned']['median_ms'] - base:+.2f} ms"
                            for name in names[1:]))
        if "agreement" in row:
            ag = row["agreement"]
            print(f"  agreement with eu-stack -i -s: {ag['threads_agreeing']} of "
                  f"{ag['threads_agreeing'] + len(ag['disagreements'])} threads")
            for tid, why in ag["disagreements"][:10]:
                print(f"    TID {tid}: {why}")
            for tid, why in ag["eu_stack_only_lines"][:10]:
                print(f"    (not counted) TID {tid}: {why}")

    with open(a.json_out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
