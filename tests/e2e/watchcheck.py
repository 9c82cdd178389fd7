"""watchcheck - checks of `vigil watch --json` against tgt_watch's truth
(tests/targets/tgt_watch.c), for the watch_*.sh tests.  stdlib only."""
import os
from collections import Counter

from vgcheck import *  # noqa: F401,F403 (check, eq, fail, load_json, Truth...)
from vgcheck import Truth, check, eq, eq_addr, addr, fail

MODE = os.environ.get("WATCH_MODE", "real")


class WatchTruth(Truth):
    """tgt_watch's truth: line/emu/thread/gen lines parsed."""

    def __init__(self, path):
        super().__init__(path)
        self.lines = {}
        for rest in self.kv.get("line", []):
            name, n = rest.split()
            self.lines[name] = int(n)
        self.labels = {}
        for rest in self.kv.get("emu", []):
            name, off, rt, st, p = rest.split(" ", 4)
            self.labels[name] = {"offset": int(off, 16), "runtime": int(rt, 16),
                                 "static": int(st, 16), "path": p}
        self.threads = []
        for rest in self.kv.get("thread", []):
            idx, tid, late, count, first = rest.split()
            self.threads.append({"idx": int(idx), "tid": int(tid), "late": late == "1",
                                 "count": int(count), "first": int(first, 16)})
        self.gens = []
        for rest in self.kv.get("gen", []):
            idx, ptr, writes, first, *mid = rest.split()
            self.gens.append({"index": int(idx), "pointer": int(ptr, 16),
                              "writes": int(writes), "first": int(first, 16),
                              "mid_slot": int(mid[0], 16) if mid else None})
        self.state = self.kv.get("state", [""])[-1]

    def one(self, key):
        v = self.kv.get(key)
        if not v:
            fail(f"truth {self.path} has no '{key}' line")
        return v[0]

    def total(self):
        return int(self.one("total"))


def hexint(what, x):
    v = addr(what, x)
    return v


def check_watch_header(doc, pid, w, alive=True, exact=True):
    """The common part of every watch report."""
    eq(f"{w}: schema_version", 2, doc.get("schema_version"))
    eq(f"{w}: tool", "vigil", doc.get("tool"))
    eq(f"{w}: operation", "live_watch", doc.get("operation"))
    want_backend = "uprobe_emulation" if MODE == "emulation" else "perf_breakpoint"
    eq(f"{w}: backend ({MODE} mode)", want_backend, doc.get("backend"))
    proc = doc.get("process") or {}
    eq(f"{w}: process.pid", pid, proc.get("pid"))
    eq(f"{w}: process.pid_alive_after", alive, proc.get("pid_alive_after"))
    check(isinstance(doc.get("capabilities"), dict), f"{w}: no capabilities object")
    obs = doc.get("observation")
    if not check(isinstance(obs, dict), f"{w}: no observation object"):
        return {}
    eq(f"{w}: observation.lost_events", 0, obs.get("lost_events"))
    eq(f"{w}: observation.undecodable_records", 0, obs.get("undecodable_records"))
    why = obs.get("lower_bound_reasons")
    if MODE == "emulation":
        # Emulation always says it misses threads created after setup; no
        # other reason is allowed.
        eq(f"{w}: observation.counts_are_lower_bound (emulation)", True, obs.get("counts_are_lower_bound"))
        check(isinstance(why, list) and len(why) == 1 and "emulation" in str(why[0]),
              f"{w}: lower_bound_reasons: expected only the emulation's, got {why!r}")
    elif exact:  # counts exact: nothing makes them a lower bound
        eq(f"{w}: observation.counts_are_lower_bound", False, obs.get("counts_are_lower_bound"))
        eq(f"{w}: observation.lower_bound_reasons", [], why)
    check(isinstance(obs.get("elapsed_ms"), (int, float)), f"{w}: observation.elapsed_ms must be a number")
    return obs


def the_watch(doc, w, i=0, n=None):
    ws = doc.get("watches")
    if not check(isinstance(ws, list), f"{w}: no watches list"):
        fail(f"{w}: cannot continue without watches")
    if n is not None:
        eq(f"{w}: number of watches", n, len(ws))
    if len(ws) <= i:
        fail(f"{w}: no watches[{i}] in {len(ws)} watches")
    return ws[i]


