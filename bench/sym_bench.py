#!/usr/bin/env python3
"""sym_bench.py: the measuring half of bench/sym.sh (which checks the tools,
builds the generated program and passes everything in).

  sym_bench.py --vigil V --tmp DIR [--addrs N] [--eu-addrs M] [--runs R]
               TAG:FILE...

Per binary: 3N addresses drawn uniformly (fixed seed) from the bytes inside
its function symbols; the first N are the cold set, all 3N the long set.
Each of addr2line, llvm-symbolizer-14 and vigil is one process reading the
addresses on stdin, timed R times on each set (runs interleaved across tools,
so a load change hits all of them alike), medians taken:
  cold    N / wall(N): startup, index build and N lookups, what one batch run
          pays;
  steady  2N / median(wall(3N) - wall(N)): the marginal cost of an address
          once everything is built, what a long-running symbolizer pays;
          each run's difference is taken between its two back-to-back runs
          (the machine's slow spells lengthen both and cancel out).
eu-addr2line (DIE scope walk on every address, ~100/s on the generated
binary) runs once, cold, on the first M addresses only.  Peak RSS is
/usr/bin/time -f %M of one more cold run (not timed: that wrapper's own
start adds ~4 ms), first answer the median of 11 starts (after 3 not
timed) with one address on stdin, time to the first output line, each
beside its floor: --floor (bench/targets/echo_line.c, a C program that
echoes its line) timed the same way, taking turns with that series' runs.
"fixed" is what the cold run spent beyond N addresses at the steady
rate: startup and index build.

vigil runs twice: with --no-cache (VIGIL_NO_CACHE=1), reading the DWARF
every run as the other tools do, and with its persistent index present
(written first by `vigil sym --index FILE` into a private VIGIL_CACHE_DIR,
which is timed): the other tools keep nothing between runs, so the index
run's throughput and first answer are compared with their cold ones, and
its answers must be byte-identical to the run without the index.  Last,
with libc: the first answer of `vigil sym PID ADDR` on a running sleep(1)
(one libc address on the command line, time to the first output line),
and of `vigil stack PID` on it (time to the first frame line, against
eu-stack -i -s -p), with the index, without it, and with it again.
vigil's indexed first answers run before its runs without the index and
once more right after them, both printed: on this VM the processes that
follow one that freed tens of MB start slower, whatever they are.

vigil runs with --style llvm, and its N answer blocks are compared with
llvm-symbolizer's: byte-identical blocks, and blocks identical modulo
function-name aliases as tests/e2e/sym_oracle.py judges them (its
same_function: two names at one address, gcc clone suffixes, IFUNC
resolvers), with every frame's file, line and column exact.  Differences that
are not aliases are counted and up to 5 shown.  Stdlib only.
"""
import argparse
import bisect
import os
import random
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
import sym_oracle  # noqa: E402  (alias rules, ELF symbol facts, llvm output parsing)

SEED = 20261203
LLVM = sym_oracle.LLVM
LONG = 3                    # the long set is LONG times the cold set
# First-answer latencies: the median of 11, after 3 runs not timed, for
# every tool alike.  On a VM that hands freed memory back to its host,
# the first runs after a large process exits (the cold runs just before)
# fault in fresh pages and take 1-2 ms more than the ones after, a
# program that does nothing as much as vigil (a C hello world: 2.7 and
# 2.5 ms, then 1.5-2.1).  Right after 11 cold runs, vigil's first five
# indexed answers took 5.0 5.0 4.3 4.8 6.1 ms and the next six 3.4-4.1.
# The runs not timed take off that start; they do not take off a slow
# spell of the host, which can last the whole series (another time:
# 5.2-7.4 ms, then 4.1-5.4 in the series after it).  The spread
# (fastest-slowest) is printed beside every median.
LATENCY_RUNS = 11
LATENCY_WARMUP = 3
SHOW = 5


def fail(msg):
    print(f"sym.sh: {msg}", file=sys.stderr)
    sys.exit(1)


