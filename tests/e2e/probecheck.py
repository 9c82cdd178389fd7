"""probecheck - checks of `vigil probe --json` against tgt_probe's truth
(tests/targets/tgt_probe.c), for the probe_*.sh tests.  stdlib only.

Also a runner, used by the tests as
    "$PYTHON" -S "$E2E_DIR/probecheck.py" run NAME STOP TRUTH TPID VIGIL ARGS...
which starts vigil ARGS in the background (stdout $T/NAME.out, stderr
$T/NAME.err, SIGINT at its default so it is a Ctrl-C), waits (10 s) for its
"# probing" line, sends the go (SIGUSR1) to the target TPID, waits (30 s)
for the target's "state done" in TRUTH, then stops vigil by STOP:
    int    SIGINT          term  SIGTERM
    wait   nothing: vigil stops by itself (--duration, or the target exits)
    int@MS SIGINT MS ms after the go, without waiting for "state done"
           (mid-probe: the target is still making calls)
and waits (20 s) for it to exit; writes its exit code to $T/NAME.rc
("notarmed" when it exited before arming: the code is in $T/NAME.rc2)."""
import os
import re
import signal
import subprocess
import sys
import time

from vgcheck import *  # noqa: F401,F403 (check, eq, fail, load_json, Truth...)
from vgcheck import Truth, addr, check, eq, eq_addr, eq_list, fail


class ProbeTruth(Truth):
    """tgt_probe's truth: func/code/thread/dur/args_call lines parsed."""

    def __init__(self, path):
        super().__init__(path)
        self.funcs = {}
        for rest in self.kv.get("func", []):
            name, rt, off, p = rest.split(" ", 3)
            self.funcs[name] = {"runtime": int(rt, 16), "offset": int(off, 16), "path": p}
        self.code = {}
        for key in ("code", "code_after", "code_final"):
            d = {}
            for rest in self.kv.get(key, []):
                name, hx = rest.split()
                d[name] = hx
            self.code[key] = d
        self.threads = []
        for rest in self.kv.get("thread", []):
            tid, _, count, role = rest.split()
            self.threads.append({"tid": int(tid), "calls": int(count), "role": role})
        self.durs = []
        for rest in self.kv.get("dur", []):
            us, ns = rest.split()
            self.durs.append((int(us), int(ns)))
        self.args_calls = []
        for rest in self.kv.get("args_call", []):
            size, delta, name, flag, count = rest.split()
            self.args_calls.append({"size": int(size), "delta": int(delta), "name": int(name, 16),
                                    "flag": int(flag), "count": int(count)})
        self.args_rets = []
        for rest in self.kv.get("args_ret", []):
            value, count = rest.split()
            self.args_rets.append((value, int(count)))
        self.state = self.kv.get("state", [""])[-1]

    def one(self, key):
        v = self.kv.get(key)
        if not v:
            fail(f"truth {self.path} has no '{key}' line")
        return v[0]

    def int(self, key):
        return int(self.one(key))

    def exe(self):
        return self.funcs["probe_counted"]["path"]


def check_probe_doc(doc, pid, w, stop=None, exact=True, n_locations=1, alive=True):
    """The common part of every probe report: header, observation (no
    loss, every probe removed, coverage of all threads), locations[]."""
    eq(f"{w}: schema_version", 2, doc.get("schema_version"))
    eq(f"{w}: tool", "vigil", doc.get("tool"))
    check(isinstance(doc.get("tool_version"), str) and doc.get("tool_version"),
          f"{w}: tool_version must be a non-empty string, got {doc.get('tool_version')!r}")
    eq(f"{w}: operation", "live_probe", doc.get("operation"))
    eq(f"{w}: first keys", ["schema_version", "tool", "tool_version", "operation"], list(doc.keys())[:4])
    # The common header of every vigil document ("process", as maps,
    # watch, profile and scan have it).
    proc = doc.get("process")
    if check(isinstance(proc, dict), f"{w}: no process object (keys: {list(doc.keys())})"):
        eq(f"{w}: process.pid", pid, proc.get("pid"))
        if alive is not None:
            eq(f"{w}: process.pid_alive_after", alive, proc.get("pid_alive_after"))
    obs = doc.get("observation")
    if not check(isinstance(obs, dict), f"{w}: no observation object"):
        obs = {}
    eq(f"{w}: observation.mechanism", "uprobe+bpf", obs.get("mechanism"))
    eq(f"{w}: observation.coverage", "all_threads", obs.get("coverage"))
    if stop is not None:
        eq(f"{w}: observation.stop_reason", stop, obs.get("stop_reason"))
    d = obs.get("duration_ms")
    check(isinstance(d, (int, float)) and not isinstance(d, bool) and d > 0,
          f"{w}: observation.duration_ms must be a positive number, got {d!r}")
    if exact:
        eq(f"{w}: observation.counts_exact", True, obs.get("counts_exact"))
        eq(f"{w}: observation.counts_are_lower_bound", False, obs.get("counts_are_lower_bound"))
        eq(f"{w}: observation.lower_bound_reasons", [], obs.get("lower_bound_reasons"))
    eq(f"{w}: observation.records_lost", 0, obs.get("records_lost"))
    eq(f"{w}: observation.record_notes", [], obs.get("record_notes"))
    check(isinstance(obs.get("records"), int), f"{w}: observation.records must be an integer, got {obs.get('records')!r}")
    eq(f"{w}: observation.probes_removed", True, obs.get("probes_removed"))
    locs = doc.get("locations")
    if not check(isinstance(locs, list), f"{w}: no locations list"):
        fail(f"{w}: cannot continue without locations")
    eq(f"{w}: number of locations", n_locations, len(locs))
    if len(locs) < n_locations:
        done_now()
    return obs, locs


