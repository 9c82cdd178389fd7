"""profcheck - reading vigil profile's outputs in the e2e tests (stdlib only).

Every format is reduced to the same thing, {function: self samples} (or
self percent), so one test can ask the same question of all of them:
  table       vigil profile PID                 parse_table
  folded      --format folded                   parse_folded, folded_self
  pprof       --format pprof -o F               pprof_top (go tool pprof -top)
  speedscope  --format speedscope -o F          speedscope_self
  json        --json                            check_profile_doc, json_self
Folded names may carry FlameGraph's "_[i]" (inlined) and "_[k]" (kernel)
suffixes, speedscope's " [inlined]" and " [kernel]"; they are stripped for
comparisons (strip_name)."""
import os
import re
import subprocess
import sys

from vgcheck import *

# folded: FlameGraph's "_[i]"/"_[k]"; speedscope: " [inlined]"/" [kernel]".
SUFFIXES = ("_[i]", "_[k]", " [inlined]", " [kernel]")
STOP_REASONS = ("duration", "interrupted", "target_exited")


def strip_name(name):
    for s in SUFFIXES:
        if name.endswith(s):
            return name[: -len(s)]
    return name


def shares(counts):
    """{name: count} -> {name: percent of the sum}."""
    total = sum(counts.values())
    return {k: 100.0 * v / total for k, v in counts.items()} if total else {}


# ---- table ---------------------------------------------------------------
_ROW = re.compile(r"^self\s+([0-9.]+)%\s+(\d+)\s+total\s+([0-9.]+)%\s+(\d+)  (.*)$")
_HEAD = re.compile(r"^(\d+) samples")


def parse_table(text, what):
    """The "by self:" section: {name: {self_pct, self, total_pct, total,
    inlined, kernel}}, and the header's sample count (or None)."""
    lines = text.splitlines()
    m = _HEAD.match(lines[0]) if lines else None
    check(m, f"{what}: the first line must start 'N samples', got {lines[:1]!r}")
    samples = int(m.group(1)) if m else None
    rows, section = {}, None
    for ln in lines[1:]:
        if ln in ("by self:", "by total:"):
            section = ln
            continue
        r = _ROW.match(ln)
        if not r:
            check(section is None, f"{what}: unparsable line {ln!r}")
            continue
        if section != "by self:":
            continue
        name, inlined, kernel = r.group(5), False, False
        if name.endswith(" [kernel]"):
            name, kernel = name[: -len(" [kernel]")], True
        if name.endswith(" (inlined)"):
            name, inlined = name[: -len(" (inlined)")], True
        check(name not in rows, f"{what}: function {name!r} listed twice under 'by self:'")
        rows[name] = {"self_pct": float(r.group(1)), "self": int(r.group(2)),
                      "total_pct": float(r.group(3)), "total": int(r.group(4)),
                      "inlined": inlined, "kernel": kernel}
    check(rows, f"{what}: no 'by self:' rows")
    return rows, samples


# ---- folded --------------------------------------------------------------
def parse_folded(text, what):
    """[(frames root first, raw names), count]."""
    out = []
    for i, ln in enumerate(text.splitlines()):
        stack, sep, n = ln.rpartition(" ")
        if not check(sep and stack and n.isdigit() and int(n) > 0,
                     f"{what}: line {i + 1} is not 'frame;frame;... COUNT': {ln!r}"):
            continue
        out.append((stack.split(";"), int(n)))
    check(out, f"{what}: no stacks")
    return out


def folded_self(stacks):
    """{leaf function (suffix stripped): samples}."""
    d = {}
    for frames, n in stacks:
        leaf = strip_name(frames[-1])
        d[leaf] = d.get(leaf, 0) + n
    return d


# ---- pprof ---------------------------------------------------------------
_PPROF_ROW = re.compile(r"^\s*(\S+)\s+([0-9.]+)%\s+([0-9.]+)%\s+(\S+)\s+([0-9.]+)%\s+(.+?)\s*$")


