#!/usr/bin/env python3
"""sym_oracle.py - differential test of `vigil sym --bin` against two oracles,
llvm-symbolizer-14 --inlining and eu-addr2line -f -i (elfutils).

For each binary: N random instruction starts inside function symbols (fixed
seed), symbolized by all three; whole inline chains are compared, every
frame's function and file:line (innermost first; frames[i+1] is the call
site of frames[i]).  Columns are reported but do not decide agreement.
Passes when, per binary, vigil agrees with at least one oracle on at least
99.9% of the addresses (documented expected differences count as agreeing).

  sym_oracle.py --vigil VIGIL --bin TAG FILE EU_N [--bin ...] [--expected F]
               [--locations-only TAG]...

--locations-only TAG: for that binary only every frame's file:line is
compared, not the function names: C++ names are spelled differently by the
three demanglers (llvm's, elfutils' __cxa_demangle, libiberty's), e.g. a
lambda's enclosing template function with or without its return type.
vigil's demangler is checked against llvm-cxxfilt-14 by test_demangle.

EU_N: eu-addr2line answers the first EU_N addresses (it walks the DIE scopes
for every address: fast on libc's many small CUs, ~1.4 ms an address on
tgt_inline's one big CU), plus every address where vigil and llvm-symbolizer
disagree, so that vigil can still be matched against both there.
Without --vigil (or when `vigil sym --help` fails) only the oracles are
compared, and the run fails: the test must not pass without vigil.
Stdlib only.
"""
import argparse
import bisect
import collections
import json
import os
import random
import re
import subprocess
import sys
import time

LLVM = "llvm-symbolizer-14"
EU = "eu-addr2line"
THRESHOLD = 0.999
SHOW_MAX = int(os.environ.get("SYM_ORACLE_SHOW", "100"))

# (function, file, line, column); None for "??"
Frame = collections.namedtuple("Frame", "function file line column")


def run(cmd, stdin_text=None, timeout=120):
    t0 = time.monotonic()
    p = subprocess.run(cmd, input=stdin_text, capture_output=True, text=True,
                       timeout=timeout, errors="replace")
    return p, time.monotonic() - t0


def die(msg):
    print(f"sym_oracle: HARNESS ERROR: {msg}", file=sys.stderr)
    sys.exit(99)


# ---- ELF facts: function symbols, aliases, instruction starts ----------------

SYM_RE = re.compile(r"^\s*\d+:\s+([0-9a-fA-F]+)\s+(\S+)\s+(\w+)\s+(\w+)\s+(\w+)\s+(\S+)\s+(\S.*)$")


def function_symbols(path):
    """[(addr, size, name, is_ifunc)] of defined STT_FUNC and STT_GNU_IFUNC
    symbols of .symtab and .dynsym, name without @VERSION.  An IFUNC symbol
    names its resolver (llvm-symbolizer calls memset_ifunc "memset")."""
    p, _ = run(["readelf", "-sW", path])
    if p.returncode != 0:
        die(f"readelf -sW {path}: {p.stderr.strip()}")
    out = []
    for line in p.stdout.splitlines():
        m = SYM_RE.match(line)
        if not m or m.group(3) not in ("FUNC", "IFUNC") or m.group(6) in ("UND", "ABS"):
            continue
        size = int(m.group(2), 0)
        name = m.group(7).split("@")[0].strip()
        out.append((int(m.group(1), 16), size, name, m.group(3) == "IFUNC"))
    return out


def build_id_debug_file(path):
    """The separate debug file in /usr/lib/debug/.build-id, if installed."""
    p, _ = run(["readelf", "-n", path])
    m = re.search(r"Build ID:\s*([0-9a-f]+)", p.stdout)
    if not m:
        return None
    bid = m.group(1)
    f = f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug"
    return f if os.path.exists(f) else None


INSN_RE = re.compile(r"^\s+([0-9a-f]+):\t")


