#!/usr/bin/env bash
# bench/sym.sh: how fast does `vigil sym --bin` turn addresses into inline
# chains and file:line, against addr2line, eu-addr2line and llvm-symbolizer?
#
#   bench/sym.sh                  VIGIL=path/to/vigil  (default: build/vigil)
#                                 ADDRS=100000  EU_ADDRS=2000  RUNS=3  FUNCS=20000
#
# Two binaries, ADDRS random addresses each (random offsets inside function
# symbols, fixed seed):
#   generated  bench/out/gen_funcs/gen_funcs: FUNCS functions written by
#              bench/targets/gen_funcs.py over 10 files, every one inlining
#              static inline helpers of a shared header, built cc -O2 -g
#              (DWARF 5); built once, rebuilt when gen_funcs.py or FUNCS change
#   libc       /lib/x86_64-linux-gnu/libc.so.6 with libc6-dbg's debug file
# Each tool reads the addresses on stdin, one process for all of them:
#   addr2line -f -i -e FILE
#   eu-addr2line -f -i -e FILE          (EU_ADDRS of them, one run: ~100 a
#                                        second on the generated binary; scaled)
#   llvm-symbolizer-14 --inlining --obj=FILE
#   vigil sym --bin FILE --style llvm   (llvm-symbolizer's output format)
# and is measured for: wall time (median of RUNS) and addresses/s, peak RSS
# (/usr/bin/time -f %M, max of RUNS), and first-answer latency (start with
# one address on stdin, time to the first output line: what a live tool pays
# on every run; median of 5).  vigil's output must have one block per
# address; the % of blocks identical to llvm-symbolizer's is printed, with a
# few differing samples.  Goals (issue 3): >= 5x the fastest other tool and
# >= 500,000 addresses/s, identical answers, no more peak memory.
set -euo pipefail

