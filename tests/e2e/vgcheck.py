"""vgcheck - Python helpers for the vigil e2e tests (stdlib only).

Collect every difference (`eq`, `check`), then `done()` prints them all and
exits 1, so one run shows everything that is wrong."""
import json
import os
import re
import sys

_failures = []
HEX_RE = re.compile(r"^0x[0-9a-f]+$")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        _failures.append(msg)
    return bool(cond)


def eq(what, expected, got):
    return check(expected == got, f"{what}: expected {expected!r}, got {got!r}")


def eq_addr(what, expected, got):
    """eq() for addresses: the message shows hex."""
    if expected == got:
        return True
    h = lambda v: f"{v:#x}" if isinstance(v, int) else repr(v)
    return check(False, f"{what}: expected {h(expected)}, got {h(got)}")


def eq_list(what, expected, got, show=3):
    """eq() for long lists: reports the length and the first differences."""
    if expected == got:
        return True
    if not isinstance(expected, list) or not isinstance(got, list):
        return eq(what, expected, got)
    msgs = []
    if len(expected) != len(got):
        msgs.append(f"{len(expected)} entries expected, {len(got)} got")
    diffs = [i for i in range(max(len(expected), len(got)))
             if i >= len(expected) or i >= len(got) or expected[i] != got[i]]
    for i in diffs[:show]:
        e = expected[i] if i < len(expected) else "<none>"
        g = got[i] if i < len(got) else "<none>"
        msgs.append(f"[{i}] expected {e!r}, got {g!r}")
    if len(diffs) > show:
        msgs.append(f"... {len(diffs) - show} more differing entries")
    return check(False, f"{what}: " + "; ".join(msgs))


def done():
    if _failures:
        for f in _failures[:40]:
            print("FAIL: " + f, file=sys.stderr)
        if len(_failures) > 40:
            print(f"FAIL: ... and {len(_failures) - 40} more", file=sys.stderr)
        sys.exit(1)