def instruction_starts(path):
    p, _ = run(["objdump", "-d", "--no-show-raw-insn", path], timeout=300)
    if p.returncode != 0:
        die(f"objdump -d {path}: {p.stderr.strip()}")
    return sorted({int(m.group(1), 16) for m in map(INSN_RE.match, p.stdout.splitlines()) if m})


class Image:
    def __init__(self, tag, path):
        self.tag, self.path = tag, path
        self.debug = build_id_debug_file(path)
        syms = function_symbols(path)
        if self.debug:
            syms += function_symbols(self.debug)
        self.names_at = collections.defaultdict(set)   # addr -> names
        self.addrs_of = collections.defaultdict(set)   # name -> addrs
        ranges = {}
        for a, s, n, ifunc in syms:
            self.names_at[a].add(n)
            self.addrs_of[n].add(a)
            if s > 0 and not ifunc:
                ranges[a] = max(ranges.get(a, 0), s)
        # Merged [lo, hi) ranges of sized function symbols, and per-start
        # lookup of the containing symbol (for messages and expected diffs).
        self.starts = sorted(ranges)
        self.sizes = [ranges[a] for a in self.starts]

    def containing(self, addr):
        """(start, size) of the function symbol that contains addr, or None;
        the innermost when symbols nest (a .cold part inside nothing, etc.)."""
        i = bisect.bisect_right(self.starts, addr) - 1
        while i >= 0:
            if addr < self.starts[i] + self.sizes[i]:
                return self.starts[i], self.sizes[i]
            if self.starts[i] + 0x100000 < addr:
                break
            i -= 1
        return None

    def describe(self, addr):
        c = self.containing(addr)
        if not c:
            return "no symbol"
        names = sorted(self.names_at[c[0]], key=lambda n: (n.startswith("_"), len(n), n))
        return f"{names[0]}+{addr - c[0]:#x}" + (f" (aliases {', '.join(names[1:])})" if len(names) > 1 else "")

    def sample(self, n, seed):
        insns = [a for a in instruction_starts(self.path) if self.containing(a)]
        if len(insns) < n:
            die(f"{self.path}: only {len(insns)} instructions inside function symbols, wanted {n}")
        return random.Random(seed).sample(insns, n)


# ---- comparing answers --------------------------------------------------------

CLONE_RE = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|localalias|clone)(\.\d+)?)+$")


def same_function(img, a, b):
    """Equal, or aliases at one address (__GI_setlocale / setlocale: eu-addr2line
    prints the DWARF linkage name, llvm-symbolizer the .dynsym name for the
    outermost frame), or a gcc clone of it (llvm-symbolizer names the outer
    frame after the ELF symbol, foo.constprop.0 or foo.cold, eu-addr2line and
    vigil after the DWARF subprogram, foo)."""
    if a == b:
        return True
    if a is None or b is None:
        return False
    a2, b2 = CLONE_RE.sub("", a), CLONE_RE.sub("", b)
    if a2 == b2:
        return True
    for x in (a, a2):
        for y in (b, b2):
            if img.addrs_of.get(x, set()) & img.addrs_of.get(y, set()):
                return True
    return False


def norm_file(f):
    # Compared as full paths after collapsing "." and "x/.." ("./nptl/./nptl/x.c"
    # is what both oracles print for libc: comp_dir "./nptl" joined with the
    # DWARF 5 directory 0 "./nptl"; vigil may print it collapsed).
    return os.path.normpath(f) if f else None


LOCATIONS_ONLY = set()


def same_chain(img, x, y, columns=False):
    if x is None or y is None or len(x) != len(y):
        return False
    for f, g in zip(x, y):
        if img.tag not in LOCATIONS_ONLY and not same_function(img, f.function, g.function):
            return False
        if norm_file(f.file) != norm_file(g.file) or f.line != g.line:
            return False
        if columns and f.column != g.column:
            return False
    return True


def show_chain(chain):
    if chain is None:
        return ["(no answer)"]
    if not chain:
        return ["(no frames)"]
    return [f"{f.function or '??'}  {f.file or '??'}:{f.line}:{f.column}" for f in chain]


