"""scancheck - checks of `vigil scan --json` against tgt_scan's truth
(tests/targets/tgt_scan.c), for the scan_*.sh tests.  stdlib only."""
import os

from vgcheck import *  # noqa: F401,F403 (check, eq, fail, load_json, Truth...)
from vgcheck import Truth, HexInt, addr, check, check_header, eq, eq_list, fail, load_json

T = os.environ.get("T", ".")


class ScanTruth(Truth):
    """tgt_scan's truth with its own lines parsed."""

    def __init__(self, path):
        super().__init__(path)
        kv = self.kv
        one = lambda k: kv[k][-1] if k in kv else fail(f"truth {path}: no '{k}' line")
        self.value = int(one("value_dec"))
        self.plants = [(HexInt(int(r.split()[0], 16)), r.split()[1]) for r in kv.get("plant", [])]
        self.stack = HexInt(int(one("stack"), 16))
        self.counter_base = int(one("counter_base"))
        self.usr1 = int(one("usr1"))
        self.usr2 = int(one("usr2"))
        self.field = HexInt(int(one("field"), 16))
        self.field_step = int(one("field_step"))
        self.chain_target = HexInt(int(one("chain_target"), 16))
        self.chain_value = int(one("chain_value"))
        self.unmap = [tuple(HexInt(int(x, 16)) for x in r.split()) for r in kv.get("unmap", [])]
        self.keep = tuple(HexInt(int(x, 16)) for x in one("keep").split())
        self.unmap_value = int(one("unmap_value"))
        self.exe = self.syms["g_counter"]["path"]

    def sym(self, name, off=0):
        return HexInt(self.syms[name]["runtime"] + off)


def matches(doc):
    """The listed match addresses (ints, in the order given)."""
    return [HexInt(addr("match address", m.get("address"))) for m in doc.get("matches", [])]


def check_scan(doc, pid, mode, w, complete=True):
    """Header, scan object and counters of a live_scan report; every listed
    match well formed and inside its region.  complete: every match is
    listed (matches_listed == matches_total)."""
    check_header(doc, "live_scan", pid, w)
    sc = doc.get("scan")
    if check(isinstance(sc, dict), f"{w}: no scan object"):
        eq(f"{w}: scan.mode", mode, sc.get("mode"))
    if mode == "snapshot":
        for k in ("regions_captured", "bytes", "bytes_compressed", "regions_skipped", "bytes_skipped"):
            v = doc.get(k)
            check(isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                  f"{w}: {k} must be a non-negative integer, got {v!r}")
        eq(f"{w}: interrupted", False, doc.get("interrupted"))
        check(doc.get("regions_captured", 0) > 0, f"{w}: no region captured")
        return
    for k in ("matches_total", "matches_listed", "bytes_scanned", "regions_scanned",
              "regions_skipped", "bytes_skipped", "matches_unreadable"):
        v = doc.get(k)
        check(isinstance(v, int) and not isinstance(v, bool) and v >= 0,
              f"{w}: {k} must be a non-negative integer, got {v!r}")
    eq(f"{w}: interrupted", False, doc.get("interrupted"))
    for k in ("seconds", "gb_per_s"):
        v = doc.get(k)
        check(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
              f"{w}: {k} must be a non-negative number, got {v!r}")
    ms = doc.get("matches")
    if not check(isinstance(ms, list), f"{w}: matches must be a list"):
        return
    eq(f"{w}: matches_listed == len(matches)", len(ms), doc.get("matches_listed"))
    if complete:
        eq(f"{w}: matches_total == matches_listed", doc.get("matches_listed"), doc.get("matches_total"))
    got = matches(doc)
    eq_list(f"{w}: matches ascending, no duplicates", sorted(set(got)), got)
    for m in ms[:2000]:
        a = addr(f"{w}: match address", m.get("address"))
        reg = m.get("region")
        if not check(isinstance(reg, dict), f"{w}: match {m.get('address')}: no region object"):
            continue
        lo = addr(f"{w}: region.start", reg.get("start"))
        hi = addr(f"{w}: region.end", reg.get("end"))
        check(None not in (a, lo, hi) and lo <= a < hi,
              f"{w}: match {m.get('address')} outside its region {reg.get('start')}-{reg.get('end')}")
        perms = m.get("perms")
        check(isinstance(perms, str) and len(perms) == 4 and perms[0] == "r",
              f"{w}: match {m.get('address')}: perms {perms!r}")
        check(isinstance(m.get("value"), str), f"{w}: match {m.get('address')}: value must be a string")
        check(isinstance(m.get("watch"), str) and m.get("watch"),
              f"{w}: match {m.get('address')}: watch must be a non-empty string")
        for k in ("image", "static_offset", "symbol"):
            check(k in m, f"{w}: match {m.get('address')}: no key {k}")
        so = m.get("static_offset")
        if so is not None:
            addr(f"{w}: static_offset", so)


def by_addr(doc):
    return {int(m["address"], 16): m for m in doc.get("matches", [])
            if isinstance(m.get("address"), str)}


def eq_set(what, expected, doc):
    """The listed matches are exactly the addresses expected (any order given)."""
    exp = sorted(HexInt(a) for a in expected)
    got = sorted(matches(doc))
    if exp == got:
        return True
    missing = [hex(a) for a in exp if a not in got]
    extra = [hex(a) for a in got if a not in exp]
    return check(False, f"{what}: {len(exp)} addresses expected, {len(got)} listed; "
                 f"missing {missing[:10]}, unexpected {extra[:10]}")


def read_mem(pid, a, n):
    with open(f"/proc/{pid}/mem", "rb", 0) as f:
        f.seek(a)
        return f.read(n)