def load_json(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    try:
        return json.loads(text)
    except ValueError as e:
        fail(f"{path} is not one JSON document ({e}); starts with {text[:200]!r}")


def get(doc, *keys):
    cur = doc
    for i, k in enumerate(keys):
        try:
            cur = cur[k]
        except (KeyError, IndexError, TypeError):
            fail("JSON has no " + ".".join(str(x) for x in keys[: i + 1]))
    return cur


def num(x):
    """An integer given as JSON number, "0x..." or decimal string."""
    if isinstance(x, bool):
        raise ValueError(f"not a number: {x!r}")
    if isinstance(x, int):
        return x
    if isinstance(x, str):
        return int(x, 16) if x.lower().startswith("0x") else int(x, 10)
    raise ValueError(f"not a number: {x!r}")


def addr(what, x):
    """A JSON address: must be a lower-case "0x..." string."""
    if not check(isinstance(x, str) and HEX_RE.match(x),
                 f"{what}: address must be a lower-case '0x...' string, got {x!r}"):
        try:
            return num(x)
        except (ValueError, TypeError):
            return None
    return int(x, 16)


class Truth:
    """A target's truth file (see tests/targets/truth.h)."""

    def __init__(self, path):
        self.path = path
        self.objs = []
        self.syms = {}
        self.kv = {}
        with open(path) as f:
            for line in f.read().splitlines():
                key, _, rest = line.partition(" ")
                if key == "obj":
                    kind, bias, bid, p = rest.split(" ", 3)
                    self.objs.append({"kind": kind, "bias": int(bias, 16),
                                      "build_id": "" if bid == "-" else bid,
                                      "path": p})
                elif key == "sym":
                    name, rt, st, size, hx, p = rest.split(" ", 5)
                    self.syms[name] = {"runtime": int(rt, 16), "static": int(st, 16),
                                       "size": int(size), "hex": hx, "path": p}
                else:
                    self.kv.setdefault(key, []).append(rest)
        self.pid = int(self.kv["pid"][0])

    def files(self):
        """Objects backed by a file (main program and libraries)."""
        return [o for o in self.objs if o["kind"] in ("main", "lib")]

    def obj(self, path):
        for o in self.objs:
            if o["path"] == path:
                return o
        fail(f"truth {self.path} has no object {path}")


class HexInt(int):
    """An int that shows as hex in failure messages."""

    def __repr__(self):
        return hex(self)


def unescape_maps_path(p):
    # The kernel escapes '\n' as "\012" in /proc/PID/maps (seq_file_path).
    return p.replace("\\012", "\n")


def read_proc_maps(path_or_pid):
    """Parse /proc/PID/maps (or a saved copy) into region dicts."""
    p = path_or_pid if isinstance(path_or_pid, str) else f"/proc/{path_or_pid}/maps"
    out = []
    with open(p) as f:
        for line in f.read().split("\n"):
            if not line:
                continue
            fields = line.split(None, 5)
            rng, perms, off, dev, inode = fields[:5]
            path = fields[5] if len(fields) > 5 else ""
            deleted = False
            if path.endswith(" (deleted)"):
                path, deleted = path[: -len(" (deleted)")], True
            s, e = rng.split("-")
            out.append({"start": HexInt(int(s, 16)), "end": HexInt(int(e, 16)), "perms": perms,
                        "offset": HexInt(int(off, 16)), "dev": dev, "inode": int(inode),
                        "path": unescape_maps_path(path), "deleted": deleted})
    return out


def norm_region(r, what):
    """A vigil JSON region in the shape of read_proc_maps()."""
    try:
        return {"start": HexInt(addr(what + ".start", r["start"])),
                "end": HexInt(addr(what + ".end", r["end"])),
                "perms": r["perms"],
                "offset": HexInt(num(r["offset"])),
                "dev": str(r["dev"]).lower(),
                "inode": num(r["inode"]),
                "path": r["path"] if r["path"] is not None else "",
                "deleted": r["deleted"]}
    except (KeyError, ValueError, TypeError) as e:
        fail(f"{what}: malformed region {r!r}: {e!r}")


def check_header(doc, operation, pid, what="JSON"):
    eq(f"{what}: schema_version", 2, doc.get("schema_version"))
    eq(f"{what}: tool", "vigil", doc.get("tool"))
    check(isinstance(doc.get("tool_version"), str) and doc.get("tool_version"),
          f"{what}: tool_version must be a non-empty string, got {doc.get('tool_version')!r}")
    eq(f"{what}: operation", operation, doc.get("operation"))
    keys = list(doc.keys())
    eq(f"{what}: first keys", ["schema_version", "tool", "tool_version", "operation"], keys[:4])
    proc = doc.get("process")
    if not check(isinstance(proc, dict), f"{what}: no process object"):
        return
    eq(f"{what}: process.pid", pid, proc.get("pid"))
    try:
        eq(f"{what}: process.starttime_ticks (field 22 of /proc/{pid}/stat)",
           starttime(pid), proc.get("starttime_ticks"))
    except OSError:
        pass
    check(isinstance(proc.get("starttime_ticks"), int) and proc.get("starttime_ticks") > 0,
          f"{what}: process.starttime_ticks must be a positive number, got {proc.get('starttime_ticks')!r}")
    check(isinstance(proc.get("comm"), str) and proc.get("comm"),
          f"{what}: process.comm must be a non-empty string")
    eq(f"{what}: process.pid_alive_after", True, proc.get("pid_alive_after"))
    eq(f"{what}: process.process_changed", False, proc.get("process_changed"))
    check(isinstance(proc.get("warnings"), list), f"{what}: process.warnings must be a list")


def check_error_doc(doc, exit_code, what="error JSON"):
    eq(f"{what}: schema_version", 2, doc.get("schema_version"))
    eq(f"{what}: tool", "vigil", doc.get("tool"))
    err = doc.get("error")
    if not check(isinstance(err, dict), f"{what}: no error object in {doc!r}"):
        return
    eq(f"{what}: error.exit_code", exit_code, err.get("exit_code"))
    check(isinstance(err.get("message"), str) and err.get("message"),
          f"{what}: error.message must be a non-empty string")


def starttime(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return int(s[s.rindex(")") + 2:].split()[19])


def check_image(doc, o, w, deleted=False, open_via=("map_files", "proc_root")):
    """The maps JSON doc has exactly one image for truth object o, with the
    exact bias and build-id."""
    images = get(doc, "images")
    found = [im for im in images if im.get("path") == o["path"]]
    if not check(len(found) == 1, f"{w}: expected one image {o['path']!r}, found {len(found)}; "
                 f"images: {[im.get('path') for im in images]}"):
        return None
    im = found[0]
    iw = f"{w}: image {o['path']}"
    eq_addr(f"{iw} load_bias (dl_iterate_phdr's dlpi_addr)", o["bias"],
            addr(iw + " load_bias", im.get("load_bias")))
    eq(f"{iw} bias_method", "exact", im.get("bias_method"))
    check(o["build_id"], f"{iw}: the target saw no build-id (harness)")
    eq(f"{iw} build_id", o["build_id"], im.get("build_id"))
    eq(f"{iw} deleted", deleted, im.get("deleted"))
    eq(f"{iw} is_main", False, im.get("is_main"))
    check(im.get("open_via") in open_via, f"{iw} open_via: expected one of {open_via}, got {im.get('open_via')!r}")
    return im


def check_value_read(doc, sym, w):
    """A read --json of 8 bytes at the symbol."""
    eq_addr(f"{w}: address", sym["runtime"], addr(w + " address", doc.get("address")))
    eq(f"{w}: complete", True, doc.get("complete"))
    eq(f"{w}: bytes_read", 8, doc.get("bytes_read"))
    eq(f"{w}: hex", sym["hex"], doc.get("hex"))
