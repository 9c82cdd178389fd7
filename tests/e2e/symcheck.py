"""symcheck - checks of `vigil sym --json` answers against the truth that
tests/targets/tgt_sym writes (stdlib only; see vgcheck.py).

A tgt_sym truth file has, for each address NAME it reports, a line
"sym NAME 0xRUNTIME 0xSTATIC 1 BYTE IMAGE" and its expected frames
"frame NAME IDX FUNCTION FILE LINE INLINED" (innermost first, FILE a
basename).  The frames are also checked against llvm-symbolizer-14 when it is
installed: a disagreement between the oracle and the truth is a harness
error (the target does not say what it thinks), and the oracle gives the
columns, which the target cannot know."""
import os
import shutil
import subprocess
import sys

from vgcheck import *

E2E_DIR = os.path.dirname(os.path.abspath(__file__))
TARGET_SRC = os.path.realpath(os.path.join(E2E_DIR, "..", "targets"))
ORACLE = shutil.which("llvm-symbolizer-14")


def harness_error(msg):
    print("HARNESS ERROR: " + msg, file=sys.stderr)
    sys.exit(99)


class SymTruth(Truth):
    def __init__(self, path):
        super().__init__(path)
        self.frames = {}
        for rest in self.kv.get("frame", []):
            name, idx, fn, file, line, inl = rest.split(" ")
            fr = self.frames.setdefault(name, [])
            if int(idx) != len(fr):
                harness_error(f"{path}: frames of {name} out of order")
            fr.append({"function": fn, "file": file, "line": int(line), "inlined": inl == "1"})

    def bias_of(self, path):
        return self.obj(path)["bias"]


def nm_symbols(path):
    """{name: (static address, size)} of the defined sized symbols of path."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4:
            syms[f[3]] = (int(f[0], 16), int(f[1], 16))
    return syms


def nm_all(path):
    """[(static address, size or None, type, name)] sorted by address."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4:
            rows.append((int(f[0], 16), int(f[1], 16), f[2], f[3]))
        elif len(f) == 3:
            rows.append((int(f[0], 16), None, f[1], f[2]))
    # By address, then sized before unsized: a plain tuple sort compared a
    # size with None when two symbols share an address (stderr@GLIBC_2.2.5
    # at __bss_start once a target's layout puts it first in .bss).
    return sorted(rows, key=lambda r: (r[0], r[1] is None, r[1] or 0, r[2], r[3]))


def padding_address(path, names):
    """(static address, function, size): the first byte after one of the
    functions names that no symbol covers (alignment padding), or None."""
    rows = nm_all(path)
    for i, (a, size, typ, name) in enumerate(rows):
        if name not in names or typ not in "tT" or not size:
            continue
        end = a + size
        later = [r[0] for r in rows[i + 1:] if r[0] >= end]
        covering = [r for r in rows if r[0] <= end and r[1] and r[0] + r[1] > end]
        if later and later[0] > end and not covering:
            return end, name, size
    return None


def oracle_frames(binary, static_addrs):
    """llvm-symbolizer-14 --inlining: one list of frames per address, or
    None when it is not installed."""
    if not ORACLE or not static_addrs:
        return None
    inp = "".join(f"{a:#x}\n" for a in static_addrs)
    out = subprocess.run([ORACLE, "--inlining", f"--obj={binary}"], input=inp,
                         capture_output=True, text=True, check=True).stdout
    blocks = out.split("\n\n")
    res = []
    for b in blocks[: len(static_addrs)]:
        lines = b.strip("\n").split("\n")
        frames = []
        for fn, loc in zip(lines[0::2], lines[1::2]):
            file, line, col = loc.rsplit(":", 2)
            frames.append({"function": fn, "file": file, "line": int(line), "column": int(col)})
        res.append(frames)
    if len(res) != len(static_addrs):
        harness_error(f"llvm-symbolizer-14 gave {len(res)} answers for {len(static_addrs)} addresses")
    return res


def oracle_agrees(truth_frames, oracle, tail_ok, what):
    """The oracle's chain must be the truth's (or a tail of it, for a
    return address); else the target's idea of its own code is wrong."""
    if oracle is None:
        return
    want = truth_frames[len(truth_frames) - len(oracle):] if tail_ok else truth_frames
    got = [(f["function"], os.path.basename(f["file"]), f["line"]) for f in oracle]
    exp = [(f["function"], f["file"], f["line"]) for f in want]
    if got != exp or not got:
        harness_error(f"{what}: llvm-symbolizer-14 says {got}, the target says {exp}")