def function_ranges(img):
    """Merged [lo, hi) of the sized function symbols (not IFUNC resolvers'
    IFUNC entries) of the image and its debug file."""
    merged = []
    for lo, size in zip(img.starts, img.sizes):
        hi = lo + size
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


def sample(ranges, n):
    """n addresses uniform over the bytes of ranges (fixed seed), and how
    many bytes that is."""
    starts, acc = [], 0
    for lo, hi in ranges:
        starts.append(acc)
        acc += hi - lo
    rnd = random.Random(SEED)
    out = []
    for _ in range(n):
        x = rnd.randrange(acc)
        i = bisect.bisect_right(starts, x) - 1
        out.append(ranges[i][0] + x - starts[i])
    return out, acc


def write_addrs(path, addrs):
    with open(path, "w") as f:
        f.writelines(f"{a:#x}\n" for a in addrs)


def timed(tmp, argv, infile, outfile, env=None):
    """Wall s of argv < infile > outfile; fails on non-zero exit.  Not
    through /usr/bin/time: its own fork and exec added ~4 ms to every run
    timed through it (a program that does nothing: 1.9 -> 6.1 ms from
    spawn to exit), a sixth of an indexed vigil batch."""
    with open(infile) as i, open(outfile, "w") as o:
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdin=i, stdout=o, stderr=subprocess.PIPE, text=True, env=env)
        wall = time.perf_counter() - t0
    if p.returncode != 0:
        fail(f"{' '.join(argv)} exits {p.returncode}: {p.stderr.strip()[-500:]}")
    return wall


def peak_rss(tmp, argv, infile, env=None):
    """Peak RSS KiB of argv < infile, by /usr/bin/time -f %M.  Not wait4's
    rusage of a child of this script: its ru_maxrss includes the pre-exec
    copy of this Python process (the kernel keeps the larger of the two):
    libc's tools all read 108.8 MiB."""
    rss = os.path.join(tmp, "rss")
    with open(infile) as i:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + argv, stdin=i,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        fail(f"{' '.join(argv)} exits {p.returncode}: {p.stderr.strip()[-500:]}")
    return int(open(rss).read().split()[-1])


def spread(samples):
    """ "fastest-slowest ms" of latency samples in seconds."""
    return f"{min(samples) * 1e3:.1f}-{max(samples) * 1e3:.1f} ms"


def latencies(measure, floor=None):
    """LATENCY_RUNS samples of measure(), in seconds, after LATENCY_WARMUP
    runs not kept; and, when floor is given, as many of floor() taken in
    the same slots, the two taking turns to go first (a process that
    frees memory slows the one after it here, so neither always follows
    the other).  Returns (samples, floor samples); the latter empty
    without floor."""
    for _ in range(LATENCY_WARMUP):
        measure()
    samples, floors = [], []
    for k in range(LATENCY_RUNS):
        if floor is not None and k % 2 == 0:
            floors.append(floor())
        samples.append(measure())
        if floor is not None and k % 2 == 1:
            floors.append(floor())
    return samples, floors


def floor_of(args, addr):
    """The floor's measure: echo_line (bench/targets/echo_line.c) timed as
    first_answer times a tool, addr on its stdin (None: none)."""
    return lambda: first_answer([args.floor], addr)


def first_answer(argv, addr, env=None):
    """Seconds from start, one address on stdin (or none: addr None, the
    address is in argv), to the first output line."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=env)
    if addr is not None:
        p.stdin.write(f"{addr:#x}\n".encode())
    p.stdin.close()
    line = p.stdout.readline()
    t = time.perf_counter() - t0
    p.stdout.read()
    p.wait()
    if not line:
        fail(f"{' '.join(argv)}: no answer for {addr if addr is None else hex(addr)}")
    return t


def first_frame(argv, pattern, env=None):
    """Seconds from start to the first output line matching pattern (a
    frame), for a command that takes no input; fails if none is printed."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env)
    t = None
    for line in p.stdout:
        if re.match(pattern, line.decode(errors="replace")):
            t = time.perf_counter() - t0
            break
    p.stdout.read()
    p.wait()
    if t is None:
        fail(f"{' '.join(argv)}: no frame printed")
    return t


