#!/usr/bin/env python3
"""bench/stack_bench.py - the measuring half of bench/stack.sh.

For each thread count: start bench/out/stack_threads N, wait for "ready",
then per tool: SIGUSR1 (the target's gap meter forgets its maximum), RUNS
dumps timed one by one (wall clock, the tool's whole run including its
start), SIGUSR2 and read the longest stall the gap meter saw while the tool
ran ("none" sleeps as long as vigil's runs took, for the target's own
figure).  The stall a tool adds is its maximum minus none's."""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time


def die(msg):
    sys.exit(f"stack.sh: {msg}")


def start_target(target, n, tmp):
    gapfile = os.path.join(tmp, f"gap{n}.txt")
    p = subprocess.Popen([target, str(n), gapfile], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        die(f"stack_threads {n} did not start: {line!r}")
    return p, gapfile


def read_gap(p, gapfile):
    try:
        os.unlink(gapfile)
    except FileNotFoundError:
        pass
    p.send_signal(signal.SIGUSR2)
    for _ in range(200):
        if os.path.exists(gapfile):
            with open(gapfile) as f:
                m = re.match(r"gap_max_ns (\d+) iterations (\d+)", f.read())
            if m:
                return int(m.group(1)) / 1e6
        time.sleep(0.01)
    die("the gap meter did not answer")


def run_tool(cmd, runs, p, gapfile, sleep_s=None):
    p.send_signal(signal.SIGUSR1)
    time.sleep(0.05)
    times, out = [], ""
    if sleep_s is not None:
        time.sleep(sleep_s)
    else:
        for _ in range(runs):
            t0 = time.perf_counter()
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            times.append(time.perf_counter() - t0)
            if r.returncode != 0:
                die(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[:300]}")
            out = r.stdout
    time.sleep(0.02)
    return times, read_gap(p, gapfile), out


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
    """{tid: [(addr, file_basename, line, function)]} from vigil stack --json."""
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
    """Threads whose eu-stack frames all appear, in order, in vigil's."""
    ok, bad = 0, []
    for tid, efr in eu.items():
        vfr = vg.get(tid)
        if vfr is None:
            bad.append((tid, "missing in vigil"))
            continue
        i = 0
        for e in efr:
            while i < len(vfr) and not (vfr[i][0] == e[0] and
                                        (e[2] is None or (vfr[i][1], vfr[i][2]) == (e[1], e[2]))):
                i += 1
            if i == len(vfr):
                bad.append((tid, f"eu-stack frame 0x{e[0]:x} {e[3]} {e[1]}:{e[2]} not in vigil's order"))
                break
            i += 1
        else:
            ok += 1
    return ok, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--threads", default="11,100,1000")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json-out", required=True)
    a = ap.parse_args()

    results = []
    first = True
    for n in [int(x) for x in a.threads.split(",")]:
        runs = a.runs if n <= 100 else max(2, a.runs // 4)
        p, gapfile = start_target(a.target, n, a.tmp)
        pid = str(p.pid)
        tools = [
            ("vigil stack", [a.vigil, "stack", pid]),
            ("vigil stack --json", [a.vigil, "stack", pid, "--json"]),
            ("eu-stack", ["eu-stack", "-p", pid]),
            ("eu-stack -i -s", ["eu-stack", "-p", pid, "-i", "-s"]),
            ("gdb thread apply all bt", ["gdb", "-nx", "-batch", "-p", pid, "-ex", "thread apply all bt"]),
        ]
        row = {"threads": n, "runs": runs, "tools": {}}
        outs = {}
        try:
            for name, cmd in tools:
                r = runs if not name.startswith("gdb") or n <= 100 else 1
                times, gap, out = run_tool(cmd, r, p, gapfile)
                outs[name] = out
                row["tools"][name] = {"median_ms": statistics.median(times) * 1e3,
                                      "min_ms": min(times) * 1e3, "runs": r, "max_stall_ms": gap}
            vt = sum(row["tools"]["vigil stack"]["median_ms"] for _ in [0]) * runs / 1e3
            _, gap, _ = run_tool(None, 0, p, gapfile, sleep_s=max(0.2, vt))
            row["tools"]["none"] = {"median_ms": 0, "min_ms": 0, "runs": 0, "max_stall_ms": gap}
            if first:
                ok, bad = agree(eu_frames(outs["eu-stack -i -s"]),
                                vigil_frames(json.loads(outs["vigil stack --json"])))
                row["agreement"] = {"threads_agreeing": ok, "disagreements": bad}
                first = False
        finally:
            p.kill()
            p.wait()
        results.append(row)

        base = row["tools"]["none"]["max_stall_ms"]
        ref = row["tools"]["eu-stack -i -s"]["median_ms"]
        ref2 = row["tools"]["eu-stack"]["median_ms"]
        print(f"\n{n} threads ({runs} dumps per tool; the target alone stalls up to {base:.2f} ms)")
        print(f"  {'tool':<26} {'median ms':>10} {'vs eu-stack -i -s':>18} {'vs eu-stack':>12} {'max stall ms':>13}")
        for name, _ in tools:
            t = row["tools"][name]
            print(f"  {name:<26} {t['median_ms']:>10.1f} {t['median_ms'] / ref:>17.2f}x "
                  f"{t['median_ms'] / ref2:>11.2f}x {t['max_stall_ms']:>13.2f}")
        if "agreement" in row:
            ag = row["agreement"]
            print(f"  agreement with eu-stack -i -s: {ag['threads_agreeing']} of "
                  f"{ag['threads_agreeing'] + len(ag['disagreements'])} threads")
            for tid, why in ag["disagreements"][:10]:
                print(f"    TID {tid}: {why}")

    with open(a.json_out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