# ---- the three symbolizers ----------------------------------------------------

def parse_loc(loc):
    """file:line[:column], file may be ??."""
    parts = loc.rsplit(":", 2)
    nums = []
    while len(parts) > 1 and parts[-1].isdigit() and len(nums) < 2:
        nums.insert(0, int(parts.pop()))
    f = ":".join(parts)
    line = nums[0] if nums else 0
    col = nums[1] if len(nums) > 1 else 0
    return (None if f == "??" else f), line, col


def llvm_symbolize(path, addrs):
    p, secs = run([LLVM, "--inlining", f"--obj={path}"], "".join(f"{a:#x}\n" for a in addrs))
    if p.returncode != 0:
        die(f"{LLVM} failed: {p.stderr.strip()}")
    blocks = p.stdout.split("\n\n")
    if blocks and blocks[-1].strip() == "":
        blocks.pop()
    if len(blocks) != len(addrs):
        die(f"{LLVM}: {len(blocks)} answers for {len(addrs)} addresses")
    out = []
    for b in blocks:
        lines = b.split("\n")
        if len(lines) % 2:
            die(f"{LLVM}: odd block {b!r}")
        chain = []
        for fn, loc in zip(lines[0::2], lines[1::2]):
            f, l, c = parse_loc(loc)
            chain.append(Frame(None if fn == "??" else fn, f, l, c))
        out.append(chain)
    return out, secs


EU_ADDR_RE = re.compile(r"^0x[0-9a-f]+$")


def eu_symbolize(path, addrs):
    """eu-addr2line -a -f -i: "0xADDR" starts each answer, then a function
    line and a file:line[:col] line per frame, innermost first; an inlined
    innermost frame's line reads "NAME inlined at FILE:LINE:COL in OUTER"."""
    if not addrs:
        return [], 0.0
    # -C: C++ names demangled, as llvm-symbolizer and vigil print them.
    p, secs = run([EU, "-a", "-C", "-f", "-i", "-e", path], "".join(f"{a:#x}\n" for a in addrs),
                  timeout=600)
    if p.returncode != 0:
        die(f"{EU} failed: {p.stderr.strip()}")
    out, cur = [], None
    lines = p.stdout.split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        if EU_ADDR_RE.match(ln):
            cur = []
            out.append((int(ln, 16), cur))
            i += 1
            continue
        if ln == "" and i == len(lines) - 1:
            break
        if cur is None or i + 1 >= len(lines):
            die(f"{EU}: unexpected output line {ln!r}")
        fn = ln.split(" inlined at ")[0]
        f, l, c = parse_loc(lines[i + 1])
        cur.append(Frame(None if fn == "??" else fn, f, l, c))
        i += 2
    if [a for a, _ in out] != list(addrs):
        die(f"{EU}: answers do not match the {len(addrs)} addresses asked")
    return [c for _, c in out], secs


def vigil_available(vigil):
    if not vigil:
        return False, "no --vigil given"
    try:
        p, _ = run([vigil, "sym", "--help"], timeout=20)
    except OSError as e:
        return False, str(e)
    if p.returncode != 0:
        return False, f"`vigil sym --help` exits {p.returncode}: {(p.stderr or p.stdout).strip()[:200]}"
    return True, ""