def blocks(path):
    b = open(path).read().split("\n\n")
    if b and b[-1].strip() == "":
        b.pop()
    return b


def chain(block):
    """llvm-symbolizer --inlining block -> [Frame], innermost first; None if
    the block is not function/location line pairs."""
    lines = block.split("\n")
    if len(lines) % 2:
        return None
    out = []
    for fn, loc in zip(lines[0::2], lines[1::2]):
        f, l, c = sym_oracle.parse_loc(loc)
        out.append(sym_oracle.Frame(None if fn == "??" else fn, f, l, c))
    return out


def same_modulo_aliases(img, x, y):
    """Whole chains equal, every frame's file:line:column exact; function
    names equal or aliases by sym_oracle's rules."""
    if x is None or y is None or len(x) != len(y):
        return False
    return all(sym_oracle.same_function(img, f.function, g.function)
               and (f.file, f.line, f.column) == (g.file, g.line, g.column)
               for f, g in zip(x, y))


def llvm_only_lacks_names(v, l):
    """Chains equal but for frames where llvm has no function name and vigil has one."""
    if v is None or l is None or len(v) != len(l):
        return False
    return all((f.file, f.line, f.column) == (g.file, g.line, g.column)
               and (f.function == g.function or (g.function is None and f.function))
               for f, g in zip(v, l))


def one_line(block):
    return block.strip().replace("\n", " | ")


class Tool:
    def __init__(self, label, argv, full, env=None):
        self.label, self.argv, self.full, self.env = label, argv, full, env
        self.cold, self.long = [], []
        self.rss = 0              # peak RSS KiB, of one cold run
        self.out = None

    def cold_wall(self):
        return statistics.median(self.cold)

    def steady_rate(self, n):
        """Addresses/s once running: the extra 2N addresses of the long set over
        the extra time they took; None when noise made it non-positive."""
        if not self.long:
            return None
        # Per run, the long set minus the cold set run right before it: a slow
        # spell of the machine lengthens both, and cancels out.
        extra = statistics.median(lg - c for lg, c in zip(self.long, self.cold))
        return (LONG - 1) * n / extra if extra > 0 else None


