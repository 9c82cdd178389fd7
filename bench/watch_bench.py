#!/usr/bin/env python3
"""watch_bench.py: the measuring half of bench/watch.sh (see there).

For each write rate and each tool, one fresh target (bench/out/watch_writer):
start it, attach the tool, wait until the tool is armed, send the go
(SIGUSR1), let the 4 threads write for --ms, and compare what the tool
caught with what the target counted itself.  Tools run one at a time (they
compete for the same debug registers), all in this one run, so the ratios
compare like with like.

Two tables:
  hardware   data breakpoints, 2 of the 4 writer threads created after the go
             (after the tool attached): vigil watch, perf record -e mem:,
             bpftrace watchpoint:, gdb watch
  emulation  the trap replaced by a uprobe on the instruction after the store
             (bw_after_store), all 4 threads created before the tool
             attaches: vigil watch with VIGIL_WATCH_EMULATE_TRAPS against
             perf record -e on the same uprobe made by `perf probe`

Per run: writes captured / true writes, lost (as the tool reports it),
target throughput (true writes / seconds the writers ran) and its ratio to
the run with no tool at that rate ("speed": 1.00 = not slowed; the no-tool run is made before and after
the tools at each rate and their mean used), and the
watcher's CPU from the go to its exit (rusage at exit minus the schedstat
run time of its threads at the go: startup, compiling and attaching not
counted), per captured event.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

NCPU = os.cpu_count() or 1


def die(msg):
    print(f"watch.sh: {msg}", file=sys.stderr)
    sys.exit(1)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def task_runtime_s(pid):
    """Run time (s) of the live threads of pid, from schedstat (ns)."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            s = read(f"/proc/{pid}/task/{tid}/schedstat").split()
            if s:
                total += int(s[0])
    except OSError:
        pass
    return total / 1e9


def perf_fds(pid):
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]":
                    n += 1
            except OSError:
                pass
    except OSError:
        return -1
    return n


class Target:
    def __init__(self, exe, rate, ms, late, tmp):
        self.out_path = os.path.join(tmp, "target.out")
        self.f = open(self.out_path, "w")
        self.p = subprocess.Popen([exe, str(rate), str(ms), str(late)], stdout=self.f,
                                  stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while "ready" not in read(self.out_path):
            if self.p.poll() is not None or time.time() > deadline:
                die(f"watch_writer not ready: {read(self.out_path)}")
            time.sleep(0.01)
        txt = read(self.out_path)
        self.addr = re.search(r"^addr (0x[0-9a-f]+)", txt, re.M).group(1)
        m = re.search(r"^emu (0x[0-9a-f]+) (0x[0-9a-f]+) (.+)$", txt, re.M)
        self.emu_off, self.emu_static, self.path = m.group(1), m.group(2), m.group(3)
        self.pid = self.p.pid

    def go(self):
        os.kill(self.pid, signal.SIGUSR1)

    def wait(self, timeout):
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            die("watch_writer did not finish")
        self.f.close()
        txt = read(self.out_path)
        m = re.search(r"^writes (\d+)", txt, re.M)
        s = re.search(r"^seconds ([\d.]+)", txt, re.M)
        if not m or not s:
            die(f"watch_writer printed no counts: {txt}")
        return int(m.group(1)), float(s.group(1))

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class Tool:
    """A watcher process: started, waited for (armed), stopped, measured."""

    def __init__(self, name, argv, tmp, env=None, ready="perf_fds"):
        self.name, self.ready_kind = name, ready
        self.out = os.path.join(tmp, f"{name}.out")
        self.err = os.path.join(tmp, f"{name}.err")
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen(argv, stdout=open(self.out, "w"), stderr=open(self.err, "w"),
                                  stdin=subprocess.DEVNULL, env=e)
        self.rusage = None
        self.rc = None

    def wait_armed(self, timeout=20):
        """True when armed; False if the tool exited first."""
        deadline = time.time() + timeout
        last, stable_since = None, None
        while time.time() < deadline:
            if self.reap():
                return False
            if self.ready_kind == "vigil":
                if re.search(r"^# armed: ", read(self.err), re.M):
                    return True
            elif self.ready_kind == "gdb":
                if "armed" in read(self.out):
                    time.sleep(0.3)    # from `continue` to the target running
                    return True
            else:                      # perf, bpftrace: their perf_event fds stop growing
                n = perf_fds(self.p.pid)
                if n > 0 and n == last:
                    if time.time() - stable_since >= 0.3:
                        return True
                elif n != last:
                    last, stable_since = n, time.time()
            time.sleep(0.02)
        die(f"{self.name} not armed after {timeout} s: {read(self.err)[-2000:]}")

    def reap(self):
        """True once the tool has exited (rusage and rc then set)."""
        if self.rc is not None:
            return True
        pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
        if pid != self.p.pid:
            return False
        self.rusage = ru
        self.rc = os.waitstatus_to_exitcode(status)
        self.p.returncode = self.rc
        return True

    def finish(self, grace=5.0):
        """Wait for the tool to exit by itself (it follows the target), then
        SIGINT, then SIGKILL; collect rusage."""
        deadline = time.time() + grace
        sent_int = False
        while not self.reap():
            if time.time() > deadline:
                if not sent_int:
                    os.kill(self.p.pid, signal.SIGINT)
                    sent_int = True
                    deadline = time.time() + 10
                else:
                    os.kill(self.p.pid, signal.SIGKILL)
            time.sleep(0.02)

    def cpu_s(self):
        return self.rusage.ru_utime + self.rusage.ru_stime


def perf_stats(data):
    r = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True, text=True)
    def get(name):
        m = re.search(rf"^\s*{name} events:\s*(\d+)", r.stdout, re.M)
        return int(m.group(1)) if m else 0
    return get("SAMPLE"), get("LOST"), get("LOST_SAMPLES")