bench_name=sym.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
naddrs=${ADDRS:-100000}
eu_addrs=${EU_ADDRS:-2000}
runs=${RUNS:-3}
funcs=${FUNCS:-20000}
libc=/lib/x86_64-linux-gnu/libc.so.6
[[ $naddrs =~ ^[1-9][0-9]*$ && $eu_addrs =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] ||
    die "ADDRS, EU_ADDRS and RUNS must be positive integers"
[[ $funcs =~ ^[1-9][0-9]*$ ]] && (( funcs >= 20000 )) || die "FUNCS must be >= 20000"

for tool in addr2line eu-addr2line llvm-symbolizer-14 readelf cc; do
    command -v "$tool" >/dev/null || die "$tool is required (scripts/install-deps.sh)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time is required for peak RSS (apt-get install time)"
"$vigil" sym --help >/dev/null 2>&1 || die "$vigil has no working 'sym' command"
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: *//p')
[[ -f /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] ||
    die "no debug file for $libc (build-id $bid): apt-get install libc6-dbg"

# ---- the generated program (built once per gen_funcs.py version and FUNCS) ----
gen=$out/gen_funcs
stamp="$(sha256sum "$root/bench/targets/gen_funcs.py" | cut -d' ' -f1) $funcs"
if [[ ! -x $gen/gen_funcs || "$(cat "$gen/stamp" 2>/dev/null)" != "$stamp" ]]; then
    rm -rf "$gen"
    mkdir -p "$gen/src"
    python3 "$root/bench/targets/gen_funcs.py" "$gen/src" "$funcs"
    echo "sym.sh: compiling $funcs generated functions with cc -O2 -g on $(nproc) cores" \
         "(once; a few minutes)" >&2
    t0=$SECONDS
    ( cd "$gen/src" && ls gf_*.c | xargs -P "$(nproc)" -I{} \
        cc -O2 -g -Wall -Wextra -Wmissing-prototypes -c {} -o "$gen/{}.o" ) \
        >"$gen/build.log" 2>&1 || { tail -n 30 "$gen/build.log" >&2; die "compiling the generated program failed"; }
    cc -o "$gen/gen_funcs" "$gen"/gf_*.o >>"$gen/build.log" 2>&1 ||
        { tail -n 30 "$gen/build.log" >&2; die "linking the generated program failed"; }
    "$gen/gen_funcs" >/dev/null || die "the generated program does not run"
    echo "sym.sh: built in $((SECONDS - t0)) s" >&2
    echo "$stamp" >"$gen/stamp"
fi

echo
echo "vigil sym benchmark: $naddrs addresses per binary (eu-addr2line: $eu_addrs, scaled)," \
     "median of $runs runs, page cache warm"
print_system
echo "tools: $(addr2line --version | head -n1); $(eu-addr2line --version | head -n1);" \
     "llvm-symbolizer-14 $(llvm-symbolizer-14 --version | sed -n 's/.*LLVM version //p' | head -n1)"

python3 - "$vigil" "$tmp" "$naddrs" "$eu_addrs" "$runs" \
    "generated:$gen/gen_funcs" "libc:$libc" <<'PY' || die "a symbolizer failed (see above)"
import bisect, os, random, re, statistics, subprocess, sys, time

vigil, tmp, naddrs, eu_n, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
binaries = [a.split(":", 1) for a in sys.argv[6:]]
SEED = 20261203
LLVM = "llvm-symbolizer-14"
SYM_RE = re.compile(r"^\s*\d+:\s+([0-9a-fA-F]+)\s+(\S+)\s+FUNC\s+\w+\s+\w+\s+(\S+)\s")

def fail(msg):
    print(f"sym.sh: {msg}", file=sys.stderr)
    sys.exit(1)

def debug_file(path):
    m = re.search(r"Build ID:\s*([0-9a-f]+)", subprocess.run(["readelf", "-n", path],
                  capture_output=True, text=True).stdout)
    f = m and f"/usr/lib/debug/.build-id/{m.group(1)[:2]}/{m.group(1)[2:]}.debug"
    return f if f and os.path.exists(f) else None

def function_ranges(path):
    """Merged [lo, hi) of the sized FUNC symbols of path and its debug file."""
    spans = []
    for f in filter(None, [path, debug_file(path)]):
        out = subprocess.run(["readelf", "-sW", f], capture_output=True, text=True, check=True).stdout
        for m in map(SYM_RE.match, out.splitlines()):
            if m and m.group(3) not in ("UND", "ABS") and int(m.group(2), 0) > 0:
                a = int(m.group(1), 16)
                spans.append((a, a + int(m.group(2), 0)))
    merged = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged, len(spans)

def sample(ranges, n):
    """n addresses uniform over the bytes of ranges (fixed seed)."""
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

def timed(argv, infile, outfile):
    """(wall s, peak RSS KiB) of argv < infile > outfile; fails on non-zero exit."""
    rss = os.path.join(tmp, "rss")
    with open(infile) as i, open(outfile, "w") as o:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + argv, stdin=i, stdout=o,
                           stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
    if p.returncode != 0:
        fail(f"{' '.join(argv)} exits {p.returncode}: {p.stderr.strip()[-500:]}")
    return wall, int(open(rss).read().split()[-1])

def first_answer(argv, addr):
    """Seconds from start, one address on stdin, to the first output line."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(f"{addr:#x}\n".encode())
    p.stdin.close()
    line = p.stdout.readline()
    t = time.perf_counter() - t0
    p.stdout.read()
    p.wait()
    if not line:
        fail(f"{' '.join(argv)}: no answer for {addr:#x}")
    return t

def blocks(path):
    b = open(path).read().split("\n\n")
    if b and b[-1].strip() == "":
        b.pop()
    return b

summary = []
for tag, path in binaries:
    ranges, nsyms = function_ranges(path)
    addrs, covered = sample(ranges, naddrs)
    af = os.path.join(tmp, f"{tag}.addrs")
    with open(af, "w") as f:
        f.writelines(f"{a:#x}\n" for a in addrs)
    ef = os.path.join(tmp, f"{tag}.eu.addrs")
    with open(ef, "w") as f:
        f.writelines(f"{a:#x}\n" for a in addrs[:eu_n])
    tools = [
        ("addr2line -f -i", ["addr2line", "-f", "-i", "-e", path], af, naddrs),
        (f"eu-addr2line -f -i ({min(eu_n, naddrs):,} scaled)", ["eu-addr2line", "-f", "-i", "-e", path], ef, min(eu_n, naddrs)),
        (f"{LLVM} --inlining", [LLVM, "--inlining", f"--obj={path}"], af, naddrs),
        ("vigil sym --bin --style llvm", [vigil, "sym", "--bin", path, "--style", "llvm"], af, naddrs),
    ]
    print(f"\n{tag}: {path}\n  {nsyms:,} function symbols covering {covered / 1e6:.1f} MB,"
          f" {naddrs:,} addresses, seed {SEED}")
    rows = []
    for label, argv, infile, n in tools:
        outfile = os.path.join(tmp, f"{tag}.{len(rows)}.out")
        walls, rsss = [], []
        # eu-addr2line is slow enough (~90/s on the generated binary) that
        # one run is both enough and all the time there is.
        for _ in range(1 if n != naddrs else runs):
            w, r = timed(argv, infile, outfile)
            walls.append(w)
            rsss.append(r)
        lat = statistics.median(first_answer(argv, addrs[0]) for _ in range(5))
        wall = statistics.median(walls)
        rows.append({"label": label, "wall": wall, "rate": n / wall, "rss": max(rsss) / 1024,
                     "lat": lat, "out": outfile, "n": n, "scaled": n != naddrs})
    w = max(len(r["label"]) for r in rows)
    print(f"  {'tool':<{w}}  {'wall s':>8}  {'addr/s':>10}  {'peak MiB':>8}  {'first ms':>8}")
    for r in rows:
        wall = r["wall"] * naddrs / r["n"]
        print(f"  {r['label']:<{w}}  {wall:8.3f}{'*' if r['scaled'] else ' '} {r['rate']:10,.0f}"
              f"  {r['rss']:8.1f}  {r['lat'] * 1e3:8.1f}")
    if any(r["scaled"] for r in rows):
        print(f"  * wall time for {naddrs:,} addresses extrapolated from {eu_n:,}")

    vg, ll = rows[3], rows[2]
    vb, lb = blocks(vg["out"]), blocks(ll["out"])
    if len(vb) != naddrs:
        fail(f"{tag}: vigil printed {len(vb)} answer blocks for {naddrs} addresses")
    if len(lb) != naddrs:
        fail(f"{tag}: {LLVM} printed {len(lb)} answer blocks for {naddrs} addresses")
    diff = [i for i in range(naddrs) if vb[i] != lb[i]]
    same = naddrs - len(diff)
    # eu-addr2line ran on fewer addresses: its memory is not comparable.
    others = [r for r in rows[:3] if not r["scaled"]]
    fastest = max(rows[:3], key=lambda r: r["rate"])
    leanest = min(others, key=lambda r: r["rss"])
    ratio = vg["rate"] / fastest["rate"]
    print(f"  vigil vs fastest other ({fastest['label']}): {ratio:.2f}x the throughput,"
          f" {vg['rss'] / fastest['rss']:.2f}x the memory, {vg['lat'] / fastest['lat']:.2f}x the first-answer time")
    print(f"  identical answer blocks, vigil vs {LLVM}: {same:,}/{naddrs:,} = {100.0 * same / naddrs:.3f}%")
    # The usual difference: the outermost frame's name, which llvm-symbolizer
    # takes from the binary's own symbol table (the last, in table order, of
    # the largest symbols at that address) and vigil from DWARF.
    def only_outer_name(v, l):
        v, l = v.split("\n"), l.split("\n")
        return len(v) == len(l) >= 2 and v[:-2] == l[:-2] and v[-1] == l[-1]
    outer = sum(only_outer_name(vb[i], lb[i]) for i in diff)
    if diff:
        print(f"    of the {len(diff):,} that differ, {outer:,} differ only in the outermost frame's function name")
    for i in diff[:5]:
        print(f"    {addrs[i]:#x}:\n      vigil: {vb[i].strip().replace(chr(10), ' | ')}"
              f"\n      llvm:  {lb[i].strip().replace(chr(10), ' | ')}")
    summary.append((tag, ratio, vg, leanest, same))

print()
for tag, ratio, vg, leanest, same in summary:
    print(f"goal {tag}: >= 5x the fastest other tool: {'met' if ratio >= 5 else 'MISSED'} ({ratio:.2f}x)")
    print(f"goal {tag}: >= 500,000 addresses/s: {'met' if vg['rate'] >= 500000 else 'MISSED'} ({vg['rate']:,.0f}/s)")
    print(f"goal {tag}: identical answers: {'met' if same == naddrs else 'MISSED'} ({naddrs - same:,} blocks differ)")
    print(f"goal {tag}: peak memory <= the leanest other ({leanest['label']}, {leanest['rss']:.1f} MiB):"
          f" {'met' if vg['rss'] <= leanest['rss'] else 'MISSED'} ({vg['rss']:.1f} MiB)")
PY