def bench_binary(args, tag, path):
    n, eu_n, tmp = args.addrs, min(args.eu_addrs, args.addrs), args.tmp
    img = sym_oracle.Image(tag, path)
    ranges = function_ranges(img)
    addrs, covered = sample(ranges, LONG * n)
    cold_f, long_f, eu_f = (os.path.join(tmp, f"{tag}.{k}.addrs") for k in ("cold", "long", "eu"))
    write_addrs(cold_f, addrs[:n])
    write_addrs(long_f, addrs)
    write_addrs(eu_f, addrs[:eu_n])
    print(f"\n{tag}: {path}" + (f"\n  debug file {img.debug}" if img.debug else ""))
    print(f"  {len(img.starts):,} function symbol starts covering {covered / 1e6:.1f} MB;"
          f" cold set {n:,} addresses, long set {LONG * n:,} (the cold set first), seed {SEED}")

    # vigil twice: without its persistent index (--no-cache: every run
    # reads the DWARF, as the other tools do), and with the index that
    # `sym --index` wrote ahead in a private cache directory.
    no_cache = dict(os.environ, VIGIL_NO_CACHE="1")
    cache_dir = os.path.join(tmp, f"cache-{tag}")
    with_index = dict(os.environ, VIGIL_CACHE_DIR=cache_dir)
    with_index.pop("VIGIL_NO_CACHE", None)
    vargv = [args.vigil, "sym", "--bin", path, "--style", "llvm"]
    tools = [
        Tool("addr2line -f -i", ["addr2line", "-f", "-i", "-e", path], True),
        Tool("eu-addr2line -f -i", ["eu-addr2line", "-f", "-i", "-e", path], False),
        Tool(f"{LLVM} --inlining", [LLVM, "--inlining", f"--obj={path}"], True),
        Tool("vigil sym --bin --style llvm", vargv, True, no_cache),
        Tool("vigil, index present", vargv, True, with_index),
    ]
    t0 = time.perf_counter()
    p = subprocess.run([args.vigil, "sym", "--index", path], env=with_index, capture_output=True, text=True)
    index_s = time.perf_counter() - t0
    if p.returncode != 0:
        fail(f"vigil sym --index {path} exits {p.returncode}: {p.stderr.strip()[-500:]}")
    index_size = int(p.stdout.rsplit("(", 1)[1].split()[0])
    print(f"  index: vigil sym --index wrote {index_size / 1e6:.1f} MB in {index_s:.2f} s"
          f" (every CU indexed on both cores, then written)")
    full = [t for t in tools if t.full]
    for k, t in enumerate(tools):
        t.out = os.path.join(tmp, f"{tag}.{k}.out")
    for _ in range(args.runs):
        for t in full:
            t.cold.append(timed(tmp, t.argv, cold_f, t.out, t.env))
            t.long.append(timed(tmp, t.argv, long_f, t.out + ".long", t.env))
    eu = tools[1]
    eu.cold.append(timed(tmp, eu.argv, eu_f, eu.out))
    for t in tools:
        t.rss = peak_rss(tmp, t.argv, cold_f if t.full else eu_f, t.env)
    # vigil's indexed first answers first, then every other tool's, then
    # the indexed ones again right after vigil's series without the index
    # (a process that reads the DWARF and frees tens of MB): the second
    # figure is printed beside the first (see LATENCY_WARMUP).
    # Each series takes turns with the floor (echo_line): what starting a
    # process and answering one line cost at that moment.
    indexed, floor = tools[-1], floor_of(args, addrs[0])
    for t in [indexed] + tools[:-1]:
        t.lat_s, t.floor_s = latencies(lambda: first_answer(t.argv, addrs[0], t.env), floor)
        t.lat = statistics.median(t.lat_s)
    indexed.lat_after_s, indexed.floor_after_s = latencies(
        lambda: first_answer(indexed.argv, addrs[0], indexed.env), floor)

    w = max(len(t.label) for t in tools)
    print(f"  {'tool':<{w}}  {'cold s':>7}  {'cold addr/s':>11}  {'steady addr/s':>13}  {'fixed s':>7}"
          f"  {'peak MiB':>8}  {'first ms':>8}  {'floor ms':>8}")
    for t in tools:
        cn = n if t.full else eu_n
        steady = t.steady_rate(n)
        st = "-" if not t.full else ("n/a" if steady is None else f"{steady:,.0f}")
        fixed = "-" if steady is None else f"{t.cold_wall() - n / steady:.3f}"
        print(f"  {t.label:<{w}}  {t.cold_wall():7.3f}{' ' if t.full else '*'} {cn / t.cold_wall():11,.0f}"
              f"  {st:>13}  {fixed:>7}  {t.rss / 1024:8.1f}  {t.lat * 1e3:8.1f}"
              f"  {statistics.median(t.floor_s) * 1e3:8.1f}")
    print(f"  * eu-addr2line: one cold run on the first {eu_n:,} addresses only (too slow for more;"
          f" its memory is not comparable); not in the ratios")
    print(f"  fixed s: cold s minus {n:,} addresses at the steady rate (startup, reading the"
          f" debug info, building indexes)")
    print(f"  floor ms: a C program that echoes its line of input (bench/targets/echo_line.c),"
          f" timed as first ms is, taking turns with that tool's {LATENCY_RUNS} runs")

    vg, ll, vw = tools[3], tools[2], tools[4]
    others = [t for t in full if t is not vg and t is not vw]
    fast_cold = max(others, key=lambda t: n / t.cold_wall())
    cold_ratio = fast_cold.cold_wall() / vg.cold_wall()
    print(f"  cold:   vigil/fastest ({fast_cold.label}) = {cold_ratio:.2f}x the throughput")
    vs = vg.steady_rate(n)
    rated = [t for t in others if t.steady_rate(n)]
    fast_steady = max(rated, key=lambda t: t.steady_rate(n)) if rated else None
    steady_ratio = vs / fast_steady.steady_rate(n) if vs and fast_steady else None
    if steady_ratio is not None:
        print(f"  steady: vigil/fastest ({fast_steady.label}) = {steady_ratio:.2f}x the throughput")
    else:
        print("  steady: n/a (the long set took no longer than the cold set: noise; raise ADDRS)")
    leanest = min(others, key=lambda t: t.rss)
    print(f"  memory: vigil/leanest ({leanest.label}) = {vg.rss / leanest.rss:.2f}x the peak RSS;"
          f" first answer: vigil/fastest = {vg.lat / min(t.lat for t in others):.2f}x the time")

    # With the index: the others keep nothing between runs, so their
    # every run is cold; vigil's second run onwards is this one.
    warm_ratio = fast_cold.cold_wall() / vw.cold_wall()
    fastest_lat = min(t.lat for t in others)
    a2l = tools[0]
    print(f"  index present: {n / vw.cold_wall():,.0f} addresses/s on {n:,} addresses ="
          f" {warm_ratio:.2f}x the fastest other ({fast_cold.label}); first answer"
          f" {vw.lat * 1e3:.1f} ms ({spread(vw.lat_s)}) = {fastest_lat / vw.lat:.1f}x sooner than the fastest other,"
          f" {a2l.lat / vw.lat:.1f}x sooner than addr2line, floor {statistics.median(vw.floor_s) * 1e3:.1f} ms;"
          f" right after vigil's runs without the index"
          f" {statistics.median(vw.lat_after_s) * 1e3:.1f} ms ({spread(vw.lat_after_s)}),"
          f" floor {statistics.median(vw.floor_after_s) * 1e3:.1f} ms")
    if open(vw.out).read() != open(vg.out).read():
        fail(f"{tag}: answers with the index differ from answers without it")
    print("  answers with the index: byte-identical to those without it")

    vb, lb = blocks(vg.out), blocks(ll.out)
    if len(vb) != n:
        fail(f"{tag}: vigil printed {len(vb)} answer blocks for {n} addresses")
    if len(lb) != n:
        fail(f"{tag}: {LLVM} printed {len(lb)} answer blocks for {n} addresses")
    exact = sum(vb[i] == lb[i] for i in range(n))
    differ = [i for i in range(n) if vb[i] != lb[i]
              and not same_modulo_aliases(img, chain(vb[i]), chain(lb[i]))]
    alias = n - len(differ)
    print(f"  answers, vigil vs {LLVM}: byte-identical blocks {exact:,}/{n:,} = {100.0 * exact / n:.3f}%;"
          f" identical modulo aliases {alias:,}/{n:,} = {100.0 * alias / n:.3f}%")
    # llvm-symbolizer names functions from the binary's own symbol tables
    # only; where neither has the function (libc.so.6's libgcc soft-float
    # helpers are only in the debug file's .symtab) it says ?? and vigil
    # names it.  Counted apart, and shown after the other kinds.
    unnamed = [i for i in differ if llvm_only_lacks_names(chain(vb[i]), chain(lb[i]))]
    shown = [i for i in differ if i not in set(unnamed)][:SHOW]
    shown += unnamed[:SHOW - len(shown)]
    if differ:
        print(f"  {len(differ):,} blocks differ in more than aliases; in {len(unnamed):,} of them only"
              f" because {LLVM} has no function name (??) where vigil has one"
              + (f"; {len(shown)} shown, other kinds first:" if len(differ) > len(shown) else ":"))
        for i in shown:
            print(f"    {addrs[i]:#x} in {img.describe(addrs[i])}\n      vigil: {one_line(vb[i])}"
                  f"\n      llvm:  {one_line(lb[i])}")
    return {"tag": tag, "cold": n / vg.cold_wall(), "steady": vs, "cold_ratio": cold_ratio,
            "warm": n / vw.cold_wall(), "warm_ratio": warm_ratio, "warm_lat": vw.lat,
            "a2l_lat": a2l.lat, "cache_dir": cache_dir, "warm_spread": spread(vw.lat_s),
            "warm_lat_after": statistics.median(vw.lat_after_s),
            "warm_floor": statistics.median(vw.floor_s),
            "warm_floor_after": statistics.median(vw.floor_after_s),
            "steady_ratio": steady_ratio, "rss": vg.rss / 1024, "leanest": leanest,
            "differ": len(differ), "unnamed": len(unnamed), "n": n}