def run_one(a, tmp, table, rate, tool, probe_event=None):
    late = 2 if table == "hardware" else 0
    t = Target(a.target, rate, a.ms, late, tmp)
    res = {"table": table, "rate": rate, "tool": tool}
    w = None
    try:
        addr = t.addr
        if tool == "none":
            pass
        elif tool == "vigil":
            env = {}
            if table == "emulation":
                env["VIGIL_WATCH_EMULATE_TRAPS"] = f"{t.path}:{t.emu_off}"
            w = Tool("vigil", [a.vigil, "watch", str(t.pid), addr, "--len", "8", "--json"],
                     tmp, env=env, ready="vigil")
        elif tool == "perf":
            ev = f"mem:{addr}/8:w" if table == "hardware" else probe_event
            w = Tool("perf", ["perf", "record", "-q", "-e", ev, "-p", str(t.pid),
                              "-o", os.path.join(tmp, "perf.data")], tmp)
        elif tool == "bpftrace":
            w = Tool("bpftrace", ["bpftrace", "-p", str(t.pid), "-e",
                                  f"watchpoint:{addr}:8:w {{ @n = count(); }}"], tmp)
        elif tool == "gdb":
            cmds = os.path.join(tmp, "gdb.cmds")
            with open(cmds, "w") as f:
                f.write(f"""set pagination off
set confirm off
handle SIGUSR1 nostop noprint pass
set $hits = 0
watch *(long *){addr}
commands
silent
set $hits = $hits + 1
continue
end
printf "armed\\n"
continue
printf "hits %d\\n", $hits
""")
            w = Tool("gdb", ["gdb", "-q", "-nx", "-batch", "-p", str(t.pid), "-x", cmds], tmp, ready="gdb")
        armed = w.wait_armed() if w else True
        rt_go = task_runtime_s(w.p.pid) if w and armed else 0.0
        t.go()
        writes, secs = t.wait(timeout=a.ms / 1000 + 120)
        res.update(writes=writes, seconds=secs, throughput=writes / secs)
        if w:
            w.finish()
            res["rc"] = w.rc
            res["cpu_s"] = max(0.0, w.cpu_s() - rt_go) if armed else None
            out, err = read(w.out), read(w.err)
            if tool == "vigil":
                if w.rc != 0:
                    res["refused"] = err.strip().splitlines()[0] if err.strip() else f"exit {w.rc}"
                else:
                    d = json.loads(out)
                    o = d["observation"]
                    res["backend"] = d.get("backend")
                    res["captured"] = d["watches"][0]["accepted_hits"]
                    res["lost"] = o.get("lost_events", 0) + o.get("lost_records", 0)
                    res["duplicates_dropped"] = o.get("duplicate_samples_dropped", 0)
            elif tool == "perf":
                s, lost, lost_samples = perf_stats(os.path.join(tmp, "perf.data"))
                res["captured"], res["lost"] = s, lost_samples or lost
                if w.rc != 0:
                    res["note"] = f"exit {w.rc}: {err.strip()[-300:]}"
            elif tool == "bpftrace":
                m = re.search(r"^@n: (\d+)", out, re.M)
                res["captured"], res["lost"] = (int(m.group(1)) if m else 0), 0
                m = re.search(r"Lost (\d+) events", out + err)
                if m:
                    res["lost"] = int(m.group(1))
            elif tool == "gdb":
                m = re.search(r"^hits (\d+)", out, re.M)
                res["captured"] = int(m.group(1)) if m else None
                res["lost"] = 0
                if m is None:
                    res["note"] = f"no hit count: {(out + err).strip()[-300:]}"
    finally:
        t.kill()
        if w and not w.reap():
            w.p.kill()
            os.waitpid(w.p.pid, 0)
    return res