def check_result(r, truth, name, w, symtab, image=None, input=None, tail_ok=False,
                 oracle=None, static=None, source="dwarf"):
    """One results[] entry for the address truth.syms[name].

    symtab: nm_symbols() of the file the image was built from.  tail_ok: the
    address is a return address whose frames may be any non-empty tail of
    the truth's chain (the oracle then fixes which)."""
    sym = truth.syms[name]
    want = truth.frames[name]
    image = image or sym["path"]
    bias = truth.bias_of(image)
    rt = sym["runtime"] if static is None else static + bias
    st = rt - bias
    w = f"{w} [{name} {rt:#x}]"
    if input is not None:
        eq(f"{w}: input", input, r.get("input"))
    eq(f"{w}: error", None, r.get("error"))
    eq_addr(f"{w}: address", rt, addr(w + " address", r.get("address")))
    eq(f"{w}: image", image, r.get("image"))
    eq_addr(f"{w}: static_address", st, addr(w + " static_address", r.get("static_address")))
    outer = want[-1]["function"]
    eq(f"{w}: symbol", outer, r.get("symbol"))
    eq(f"{w}: symbol_raw", outer, r.get("symbol_raw"))
    if outer in symtab:
        sv, ssize = symtab[outer]
        eq_addr(f"{w}: symbol_address (bias + st_value)", bias + sv,
                addr(w + " symbol_address", r.get("symbol_address")))
        eq_addr(f"{w}: symbol_size", ssize, addr(w + " symbol_size", r.get("symbol_size")))
        eq_addr(f"{w}: offset", rt - bias - sv, addr(w + " offset", r.get("offset")))
    else:
        check(False, f"{w}: harness: no symbol {outer} in nm output")
    eq(f"{w}: source", source, r.get("source"))
    eq(f"{w}: nearest_symbol (there is a symbol)", None, r.get("nearest_symbol"))
    frames = r.get("frames")
    if not check(isinstance(frames, list) and frames, f"{w}: frames must be a non-empty list, got {frames!r}"):
        return
    if tail_ok:
        n = len(oracle) if oracle is not None else len(frames)
        if not check(1 <= len(frames) <= len(want) and len(frames) == n,
                     f"{w}: {len(frames)} frames, expected {n} (a tail of {[f['function'] for f in want]}"
                     f"; llvm-symbolizer-14 gives {n})"):
            return
        want = want[len(want) - len(frames):]
    elif not eq(f"{w}: number of frames ({[f.get('function') for f in frames]})", len(want), len(frames)):
        return
    for i, (f, e) in enumerate(zip(frames, want)):
        fw = f"{w}: frames[{i}]"
        eq(f"{fw}.function", e["function"], f.get("function"))
        eq(f"{fw}.inlined", e["inlined"], f.get("inlined"))
        eq(f"{fw}.line", e["line"], f.get("line"))
        file = f.get("file")
        if check(isinstance(file, str) and file, f"{fw}.file must be a path, got {file!r}"):
            eq(f"{fw}.file basename", e["file"], os.path.basename(file))
            check(os.path.isabs(file), f"{fw}.file must be a full path, got {file!r}")
            eq(f"{fw}.file (realpath)", os.path.join(TARGET_SRC, e["file"]), os.path.realpath(file))
        col = f.get("column")
        if oracle is not None and i < len(oracle):
            eq(f"{fw}.column (llvm-symbolizer-14)", oracle[i]["column"], col)
        else:
            check(isinstance(col, int) and col > 0, f"{fw}.column must be > 0, got {col!r}")
    f0 = frames[0]
    eq(f"{w}: file (= frames[0].file)", f0.get("file"), r.get("file"))
    eq(f"{w}: line (= frames[0].line)", f0.get("line"), r.get("line"))
    eq(f"{w}: column (= frames[0].column)", f0.get("column"), r.get("column"))


def check_sym_doc(doc, pid, what):
    check_header(doc, "symbolize", pid, what)
    check(isinstance(doc.get("warnings"), list), f"{what}: warnings must be a list, got {doc.get('warnings')!r}")
    res = doc.get("results")
    if not check(isinstance(res, list), f"{what}: results must be a list"):
        fail(f"{what}: no results")
    return res