def vigil_symbolize(vigil, path, addrs, problems):
    p, secs = run([vigil, "sym", "--bin", path, "--json"], "".join(f"{a:#x}\n" for a in addrs),
                  timeout=300)
    if p.returncode != 0:
        problems.append(f"vigil sym --bin {path} --json exits {p.returncode}: {p.stderr.strip()[:500]}")
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        problems.append(f"vigil sym --bin {path} --json: not JSON ({e}); stdout starts {p.stdout[:300]!r}")
        return [None] * len(addrs), secs
    res = doc.get("results") or []
    if len(res) != len(addrs):
        problems.append(f"vigil: {len(res)} results for {len(addrs)} addresses")
    out = []
    for i, a in enumerate(addrs):
        r = res[i] if i < len(res) else None
        if not isinstance(r, dict):
            out.append(None)
            continue
        try:
            if int(str(r.get("address")), 16) != a:
                problems.append(f"vigil results[{i}].address {r.get('address')!r}, asked {a:#x}")
        except ValueError:
            problems.append(f"vigil results[{i}].address {r.get('address')!r} is not hex")
        frames = r.get("frames") or []
        chain = [Frame(f.get("function"), f.get("file"), f.get("line") or 0, f.get("column") or 0)
                 for f in frames]
        if not chain and (r.get("symbol") or r.get("file")):
            # No DWARF frames: the symbol table answer stands for the one frame.
            chain = [Frame(r.get("symbol"), r.get("file"), r.get("line") or 0, r.get("column") or 0)]
        if chain and (r.get("file"), r.get("line") or 0) != (chain[0].file, chain[0].line):
            problems.append(f"vigil results[{i}] ({a:#x}): file:line {r.get('file')}:{r.get('line')} "
                            f"is not frames[0]'s {chain[0].file}:{chain[0].line}")
        out.append(chain)
    return out, secs


# ---- expected differences -----------------------------------------------------

def load_expected(path):
    """Lines "TAG SELECTOR REASON..."; SELECTOR is 0xADDR or func=NAME (every
    address in the ELF function NAME, any alias).  # starts a comment."""
    exp = []
    if not path:
        return exp
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) < 3:
            die(f"{path}:{n}: want TAG SELECTOR REASON")
        exp.append((parts[0], parts[1], parts[2], n))
    return exp


def expected_reason(img, addr, expected):
    c = img.containing(addr)
    for tag, sel, reason, n in expected:
        if tag != img.tag:
            continue
        if sel.startswith("0x") and int(sel, 16) == addr:
            return f"{reason} (expected:{n})"
        if sel.startswith("func=") and c and sel[5:] in img.names_at[c[0]]:
            return f"{reason} (expected:{n})"
    return None


# ---- one binary ---------------------------------------------------------------

def pct(k, n):
    return f"{k}/{n} = {100.0 * k / n:.2f}%" if n else "n/a"


def check_binary(tag, path, eu_n, n, seed, vigil, expected, problems):
    img = Image(tag, path)
    t0 = time.monotonic()
    addrs = img.sample(n, seed)
    print(f"== {tag}: {path}" + (f" (debug file {img.debug})" if img.debug else ""))
    print(f"   {n} instruction starts in {len(img.starts)} function symbols, seed {seed}"
          f" ({time.monotonic() - t0:.1f} s to pick)")
    llvm, t_llvm = llvm_symbolize(path, addrs)
    eu_idx = list(range(min(eu_n, n)))
    eu_list, t_eu = eu_symbolize(path, [addrs[i] for i in eu_idx])
    eu = dict(zip(eu_idx, eu_list))
    print(f"   {LLVM}: {n} addresses in {t_llvm:.2f} s; {EU}: {len(eu_idx)} in {t_eu:.2f} s")

    ll_eu = sum(same_chain(img, llvm[i], eu[i]) for i in eu_idx)
    ll_eu_col = sum(same_chain(img, llvm[i], eu[i], columns=True) for i in eu_idx)
    print(f"   llvm vs eu:    {pct(ll_eu, len(eu_idx))} whole chains agree"
          f" (with columns {pct(ll_eu_col, len(eu_idx))})")
    oracle_diff = [i for i in eu_idx if not same_chain(img, llvm[i], eu[i])]

    result = {"tag": tag, "ok": None}
    if vigil is None:
        show_disagreements(img, addrs, oracle_diff, None, llvm, eu, "llvm and eu disagree", {})
        return result

    vg, t_vg = vigil_symbolize(vigil, path, addrs, problems)
    print(f"   vigil sym --bin --json: {n} addresses in {t_vg:.2f} s")
    # eu-addr2line also answers where vigil and llvm disagree, so vigil can
    # agree with eu there.
    extra = [i for i in range(n) if i not in eu and not same_chain(img, vg[i], llvm[i])]
    if extra:
        extra_list, t_x = eu_symbolize(path, [addrs[i] for i in extra])
        eu.update(zip(extra, extra_list))
        print(f"   {EU} on the {len(extra)} more addresses where vigil and llvm disagree: {t_x:.2f} s")

    v_ll = sum(same_chain(img, vg[i], llvm[i]) for i in range(n))
    v_ll_col = sum(same_chain(img, vg[i], llvm[i], columns=True) for i in range(n))
    v_eu = sum(same_chain(img, vg[i], eu[i]) for i in eu_idx)
    agree, bad, exp_hits = 0, [], {}
    for i in range(n):
        if same_chain(img, vg[i], llvm[i]) or (i in eu and same_chain(img, vg[i], eu[i])):
            agree += 1
            continue
        why = expected_reason(img, addrs[i], expected)
        if why:
            agree += 1
            exp_hits[i] = why
        else:
            bad.append(i)
    print(f"   vigil vs llvm: {pct(v_ll, n)} (with columns {pct(v_ll_col, n)})")
    print(f"   vigil vs eu:   {pct(v_eu, len(eu_idx))} (on eu's first {len(eu_idx)})")
    print(f"   vigil vs either oracle: {pct(agree, n)}"
          + (f", of which {len(exp_hits)} expected differences" if exp_hits else "")
          + f" (need >= {100 * THRESHOLD:.1f}%)")
    show_disagreements(img, addrs, sorted(bad) + sorted(exp_hits), vg, llvm, eu,
                       "vigil agrees with neither oracle", exp_hits)
    ora = [i for i in oracle_diff if i not in exp_hits and i not in bad]
    show_disagreements(img, addrs, ora, vg, llvm, eu, "oracles disagree (vigil agrees with one)", {})
    result["ok"] = agree >= THRESHOLD * n
    return result