def fmt_rate(r):
    return "unlimited" if r == 0 else f"{r:,}/s"


def baselines(results, table):
    """Per rate: the no-tool throughput, mean of the runs before and after
    the tools (the machine's load drifts), and their spread."""
    base = {}
    for r in results:
        if r["table"] == table and r["tool"] == "none":
            base.setdefault(r["rate"], []).append(r["throughput"])
    return {k: {"throughput": sum(v) / len(v), "min": min(v), "max": max(v)} for k, v in base.items()}


def table_rows(results, table, tools, label):
    base = baselines(results, table)
    rows = []
    for r in results:
        if r["table"] != table or r["tool"] == "none":
            continue
        b = base[r["rate"]]
        speed = r["throughput"] / b["throughput"]
        cap = r.get("captured")
        if "refused" in r:
            capt = "refused (exit 3)"
            pct = lost = cpu = per = "-"
        else:
            capt = f"{cap:,}/{r['writes']:,}" if cap is not None else f"?/{r['writes']:,}"
            pct = f"{100.0 * cap / r['writes']:.1f} %" if cap is not None and r["writes"] else "-"
            lost = f"{r.get('lost', 0):,}"
            cpu = f"{r['cpu_s'] * 1000:.0f}" if r.get("cpu_s") is not None else "-"
            per = f"{r['cpu_s'] * 1e6 / cap:.2f}" if cap and r.get("cpu_s") is not None else "-"
        rows.append([fmt_rate(r["rate"]), label[r["tool"]], capt, pct, lost,
                     f"{r['throughput']:,.0f}", f"{b['throughput']:,.0f}", f"{speed:.3f}", cpu, per])
    return rows


def print_table(title, rows):
    hdr = ["rate", "tool", "captured/true", "%", "lost", "writes/s", "no tool", "speed",
           "CPU ms", "CPU µs/event"]
    print(f"\n{title}\n")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join(["---"] * 2 + ["---:"] * (len(hdr) - 2)) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