def pprof_top(path, tmp, what):
    """flat% per function from `go tool pprof -symbolize=none -top`
    (-symbolize=none: names must come from the file, not from pprof looking
    up the binaries itself).  Returns ({name: flat%}, the whole output)."""
    env = dict(os.environ, HOME=tmp, GOCACHE=f"{tmp}/gocache", GOPATH=f"{tmp}/gopath",
               GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=tmp)
    p = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-top", "-nodecount=50", path],
                       capture_output=True, text=True, env=env)
    if not check(p.returncode == 0,
                 f"{what}: go tool pprof exit {p.returncode}: {p.stderr.strip()[:600]}"):
        return {}, p.stdout + p.stderr
    flat = {}
    for ln in p.stdout.splitlines():
        m = _PPROF_ROW.match(ln)
        if not m:
            continue
        name = m.group(6)
        if name.endswith(" (inline)"):
            name = name[: -len(" (inline)")]
        flat[name] = flat.get(name, 0.0) + float(m.group(2))
    check(flat, f"{what}: no rows in go tool pprof -top's output:\n{p.stdout[:1500]}")
    return flat, p.stdout


def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _fields(b):
    """(field number, wire type, value) of one protobuf message: varints
    as ints, length-delimited as bytes (the only two pprof uses)."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(f"wire type {wt} is not used by profile.proto")
        yield num, wt, v


def pprof_summary(data, what):
    """What a continuous-mode test needs of a gzipped profile.proto, read
    without Go (its field numbers are upstream's profile.proto): the
    string table, time_nanos, duration_nanos and the sum of the first
    sample value (samples/count)."""
    import gzip
    try:
        raw = gzip.decompress(data)
    except OSError as e:
        check(False, f"{what}: not gzip: {e}")
        return None
    strings, time_ns, dur_ns, total = [], 0, 0, 0
    for num, wt, v in _fields(raw):
        if num == 6 and wt == 2:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 9 and wt == 0:
            time_ns = v
        elif num == 10 and wt == 0:
            dur_ns = v
        elif num == 2 and wt == 2:
            for sn, swt, sv in _fields(v):
                if sn == 2 and swt == 2:      # value, packed
                    first, _ = _varint(sv, 0)
                    total += first
                    break
                if sn == 2 and swt == 0:
                    total += sv
                    break
    return {"strings": strings, "time_nanos": time_ns, "duration_nanos": dur_ns,
            "samples": total}


def pprof_raw(path, tmp, what):
    """`go tool pprof -raw` of a file (None without go): Go's own reader
    decodes it, as any Pyroscope server would."""
    import shutil
    if not shutil.which("go"):
        return None
    env = dict(os.environ, HOME=tmp, GOCACHE=f"{tmp}/gocache", GOPATH=f"{tmp}/gopath",
               GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=tmp)
    p = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-raw", path],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"{what}: go tool pprof -raw exit {p.returncode}: {p.stderr.strip()[:600]}")
    return p.stdout


# ---- speedscope ----------------------------------------------------------
SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def speedscope_self(doc, what):
    """Checks the file's structure; {leaf frame name: summed weight}."""
    eq(f"{what}: $schema", SPEEDSCOPE_SCHEMA, doc.get("$schema"))
    frames = (doc.get("shared") or {}).get("frames")
    if not check(isinstance(frames, list) and frames, f"{what}: no shared.frames"):
        return {}
    names = []
    for i, f in enumerate(frames):
        check(isinstance(f, dict) and isinstance(f.get("name"), str) and f.get("name"),
              f"{what}: shared.frames[{i}] has no name: {f!r}")
        names.append((f or {}).get("name") if isinstance(f, dict) else None)
    profiles = doc.get("profiles")
    if not check(isinstance(profiles, list) and profiles, f"{what}: no profiles"):
        return {}
    d = {}
    for pi, p in enumerate(profiles):
        w = f"{what}: profiles[{pi}]"
        eq(f"{w}.type", "sampled", p.get("type"))
        samples, weights = p.get("samples"), p.get("weights")
        if not check(isinstance(samples, list) and isinstance(weights, list)
                     and len(samples) == len(weights),
                     f"{w}: samples and weights must be lists of the same length"):
            continue
        check(isinstance(p.get("name"), str), f"{w}: name must be a string")
        check(isinstance(p.get("unit"), str), f"{w}: unit must be a string")
        check(isinstance(p.get("startValue"), (int, float)) and isinstance(p.get("endValue"), (int, float))
              and p["startValue"] <= p["endValue"], f"{w}: startValue <= endValue required")
        for si, (st, wt) in enumerate(zip(samples, weights)):
            if not check(isinstance(st, list) and st and all(isinstance(i, int) and 0 <= i < len(frames)
                                                             for i in st),
                         f"{w}.samples[{si}] is not a non-empty list of frame indices: {st!r}"):
                break
            check(isinstance(wt, (int, float)) and wt > 0, f"{w}.weights[{si}] must be > 0, got {wt!r}")
            leaf = strip_name(names[st[-1]] or "")
            d[leaf] = d.get(leaf, 0) + wt
    return d


# ---- JSON ----------------------------------------------------------------
def check_profile_doc(doc, pid, what, alive=True, stop_reason=None, event="cpu-clock",
                      freq=999, unwind=None):
    """The header and the observation object of a live_profile report;
    returns the observation (or {})."""
    eq(f"{what}: schema_version", 2, doc.get("schema_version"))
    eq(f"{what}: tool", "vigil", doc.get("tool"))
    eq(f"{what}: operation", "live_profile", doc.get("operation"))
    eq(f"{what}: first keys", ["schema_version", "tool", "tool_version", "operation"],
       list(doc.keys())[:4])
    proc = doc.get("process") or {}
    eq(f"{what}: process.pid", pid, proc.get("pid"))
    if alive is not None:
        eq(f"{what}: process.pid_alive_after", alive, proc.get("pid_alive_after"))
    obs = doc.get("observation")
    if not check(isinstance(obs, dict), f"{what}: no observation object"):
        return {}
    eq(f"{what}: observation.event", event, obs.get("event"))
    eq(f"{what}: observation.frequency_hz", freq, obs.get("frequency_hz"))
    if unwind:
        eq(f"{what}: observation.unwind", unwind, obs.get("unwind"))
    if stop_reason:
        eq(f"{what}: observation.stop_reason", stop_reason, obs.get("stop_reason"))
    else:
        check(obs.get("stop_reason") in STOP_REASONS,
              f"{what}: observation.stop_reason {obs.get('stop_reason')!r} not one of {STOP_REASONS}")
    for k in ("samples", "lost", "throttled"):
        v = obs.get(k)
        check(isinstance(v, int) and not isinstance(v, bool) and v >= 0,
              f"{what}: observation.{k} must be an integer >= 0, got {v!r}")
    v = obs.get("duration_ms")
    check(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
          f"{what}: observation.duration_ms must be a number >= 0, got {v!r}")
    check(isinstance(obs.get("counts_are_lower_bound"), bool),
          f"{what}: observation.counts_are_lower_bound must be a boolean")
    check(isinstance(obs.get("lower_bound_reasons"), list),
          f"{what}: observation.lower_bound_reasons must be a list")
    if (obs.get("lost") or 0) > 0 or (obs.get("throttled") or 0) > 0:
        eq(f"{what}: counts_are_lower_bound with lost {obs.get('lost')} / throttled "
           f"{obs.get('throttled')}", True, obs.get("counts_are_lower_bound"))
    if obs.get("counts_are_lower_bound") is True:
        check(obs.get("lower_bound_reasons"), f"{what}: a lower bound without a reason")
    check(obs.get("kernel_stacks") in ("shown", "hidden"),
          f"{what}: observation.kernel_stacks must be 'shown' or 'hidden', got {obs.get('kernel_stacks')!r}")
    return obs


def check_profile_body(doc, what):
    """threads, functions and stacks agree with each other and with
    observation.samples.  Returns (functions by name, stacks)."""
    obs = doc.get("observation") or {}
    n = obs.get("samples") if isinstance(obs.get("samples"), int) else -1
    threads = doc.get("threads")
    stacks = doc.get("stacks")
    fns = doc.get("functions")
    if not (check(isinstance(threads, list), f"{what}: threads must be a list")
            and check(isinstance(stacks, list), f"{what}: stacks must be a list")
            and check(isinstance(fns, list), f"{what}: functions must be a list")):
        return {}, []
    eq(f"{what}: sum of threads[].samples", n, sum(t.get("samples") or 0 for t in threads))
    eq(f"{what}: sum of stacks[].count", n, sum(s.get("count") or 0 for s in stacks))
    for i, s in enumerate(stacks):
        fr = s.get("frames")
        if not check(isinstance(fr, list) and fr, f"{what}: stacks[{i}].frames must be a non-empty list"):
            continue
        for j, f in enumerate(fr):
            if not check(isinstance(f, dict) and isinstance(f.get("inlined"), bool)
                         and isinstance(f.get("kernel"), bool),
                         f"{what}: stacks[{i}].frames[{j}] needs boolean inlined and kernel: {f!r}"):
                break
    by = {}
    for f in fns:
        name = f.get("function")
        by[name] = f
        if n > 0 and isinstance(f.get("self"), int):
            check(abs(f.get("self_share", -1) - 100.0 * f["self"] / n) < 0.01,
                  f"{what}: {name}: self_share {f.get('self_share')!r} is not 100 * self "
                  f"{f['self']} / samples {n}")
            check(abs(f.get("total_share", -1) - 100.0 * f.get("total", -1) / n) < 0.01,
                  f"{what}: {name}: total_share {f.get('total_share')!r} is not 100 * total "
                  f"{f.get('total')} / samples {n}")
            check(f["self"] <= f.get("total", -1), f"{what}: {name}: self > total")
    return by, stacks


def json_self(doc):
    """{function: self samples} from functions[]."""
    return {f.get("function"): f.get("self") or 0 for f in doc.get("functions") or []}


def leaf_images(stacks, function):
    """{image: samples} of the stacks whose leaf is function (functions[]
    has no image: the frames carry it)."""
    d = {}
    for s in stacks:
        fr = s.get("frames") or []
        if fr and fr[-1].get("function") == function:
            img = fr[-1].get("image")
            d[img] = d.get(img, 0) + (s.get("count") or 0)
    return d


def leaf_self(stacks):
    """{leaf function: samples} from stacks[] (frames root first)."""
    d = {}
    for s in stacks:
        fr = s.get("frames") or []
        if fr:
            name = fr[-1].get("function")
            d[name] = d.get(name, 0) + (s.get("count") or 0)
    return d


def cpu_ticks(pid):
    """utime + stime of PID in clock ticks (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12])


def run_cpu_s(name):
    """The CPU seconds the target used during the vigil run NAME (lib.sh's
    vg_cpu wrote $T/NAME.cpu: ticks, ticks per second)."""
    ticks, hz = open(f"{os.environ['T']}/{name}.cpu").read().split()
    return int(ticks) / int(hz)


def check_sample_count(n, cpu_s, freq, what):
    """A cpu-clock profile at freq Hz of a target whose threads used cpu_s
    seconds of CPU while vigil ran: at most freq samples per CPU second
    (+10 % and 20 for the tick granularity of the measure), and at least a
    quarter of that (vigil's own setup is inside cpu_s).  Not a count per
    second of wall time: on a loaded machine a busy target gets a fraction
    of a CPU, and a floor in wall time fails a correct profiler there."""
    hi = cpu_s * freq * 1.1 + 20
    check(0 < n <= hi, f"{what}: {n} samples, but the target used {cpu_s:.2f} s of CPU: "
          f"at most {hi:.0f} possible at {freq} Hz")
    check(n >= cpu_s * freq / 4, f"{what}: only {n} samples for {cpu_s:.2f} s of target CPU at "
          f"{freq} Hz (expected about {cpu_s * freq:.0f})")