def site_at_line(sites, line, w):
    """The one writer site at line of a test target's own source (fails
    when not exactly one).  Lines are matched in tests/targets/ only: a
    store in libc (memset's vector stores) can sit at the same line
    number of another file."""
    found = [s for s in sites if s.get("line") == line and "tests/targets/" in (s.get("file") or "")]
    if not check(len(found) == 1,
                 f"{w}: expected one writer site at line {line}, found {len(found)}; sites at "
                 f"{[(s.get('line'), s.get('instruction'), s.get('hits')) for s in sites]}"):
        return None
    return found[0]


def check_site(site, truth, store, w, kind, hits=None, function=None, mnemonic=None,
               writes=None, trap_at_writer=False):
    """A writer site of tgt_watch's store STORE (a key of truth.lines).
    hits: its traps (= hits); writes: its writes.  trap_at_writer: the
    first trap may have its IP on the writer itself (a rep string
    instruction with iterations left, real hardware only)."""
    if site is None:
        return
    eq(f"{w}: line (the store's line)", truth.lines[store], site.get("line"))
    f = site.get("file")
    check(isinstance(f, str) and f.endswith("tgt_watch.c"), f"{w}: file {f!r} must end with tgt_watch.c")
    eq(f"{w}: kind", kind, site.get("kind"))
    eq(f"{w}: confidence", "exact", site.get("confidence"))
    if function:
        eq(f"{w}: function", function, site.get("function"))
    if hits is not None:
        eq(f"{w}: hits", hits, site.get("hits"))
        eq(f"{w}: traps", hits, site.get("traps"))
    if writes is not None:
        eq(f"{w}: writes", writes, site.get("writes"))
    eq(f"{w}: unverified_traps", 0, site.get("unverified_traps"))
    if mnemonic is not None:
        m = site.get("mnemonic")
        check(isinstance(m, str) and mnemonic in m, f"{w}: mnemonic {m!r} must contain {mnemonic!r}")
    lab = truth.labels.get(store)
    if lab and kind != "kernel_write":
        # The trap IP of a store is the label right after it; the writer
        # is the instruction that ends there.
        wr = hexint(w + " writer_runtime_ip", site.get("writer_runtime_ip"))
        ws = hexint(w + " writer_static_ip", site.get("writer_static_ip"))
        tr = hexint(w + " trap_runtime_ip", site.get("trap_runtime_ip"))
        if not (trap_at_writer and tr is not None and tr == wr):
            eq_addr(f"{w}: trap_runtime_ip (label after the store)", lab["runtime"], tr)
            eq_addr(f"{w}: trap_static_ip", lab["static"],
                    hexint(w + " trap_static_ip", site.get("trap_static_ip")))
        if wr is not None and ws is not None:
            check(0 < lab["runtime"] - wr <= 15,
                  f"{w}: writer_runtime_ip {wr:#x} must be 1..15 bytes before the trap IP {lab['runtime']:#x}")
            eq_addr(f"{w}: writer static = runtime - bias", lab["static"] - (lab["runtime"] - wr), ws)


def values_of(samples, w, kind=None, register=None, width=8):
    """The values of samples (ints; None for kind unknown); checks each
    value's kind, register and width (one failure per field, with the
    first offending sample)."""
    out, bad = [], {}
    for i, s in enumerate(samples):
        v = s.get("value") or {}
        want = {"kind": kind}
        if register is not None:
            want["register"] = register
        if width is not None and kind not in (None, "unknown"):
            want["width_bytes"] = width
        for k, x in want.items():
            if x is not None and v.get(k) != x:
                bad.setdefault(k, (i, x, v.get(k), 0))
                j, x0, g0, n = bad[k]
                bad[k] = (j, x0, g0, n + 1)
        if v.get("kind") == "unknown" or v.get("value") is None:
            out.append(None)
        else:
            out.append(hexint(f"{w}: samples[{i}].value.value", v.get("value")))
    for k, (i, x, g, n) in bad.items():
        check(False, f"{w}: value.{k}: expected {x!r}, got {g!r} in {n} of {len(samples)} samples "
                     f"(first samples[{i}]: {samples[i].get('value')!r})")
    return out


def eq_multiset(what, expected, got):
    e, g = Counter(expected), Counter(got)
    if e == g:
        return True
    missing = list((e - g).elements())
    extra = list((g - e).elements())
    h = lambda xs: [f"{x:#x}" if isinstance(x, int) else x for x in xs[:5]]
    return check(False, f"{what}: {len(expected)} expected, {len(got)} got; missing {len(missing)} "
                        f"(e.g. {h(missing)}), unexpected {len(extra)} (e.g. {h(extra)})")
