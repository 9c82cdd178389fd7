#!/usr/bin/env python3
"""bench/profile_bench.py - the measuring half of bench/profile.sh.

For each profiler, on a fresh tgt_profile split (CPU-bound, one thread,
counts its units of work; SIGUSR2 makes it write "work UNITS WALL_NS
CPU_NS" to its truth file):
  1. no tool: the target's work rate over SECS seconds (the baseline);
  2. the profiler is started; after it samples (vigil: its "# profiling
     pid" line; perf: 1 s) and 1 s more, a window of SECS seconds: the
     target's work rate (wall and per CPU second of the target), the
     profiler's CPU (/proc/PID/stat utime+stime over the window);
  3. SIGINT, then the time until the report is finished: vigil's exit (its
     folded output written); perf record's exit, then `perf report
     --stdio`, and `perf script` folded by a stackcollapse in Python.
Samples and lost samples come from the tools themselves (vigil's summary
line on stderr, `perf report --stats`), data size is what the tool left
on disk (vigil's folded file, perf.data), peak RSS from wait4 (the
kernel keeps the larger of the tool's and that of the script's copy it was
forked from: where that may be the script's, the range from the tool's
last VmHWM, read every 2 ms until it exits, is printed).  hot_a's
share of the samples is printed as a check that each tool saw the same
70/30 split."""
import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

TCK = os.sysconf("SC_CLK_TCK")


def die(msg):
    sys.exit(f"profile.sh: {msg}")


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()
    return (int(rest[11]) + int(rest[12])) / TCK


def read_work(truth):
    for _ in range(3):
        try:
            with open(truth) as f:
                for ln in f:
                    if ln.startswith("work "):
                        u, w, c = ln.split()[1:4]
                        return int(u), int(w), int(c)
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    return None


def work_mark(pid, truth):
    """SIGUSR2 -> the target rewrites its truth: (units, wall_ns, cpu_ns)."""
    before = read_work(truth)
    os.kill(pid, signal.SIGUSR2)
    for _ in range(1000):
        now = read_work(truth)
        if now and (not before or now[1] != before[1]):
            return now
        time.sleep(0.005)
    die("the target did not answer SIGUSR2 within 5 s")


def rate(a, b):
    du, dw, dc = b[0] - a[0], (b[1] - a[1]) / 1e9, (b[2] - a[2]) / 1e9
    return {"units": du, "wall_s": dw, "cpu_s": dc,
            "per_wall_s": du / dw if dw else 0.0, "per_cpu_s": du / dc if dc else 0.0}


def start_target(target, truth):
    if os.path.exists(truth):
        os.unlink(truth)
    p = subprocess.Popen([target, truth, "split"], stdin=subprocess.DEVNULL)
    for _ in range(500):
        if os.path.exists(truth):
            with open(truth) as f:
                if "state ready\n" in f.read():
                    return p
        time.sleep(0.01)
    p.kill()
    die("tgt_profile wrote no truth within 5 s")


def sigint_default():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def peak_rss(r):
    """The tool's peak RSS in MiB for the table.  wait4's figure is the
    larger of the tool's peak and this script's size when it forked the
    tool (at most the script's own peak, script_peak_mib): exact when above
    that, or when the tool's last VmHWM read reaches it; else the range
    the tool's peak is known to lie in."""
    m, hwm = r["maxrss_mib"], r["hwm_mib"]
    if m > r["script_peak_mib"] or hwm >= m - 0.05:
        return f"{m:.1f}"
    return f"{hwm:.1f}-{m:.1f}"


def vm_hwm_mib(pid):
    """VmHWM of a running pid in MiB; None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def wait_rusage(p, timeout):
    """wait4 the tool: (exit code, rusage, the last VmHWM read in MiB) or
    die after timeout s."""
    end = time.monotonic() + timeout
    hwm = 0.0
    while time.monotonic() < end:
        h = vm_hwm_mib(p.pid)
        hwm = max(hwm, h or 0.0)
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return p.returncode, ru, hwm
        time.sleep(0.002)
    p.kill()
    die(f"{p.args[0]} did not stop within {timeout} s of SIGINT")


def timed_children(cmd, **kw):
    """Run cmd; (seconds, CPU seconds of the child, CompletedProcess)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    cp = subprocess.run(cmd, **kw)
    t = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), cp


_OFF = re.compile(r"\+0x[0-9a-f]+$")


def collapse_perf_script(text):
    """stackcollapse-perf.pl, reduced: {root;...;leaf: count}."""
    out, frames, in_sample = {}, [], False
    for ln in text.split("\n"):
        if not ln.strip():
            if in_sample and frames:
                k = ";".join(reversed(frames))
                out[k] = out.get(k, 0) + 1
            frames, in_sample = [], False
            continue
        if not ln[0].isspace():
            in_sample = True
            frames = []
            continue
        parts = ln.split(None, 1)
        if len(parts) < 2:
            continue
        sym = parts[1].rsplit(" (", 1)[0].strip()
        frames.append(_OFF.sub("", sym) or "[unknown]")
    if in_sample and frames:
        k = ";".join(reversed(frames))
        out[k] = out.get(k, 0) + 1
    return out