def done_now():
    from vgcheck import done
    done()
    fail("stopped")


def check_function_location(loc, truth, func, w, calls=None, exact=True):
    """A location given as a function's SYMBOL: one site at its entry, at
    the address and file offset the target itself reports."""
    f = truth.funcs[func]
    eq(f"{w}: input", func, loc.get("input"))
    eq(f"{w}: image", f["path"], loc.get("image"))
    eq_addr(f"{w}: file_offset", f["offset"], addr(w + " file_offset", loc.get("file_offset")))
    ra = loc.get("runtime_addresses")
    if check(isinstance(ra, list) and len(ra) == 1, f"{w}: runtime_addresses must be one address, got {ra!r}"):
        eq_addr(f"{w}: runtime_addresses[0] (the target's &{func})", f["runtime"],
                addr(w + " runtime_addresses[0]", ra[0]))
    sites = loc.get("sites") or []
    if check(len(sites) == 1, f"{w}: expected 1 site, got {len(sites)}"):
        s = sites[0]
        eq(f"{w}: sites[0].function", func, s.get("function"))
        eq(f"{w}: sites[0].function_offset", 0, s.get("function_offset"))
        eq(f"{w}: sites[0].inlined", False, s.get("inlined"))
        eq_addr(f"{w}: sites[0].runtime_address", f["runtime"], addr(w + " site address", s.get("runtime_address")))
        if calls is not None:
            eq(f"{w}: sites[0].calls", calls, s.get("calls"))
        fl = s.get("file")
        check(isinstance(fl, str) and fl.endswith("tgt_probe.c"), f"{w}: sites[0].file {fl!r} must end with tgt_probe.c")
    if calls is not None:
        eq(f"{w}: calls (the target counted {calls})", calls, loc.get("calls"))
    if exact:
        eq(f"{w}: calls_exact", True, loc.get("calls_exact"))
    cps = loc.get("calls_per_s")
    check(isinstance(cps, (int, float)) and not isinstance(cps, bool) and cps >= 0,
          f"{w}: calls_per_s must be a number >= 0, got {cps!r}")


def check_code_restored(truth, funcs, w, armed=True, offsets=None):
    """code_final (read by the target after vigil exited) equals code (read
    before vigil started) for every probed function; with armed, the
    target's own read at the end of its work (probes still armed) saw the
    kernel's int3 (0xcc) at the probed offset of each function (offsets:
    {func: offset}, 0 by default): the bytes compared are the ones that
    were patched."""
    check(truth.state == "final", f"{w}: target state {truth.state!r}, expected 'final' (after SIGUSR2)")
    for fn in funcs:
        before = truth.code["code"].get(fn)
        final = truth.code["code_final"].get(fn)
        check(before is not None and final is not None, f"{w}: no code/code_final line for {fn}")
        eq(f"{w}: {fn}'s first bytes after vigil exited (code_final) vs before (code)", before, final)
        if armed:
            off = (offsets or {}).get(fn, 0)
            after = truth.code["code_after"].get(fn) or ""
            eq(f"{w}: {fn}+{off}'s byte while the probe was armed (code_after: {after})", "cc",
               after[2 * off:2 * off + 2])


# ---- the runner ------------------------------------------------------------

def _wait_file(pred, secs):
    t_end = time.monotonic() + secs
    while time.monotonic() < t_end:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


def _state_is(path, state):
    try:
        with open(path) as f:
            return f"state {state}\n" in f.read()
    except OSError:
        return False


def run(argv):
    name, stop, truth, tpid, vigil = argv[:5]
    args = argv[5:]
    T = os.environ["T"]
    out, err = f"{T}/{name}.out", f"{T}/{name}.err"
    rcfile = f"{T}/{name}.rc"

    def finish(rc):
        with open(rcfile, "w") as f:
            f.write(f"{rc}\n")
        sys.exit(0)

    with open(out, "w") as fo, open(err, "w") as fe, open(os.devnull) as fi:
        p = subprocess.Popen([vigil] + args, stdout=fo, stderr=fe, stdin=fi,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        def armed():
            with open(err) as f:
                return any(l.startswith("# probing") for l in f)

        ok = _wait_file(lambda: armed() or p.poll() is not None, 10)
        if p.poll() is not None and not armed():
            with open(f"{T}/{name}.rc2", "w") as f:
                f.write(f"{p.returncode}\n")
            finish("notarmed")
        if not ok:
            finish("noarm")
        os.kill(int(tpid), signal.SIGUSR1)
        if stop.startswith("int@"):
            time.sleep(int(stop[4:]) / 1000.0)
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
            try:
                finish(p.wait(20))
            except subprocess.TimeoutExpired:
                finish("timeout")
        if not _wait_file(lambda: _state_is(truth, "done") or p.poll() is not None, 30):
            finish("notdone")
        if stop == "int":
            p.send_signal(signal.SIGINT)
        elif stop == "term":
            p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(20)
        except subprocess.TimeoutExpired:
            finish("timeout")
        finish(rc)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        run(sys.argv[2:])
    else:
        sys.exit("usage: probecheck.py run NAME int|term|wait TRUTH TPID VIGIL ARGS...")