def show_disagreements(img, addrs, idx, vg, llvm, eu, title, exp_hits):
    if not idx:
        return
    print(f"   -- {title}: {len(idx)}" + (f" (first {SHOW_MAX} shown; SYM_ORACLE_SHOW=N for more)"
                                         if len(idx) > SHOW_MAX else ""))
    for i in idx[:SHOW_MAX]:
        a = addrs[i]
        print(f"   {img.tag} {a:#x} in {img.describe(a)}"
              + (f"  EXPECTED: {exp_hits[i]}" if i in exp_hits else ""))
        answers = ([("vigil", vg[i])] if vg is not None else []) + [("llvm", llvm[i])]
        answers.append(("eu", eu[i]) if i in eu else ("eu", None))
        for name, chain in answers:
            for k, line in enumerate(show_chain(chain)):
                print(f"      {name if k == 0 else '':5} {line}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vigil")
    ap.add_argument("--bin", nargs=3, action="append", metavar=("TAG", "FILE", "EU_N"), required=True)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--expected")
    ap.add_argument("--locations-only", action="append", default=[], metavar="TAG")
    args = ap.parse_args()
    LOCATIONS_ONLY.update(args.locations_only)

    ok_vigil, why = vigil_available(args.vigil)
    if not ok_vigil:
        print(f"sym_oracle: vigil sym is not usable ({why}): comparing the oracles only")
    expected = load_expected(args.expected)
    problems, results = [], []
    for tag, path, eu_n in args.bin:
        results.append(check_binary(tag, path, int(eu_n), args.n, args.seed,
                                    args.vigil if ok_vigil else None, expected, problems))
    for p in problems[:50]:
        print(f"FAIL: {p}", file=sys.stderr)
    failed = [r["tag"] for r in results if r["ok"] is False]
    if not ok_vigil:
        print(f"FAIL: vigil sym is missing ({why}); oracles compared only", file=sys.stderr)
        return 1
    if failed or problems:
        print(f"FAIL: vigil agrees with neither oracle too often on {', '.join(failed) or '-'}"
              f"; {len(problems)} other problems", file=sys.stderr)
        return 1
    print("sym_oracle: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