def live_first_answer(args, libc_result):
    """`vigil sym PID ADDR` on a process using libc (sleep): time to the
    first output line, without the index and with libc's (written by the
    libc --bin run above), median of LATENCY_RUNS each; and with the
    index again right after the runs without it."""
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    img = sym_oracle.Image("libc", libc)
    addr = sample(function_ranges(img), 1)[0][0]
    p = subprocess.Popen(["sleep", "600"])
    try:
        base = None
        for _ in range(200):
            with open(f"/proc/{p.pid}/maps") as m:
                for line in m:
                    f = line.split()
                    if len(f) >= 6 and f[5].endswith("/libc.so.6") and int(f[2], 16) == 0:
                        base = int(f[0].split("-")[0], 16)
                        break
            if base is not None:
                break
            time.sleep(0.01)
        if base is None:
            fail("sleep maps no libc.so.6")
        argv = [args.vigil, "sym", str(p.pid), hex(base + addr)]
        cold = dict(os.environ, VIGIL_NO_CACHE="1")
        warm = dict(os.environ, VIGIL_CACHE_DIR=libc_result["cache_dir"])
        warm.pop("VIGIL_NO_CACHE", None)
        # With the index first (after the light indexed runs of the libc
        # section), then without it, then with it again right after
        # those (each run without the index reads the DWARF and frees
        # tens of MB): printed beside the first (see LATENCY_WARMUP).
        samples, floors = {}, {}
        for k, e in (("warm", warm), ("cold", cold), ("warm_after", warm)):
            samples[k], floors[k] = latencies(lambda: first_answer(argv, None, e), floor_of(args, None))
        # vigil stack: every thread's stack, symbolized (a frame line is
        # "  #0  0x..."); eu-stack -p (inline frames and lines, as vigil
        # gives them) stops the process to answer the same.
        stack = [args.vigil, "stack", str(p.pid), "--no-kernel"]
        for k, e in (("stack_warm", warm), ("stack_cold", cold), ("stack_warm_after", warm)):
            samples[k] = latencies(lambda: first_frame(stack, r"\s+#0 ", e))[0]
        samples["eu_stack"] = latencies(
            lambda: first_frame(["eu-stack", "-i", "-s", "-p", str(p.pid)], r"#0 "))[0]
    finally:
        p.kill()
        p.wait()
    res = {k: statistics.median(v) for k, v in samples.items()}
    res["warm_spread"] = spread(samples["warm"])
    for k, v in floors.items():
        res[k + "_floor"] = statistics.median(v)
    print(f"\nvigil sym PID ADDR, one libc address of a running sleep(1) (libc6-dbg), first output line"
          f" (median of {LATENCY_RUNS} after {LATENCY_WARMUP} not timed, fastest-slowest): without the index {res['cold'] * 1e3:.1f} ms"
          f" ({spread(samples['cold'])}, floor {res['cold_floor'] * 1e3:.1f} ms),"
          f" with it {res['warm'] * 1e3:.1f} ms ({res['warm_spread']}, floor {res['warm_floor'] * 1e3:.1f} ms),"
          f" with it right after the runs without it {res['warm_after'] * 1e3:.1f} ms"
          f" ({spread(samples['warm_after'])}, floor {res['warm_after_floor'] * 1e3:.1f} ms)"
          f" (addr2line -e libc.so.6, one address: {libc_result['a2l_lat'] * 1e3:.1f} ms; floor: echo_line"
          f" in the same slots)")
    print(f"vigil stack PID, the same sleep, first frame printed: without the index"
          f" {res['stack_cold'] * 1e3:.1f} ms ({spread(samples['stack_cold'])}), with it"
          f" {res['stack_warm'] * 1e3:.1f} ms ({spread(samples['stack_warm'])}), with it right after the runs"
          f" without it {res['stack_warm_after'] * 1e3:.1f} ms ({spread(samples['stack_warm_after'])})"
          f" (eu-stack -i -s -p PID, which stops the process: {res['eu_stack'] * 1e3:.1f} ms"
          f" ({spread(samples['eu_stack'])}), vigil/eu-stack = {res['stack_warm'] / res['eu_stack']:.2f}x the time)")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--addrs", type=int, default=100000)
    ap.add_argument("--eu-addrs", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--floor", required=True, help="bench/targets/echo_line.c, built")
    ap.add_argument("binaries", nargs="+", metavar="TAG:FILE")
    args = ap.parse_args()
    results = [bench_binary(args, *b.split(":", 1)) for b in args.binaries]
    libc = [r for r in results if r["tag"] == "libc"]
    live = live_first_answer(args, libc[0]) if libc else None

    def met(ok):
        return "met" if ok else "MISSED"

    def ratio(x):
        return "n/a" if x is None else f"{x:.2f}x"

    print()
    for r in results:
        tag, lean = r["tag"], r["leanest"]
        steady = r["steady"] or 0
        print(f"goal {tag}: >= 5x the fastest other tool: cold {met(r['cold_ratio'] >= 5)}"
              f" ({ratio(r['cold_ratio'])}), steady {met((r['steady_ratio'] or 0) >= 5)}"
              f" ({ratio(r['steady_ratio'])})")
        print(f"goal {tag}: >= 500,000 addresses/s: cold {met(r['cold'] >= 500000)} ({r['cold']:,.0f}/s),"
              f" steady {met(steady >= 500000)} ({steady:,.0f}/s)")
        # A block where llvm-symbolizer prints "??" and vigil names the
        # function is no disagreement on an answer both give: counted
        # and shown above, not held against the goal.
        print(f"goal {tag}: identical answers (modulo aliases): {met(r['differ'] == r['unnamed'])}"
              f" ({r['differ']:,} of {r['n']:,} blocks differ, {r['unnamed']:,} of them where {LLVM} has no name)")
        print(f"goal {tag}, index present: >= 20x the fastest other tool {met(r['warm_ratio'] >= 20)}"
              f" ({r['warm_ratio']:.2f}x), >= 2,000,000 addresses/s {met(r['warm'] >= 2e6)}"
              f" ({r['warm']:,.0f}/s), first answer <= 5 ms {met(r['warm_lat'] <= 0.005)}"
              f" ({r['warm_lat'] * 1e3:.1f} ms, {r['warm_spread']}, floor {r['warm_floor'] * 1e3:.1f} ms;"
              f" right after vigil's runs without the index {r['warm_lat_after'] * 1e3:.1f} ms,"
              f" floor {r['warm_floor_after'] * 1e3:.1f} ms) and 10x sooner than addr2line"
              f" {met(r['a2l_lat'] >= 10 * r['warm_lat'])} ({r['a2l_lat'] / r['warm_lat']:.1f}x)")
        print(f"goal {tag}: peak memory <= the leanest other ({lean.label}, {lean.rss / 1024:.1f} MiB):"
              f" {met(r['rss'] <= lean.rss / 1024)} ({r['rss']:.1f} MiB)")


    if live:
        print(f"goal libc: vigil sym PID ADDR first answer with the index <= 5 ms: {met(live['warm'] <= 0.005)}"
              f" ({live['warm'] * 1e3:.1f} ms, {live['warm_spread']}, floor {live['warm_floor'] * 1e3:.1f} ms;"
              f" right after the runs without the index {live['warm_after'] * 1e3:.1f} ms,"
              f" floor {live['warm_after_floor'] * 1e3:.1f} ms)")
        # The goal is held to as it was set, whatever the floor; the
        # floor says how much of a miss the machine's state explains.
        print(f"floor: bench/targets/echo_line.c, a dynamically linked C program that echoes its line,"
              f" timed in the same slots as each first answer, taking turns with it: a process's start"
              f" and first line on this machine at that moment")


if __name__ == "__main__":
    main()