def folded_share(folded, fn):
    tot = sum(folded.values())
    own = sum(n for k, n in folded.items() if k.rsplit(";", 1)[-1] in (fn, fn + "_[i]"))
    return 100.0 * own / tot if tot else 0.0


def read_folded(path):
    d = {}
    with open(path) as f:
        for ln in f:
            k, _, n = ln.rstrip("\n").rpartition(" ")
            if n.isdigit():
                d[k] = d.get(k, 0) + int(n)
    return d


def run_tool(tool, a):
    truth = f"{a.tmp}/truth.{tool['key']}"
    tgt = start_target(a.target, truth)
    pid = tgt.pid
    try:
        # Baseline: no tool.
        time.sleep(0.5)
        b0 = work_mark(pid, truth)
        time.sleep(a.secs)
        b1 = work_mark(pid, truth)
        base = rate(b0, b1)

        out = f"{a.tmp}/{tool['key']}.out"
        err = f"{a.tmp}/{tool['key']}.err"
        cmd = [c.replace("PID", str(pid)).replace("OUT", out) for c in tool["cmd"]]
        with open(err, "w") as ef:
            # The most wait4's ru_maxrss can carry over from this
            # script's copy: the script's peak so far.
            script_peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=ef, preexec_fn=sigint_default)
        t_start = time.monotonic()
        tc_start = proc_cpu(pid)
        if tool["kind"] == "vigil":
            while "# profiling pid" not in open(err).read():
                if p.poll() is not None:
                    die(f"{' '.join(cmd)} exited {p.returncode}: {open(err).read()[:400]}")
                if time.monotonic() - t_start > 30:
                    die(f"{' '.join(cmd)}: no '# profiling pid' line in 30 s")
                time.sleep(0.01)
        else:
            time.sleep(1.0)
            if p.poll() is not None:
                die(f"{' '.join(cmd)} exited {p.returncode}: {open(err).read()[:400]}")
        setup_s = time.monotonic() - t_start
        time.sleep(1.0)
        c0, w0 = proc_cpu(p.pid), work_mark(pid, truth)
        time.sleep(a.secs)
        c1, w1 = proc_cpu(p.pid), work_mark(pid, truth)
        during = rate(w0, w1)
        tc_stop = proc_cpu(pid)
        t_int = time.monotonic()
        p.send_signal(signal.SIGINT)
        rc, ru, hwm = wait_rusage(p, 120)
        t_exit = time.monotonic() - t_int
        # perf record re-raises the SIGINT once perf.data is written.
        if rc != 0 and not (tool["kind"] == "perf" and rc == -signal.SIGINT):
            die(f"{' '.join(cmd)} exited {rc} after SIGINT: {open(err).read()[:400]}")
        r = {"tool": tool["label"], "key": tool["key"], "base": base, "during": during,
             "slowdown_wall": during["per_wall_s"] / base["per_wall_s"] if base["per_wall_s"] else 0,
             "slowdown_cpu": during["per_cpu_s"] / base["per_cpu_s"] if base["per_cpu_s"] else 0,
             "cpu_pct": 100.0 * (c1 - c0) / during["wall_s"],
             "cpu_total_s": ru.ru_utime + ru.ru_stime, "maxrss_mib": ru.ru_maxrss / 1024,
             "script_peak_mib": script_peak_mib, "hwm_mib": hwm,
             "setup_s": setup_s, "stop_exit_s": t_exit,
             # The target's CPU from the tool's start to the SIGINT: what a
             # cpu-clock profiler at FREQ can sample at most (its setup
             # included: samples lost to a slow start count against it).
             "target_cpu_s": tc_stop - tc_start}
        if tool["kind"] == "vigil":
            e = open(err).read()
            m = re.search(r"^# (\d+) samples in ([0-9.]+) s \((\w+)\), (\d+) lost, (\d+) throttled", e, re.M)
            if not m:
                die(f"no summary line in vigil's stderr: {e[-400:]}")
            r.update(samples=int(m.group(1)), sampled_s=float(m.group(2)), lost=int(m.group(4)),
                     data_bytes=os.path.getsize(out), stop_report_s=t_exit, report_s=0.0,
                     report_cpu_s=0.0, collapse_s=0.0,
                     hot_a=folded_share(read_folded(out), "hot_a"))
        else:
            t_rep, cpu_rep, cp = timed_children(["perf", "report", "--stdio", "-i", out],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if cp.returncode != 0:
                die(f"perf report --stdio -i {out}: exit {cp.returncode}")
            t0 = time.monotonic()
            t_scr, cpu_scr, cp = timed_children(["perf", "script", "-i", out], capture_output=True, text=True,
                                                errors="replace")
            folded = collapse_perf_script(cp.stdout)
            t_col = time.monotonic() - t0
            st = subprocess.run(["perf", "report", "--stats", "-i", out], capture_output=True, text=True).stdout
            ms = re.search(r"SAMPLE events:\s+(\d+)", st)
            lost = sum(int(x) for x in re.findall(r"LOST(?:_SAMPLES)? events:\s+(\d+)", st))
            r.update(samples=int(ms.group(1)) if ms else sum(folded.values()), lost=lost,
                     data_bytes=os.path.getsize(out), report_s=t_rep, report_cpu_s=cpu_rep,
                     collapse_s=t_col, stop_report_s=t_exit + t_rep,
                     hot_a=folded_share(folded, "hot_a"))
        r["captured_pct"] = (100.0 * r["samples"] / (r["target_cpu_s"] * float(a.freq))
                             if r["target_cpu_s"] > 0 else 0.0)
        return r
    finally:
        tgt.kill()
        tgt.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--secs", type=float, default=5.0)
    ap.add_argument("--freq", default="999")
    ap.add_argument("--results", required=True)
    a = ap.parse_args()
    f = a.freq
    tools = [
        {"key": "vigil_fp", "kind": "vigil", "label": "vigil profile --unwind fp",
         "cmd": [a.vigil, "profile", "PID", "--freq", f, "--unwind", "fp", "--format", "folded", "-o", "OUT"]},
        {"key": "perf_fp", "kind": "perf", "label": "perf record -g",
         "cmd": ["perf", "record", "-q", "-F", f, "-g", "-p", "PID", "-o", "OUT"]},
        {"key": "vigil_dwarf", "kind": "vigil", "label": "vigil profile --unwind dwarf",
         "cmd": [a.vigil, "profile", "PID", "--freq", f, "--unwind", "dwarf", "--format", "folded", "-o", "OUT"]},
        {"key": "perf_dwarf", "kind": "perf", "label": "perf record --call-graph dwarf",
         "cmd": ["perf", "record", "-q", "-F", f, "--call-graph", "dwarf", "-p", "PID", "-o", "OUT"]},
    ]
    res = []
    for t in tools:
        print(f"  {t['label']} ...", file=sys.stderr, flush=True)
        res.append(run_tool(t, a))
    json.dump(res, open(a.results, "w"), indent=1)
    print_tables(res, a.secs, f)


def print_tables(res, secs, f):
    a = argparse.Namespace(secs=secs)
    print()
    print(f"Target tgt_profile split at {f} Hz, {a.secs:g} s window per tool (after setup + 1 s).")
    print("speed = target work rate with the tool / without it (same target, the "
          f"{a.secs:g} s before the tool): per wall second, and per second of the target's own CPU.")
    print()
    print("| tool | samples | captured % | lost | hot_a % | speed (wall) | speed (CPU) | profiler CPU % | "
          "profiler CPU s (all) | peak RSS MiB | data | setup s | SIGINT -> exit s | + report s | "
          "script+collapse s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in res:
        print(f"| {r['tool']} | {r['samples']:,} | {r.get('captured_pct', 0):.1f} | {r['lost']:,} | {r['hot_a']:.1f} | "
              f"{r['slowdown_wall']:.3f} | {r['slowdown_cpu']:.3f} | {r['cpu_pct']:.1f} | "
              f"{r['cpu_total_s'] + r['report_cpu_s']:.2f} | {peak_rss(r)} | "
              f"{r['data_bytes'] / 1024:,.0f} KiB | {r['setup_s']:.2f} | {r['stop_exit_s']:.3f} | "
              f"{r['report_s']:.3f} | {r['collapse_s']:.3f} |")
    print()
    print("vigil / perf (same unwinding; stop -> report: vigil's exit vs perf record's exit + perf report --stdio):")
    print()
    print("| unwind | speed (wall) | speed (CPU) | profiler CPU s (all) | captured % | data size | stop -> report |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    by = {r["key"]: r for r in res}
    for u in ("fp", "dwarf"):
        v, p = by[f"vigil_{u}"], by[f"perf_{u}"]
        q = lambda x, y: f"{x / y:.2f}x" if y else "-"
        print(f"| {u} | {q(v['slowdown_wall'], p['slowdown_wall'])} | {q(v['slowdown_cpu'], p['slowdown_cpu'])} | "
              f"{q(v['cpu_total_s'] + v['report_cpu_s'], p['cpu_total_s'] + p['report_cpu_s'])} | "
              f"{q(v.get('captured_pct', 0), p.get('captured_pct', 0))} | "
              f"{q(v['data_bytes'], p['data_bytes'])} | {q(v['stop_report_s'], p['stop_report_s'])} |")
    bad = [r["tool"] for r in res if not 55 <= r["hot_a"] <= 85]
    if bad:
        print(f"\nWARNING: hot_a's share is not 70 +- 15 % for: {', '.join(bad)}")


if __name__ == "__main__":
    main()