def ratios(results, table, other):
    """vigil / other per rate: captured share, speed, CPU per event."""
    out = []
    by = {(r["rate"], r["tool"]): r for r in results if r["table"] == table and r["tool"] != "none"}
    by.update({(k, "none"): v for k, v in baselines(results, table).items()})
    for rate in sorted({r["rate"] for r in results if r["table"] == table}, key=lambda x: (x == 0, x)):
        v, o, b = by.get((rate, "vigil")), by.get((rate, other)), by.get((rate, "none"))
        if not v or not o or "refused" in v:
            continue
        def share(r):
            return r["captured"] / r["writes"] if r.get("captured") is not None and r["writes"] else None
        def per(r):
            return r["cpu_s"] / r["captured"] if r.get("captured") and r.get("cpu_s") is not None else None
        sv, so = share(v), share(o)
        pv, po = per(v), per(o)
        cell = lambda x, y, inv=False: "-" if x is None or y is None or (y if not inv else x) == 0 else \
            f"{(x / y if not inv else y / x):.2f}x"
        out.append([fmt_rate(rate), cell(sv, so),
                    f"{(v['throughput'] / o['throughput']):.2f}x",
                    cell(pv, po), f"{v['cpu_s'] * 1000:.0f} / {o['cpu_s'] * 1000:.0f}"
                    if v.get("cpu_s") is not None and o.get("cpu_s") is not None else "-"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--ms", type=int, default=1000)
    ap.add_argument("--rates", default="1000,10000,100000,1000000,0")
    ap.add_argument("--hw-tools", default="vigil,perf,bpftrace,gdb")
    ap.add_argument("--results", required=True)
    a = ap.parse_args()
    rates = [int(x) for x in a.rates.split(",")]
    hw_tools = [x for x in a.hw_tools.split(",") if x]
    label = {"vigil": "vigil watch", "perf": "perf record -e mem:ADDR/8:w -p",
             "bpftrace": "bpftrace watchpoint:ADDR:8:w -p", "gdb": "gdb -batch watch"}

    # ---- does the hardware trap here?  vigil's self-test says (exit 3) ----
    t = Target(a.target, 1000, 200, 0, a.tmp)
    p = subprocess.run([a.vigil, "watch", str(t.pid), t.addr, "--duration", "200"],
                       capture_output=True, text=True)
    t.kill()
    hw_fires = p.returncode == 0
    if p.returncode == 3 and "do not fire" in p.stderr:
        print("\nNOTE: hardware breakpoints do not fire on this machine (vigil watch's self-test,"
              " exit 3):\n  " + p.stderr.strip().splitlines()[0] + "\n"
              "  so every tool below captures 0 hardware traps; the hardware table shows what each"
              " measured,\n  and the emulation table (a uprobe on the instruction after the store)"
              " is the meaningful comparison here.")
    elif p.returncode != 0:
        die(f"vigil watch probe failed (exit {p.returncode}): {p.stderr.strip()}")
    else:
        print("\nhardware breakpoints fire on this machine (vigil watch's self-test passed)")

    # ---- perf probe for the emulation table ----
    probe_event = None
    exe = t.path
    group = "vigilbench"
    subprocess.run(["perf", "probe", "-q", "-d", f"{group}:*"], capture_output=True)
    pr = subprocess.run(["perf", "probe", "-x", exe, "--add", f"{group}:after_store={t.emu_static}"],
                        capture_output=True, text=True)
    if pr.returncode == 0:
        probe_event = f"{group}:after_store"
        ue = read("/sys/kernel/tracing/uprobe_events") or read("/sys/kernel/debug/tracing/uprobe_events")
        m = re.search(rf"{group}/after_store \S+:(0x[0-9a-f]+)", ue)
        if not m or int(m.group(1), 16) != int(t.emu_off, 16):
            print(f"watch.sh: perf probe's uprobe is not at file offset {t.emu_off}: {ue.strip()}",
                  file=sys.stderr)
            probe_event = None
    else:
        print(f"watch.sh: perf probe failed, no perf row in the emulation table: {pr.stderr.strip()}",
              file=sys.stderr)

    results = []
    try:
        t0 = time.time()
        for rate in rates:
            for tool in ["none"] + hw_tools + ["none"]:
                r = run_one(a, a.tmp, "hardware", rate, tool)
                results.append(r)
                print(f"  hardware {fmt_rate(rate):>12} {tool:9} writes {r['writes']:>12,} "
                      f"captured {r.get('captured', '-')}", file=sys.stderr)
        for rate in rates:
            for tool in ["none", "vigil"] + (["perf"] if probe_event else []) + ["none"]:
                r = run_one(a, a.tmp, "emulation", rate, tool, probe_event)
                results.append(r)
                print(f"  emulation {fmt_rate(rate):>12} {tool:9} writes {r['writes']:>12,} "
                      f"captured {r.get('captured', '-')}", file=sys.stderr)
        elapsed = time.time() - t0
    finally:
        if probe_event:
            subprocess.run(["perf", "probe", "-q", "-d", f"{group}:*"], capture_output=True)

    with open(a.results, "w") as f:
        json.dump({"hw_fires": hw_fires, "ms": a.ms, "results": results}, f, indent=1)

    print_table(f"Hardware data breakpoints: 4 writer threads, 2 created after the tool attached, "
                f"{a.ms} ms of writing per run" +
                ("" if hw_fires else "  [THIS MACHINE: breakpoints never fire, all tools catch 0]"),
                table_rows(results, "hardware", hw_tools, label))
    for other in hw_tools[1:] if hw_fires else []:
        rr = ratios(results, "hardware", other)
        if rr:
            print(f"\nvigil / {other}: captured share, writer speed, CPU per event (lower is better"
                  f" for vigil when < 1), CPU ms vigil/{other}")
            for row in rr:
                print("  " + "  ".join(row))
    def spread(table):
        for rate, b in sorted(baselines(results, table).items(), key=lambda x: (x[0] == 0, x[0])):
            print(f"  no tool at {fmt_rate(rate)}: {b['min']:,.0f} .. {b['max']:,.0f} writes/s (before/after the tools)")
    print("\nno-tool runs (the 'no tool' column is their mean):")
    spread("hardware")
    elabel = {"vigil": "vigil watch (VIGIL_WATCH_EMULATE_TRAPS)",
              "perf": "perf record -e probe (perf probe -x BIN ADDR) -p"}
    print_table(f"Emulation: a uprobe on the instruction after the store (bw_after_store, file offset"
                f" {t.emu_off}); all 4 writer threads exist before the tool attaches; {a.ms} ms per run",
                table_rows(results, "emulation", ["vigil", "perf"], elabel))
    print("\nno-tool runs (the 'no tool' column is their mean):")
    spread("emulation")
    if probe_event:
        print("\nvigil / perf (emulation), per rate: captured share | writer speed (>= 1: vigil slows"
              " the target no more) | CPU per event (< 1: vigil cheaper) | CPU ms vigil / perf\n")
        print("| rate | captured share | writer speed | CPU per event | CPU ms vigil / perf |")
        print("|---|---:|---:|---:|---:|")
        for row in ratios(results, "emulation", "perf"):
            print("| " + " | ".join(row) + " |")
    dups = [(fmt_rate(r["rate"]), r["table"], r["duplicates_dropped"]) for r in results
            if r.get("duplicates_dropped")]
    if dups:
        print("\nvigil dropped duplicate samples (same thread, same write reported twice): " +
              ", ".join(f"{t} {rt}: {n:,}" for rt, t, n in dups))
    over = [r for r in results if r.get("captured") is not None and r["captured"] > r["writes"]]
    for r in over:
        print(f"\nNOTE: {r['tool']} ({r['table']}, {fmt_rate(r['rate'])}) captured {r['captured']:,} events"
              f" for {r['writes']:,} true writes: {r['captured'] - r['writes']:,} more than happened")
    print(f"\n{len(results)} runs in {elapsed:.0f} s; raw results: {a.results}")
    bad = [r for r in results if r["tool"] == "vigil" and "refused" not in r and
           (r.get("captured") is None)]
    if bad:
        die("vigil produced no count in some runs")


if __name__ == "__main__":
    main()
