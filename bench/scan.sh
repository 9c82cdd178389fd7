#!/usr/bin/env bash
# bench/scan.sh: `vigil scan` on 1 GiB of heap, against scanmem and the raw
# copy rate out of another process.
#
#   bench/scan.sh          VIGIL=path/to/vigil (default: build/vigil)
#                          SIZE_MIB=1024  MANY=1000000  RUNS=3  SCANMEM_RUNS=1
#
# Starts bench/out/scan_heap (targets/scan_heap.c: a malloc'd block of
# SIZE_MIB filled with a pattern, the i32 0x5eed1234 planted at 5 places, the
# i32 0x6d616e79 at MANY aligned places; it counts both itself), then, in one
# run:
#   1. checks the answers: vigil's first scan finds in the block exactly the
#      places the target counted (both values, any offset and --aligned), and
#      scanmem (int32, region_scan_level 3) as many;
#   2. times (median of RUNS; peak RSS by /usr/bin/time -f %M, max of runs):
#      - vigil first scan, i32 at every offset and --aligned   (GB/s: bytes
#        scanned from vigil's JSON / wall time)
#      - scanmem first scan, same value, same type (SCANMEM_RUNS runs)
#      - vigil first scan of the MANY value with --save (MANY matches written)
#      - vigil --from that set --eq (a narrowing that re-reads MANY addresses)
#      - vigil --snapshot of the writable memory, and --from it --changed
#      - bench/out/pvr_copy: process_vm_readv of the block into a 1 MiB
#        buffer, nothing else (the ceiling for any reader)
# Prints a table and the ratios (vigil vs scanmem, vigil vs the raw copy).
set -euo pipefail

bench_name=scan.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mib=${SIZE_MIB:-1024}
many=${MANY:-1000000}
runs=${RUNS:-3}
sm_runs=${SCANMEM_RUNS:-1}
[[ $mib =~ ^[1-9][0-9]*$ ]] || die "SIZE_MIB must be a positive integer"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is required (apt-get install time)"
scanmem=$(command -v scanmem || true)
[[ -n $scanmem ]] || echo "$bench_name: scanmem not installed: vigil only" >&2

compile_target scan_heap
compile_target pvr_copy
start_target scan_heap 120 "$mib" "$many"
read -r _ addr size v_any v_al m_any m_al <"$tmp/target.out"
value=1592594996         # 0x5eed1234
manyvalue=1835101817     # 0x6d616e79

echo "vigil scan benchmark: ${mib} MiB heap in target (pid $pid), $runs runs each (scanmem $sm_runs), peak RSS by /usr/bin/time"
print_system
[[ -z $scanmem ]] || echo "scanmem: $("$scanmem" --version 2>&1 | head -n1)"
echo
python3 - "$tmp" "$vigil" "${scanmem:-}" "$pid" "$addr" "$size" "$v_any" "$v_al" "$m_any" "$m_al" \
    "$value" "$manyvalue" "$runs" "$sm_runs" "$out/pvr_copy" "$mib" "$many" <<'PY'
import json, os, re, shlex, statistics, subprocess, sys, time
(tmp, vigil, scanmem, pid, addr, size, v_any, v_al, m_any, m_al,
 value, manyvalue, runs, sm_runs, pvr, mib, many) = sys.argv[1:]
pid, size, runs, sm_runs = int(pid), int(size), int(runs), int(sm_runs)
lo = int(addr, 16); hi = lo + size
want = {("v", False): int(v_any), ("v", True): int(v_al), ("m", False): int(m_any), ("m", True): int(m_al)}

def die(msg):
    print("scan.sh: " + msg, file=sys.stderr)
    sys.exit(1)

def run(cmd, out=subprocess.DEVNULL, merge=False):
    """wall seconds, peak RSS KiB, stdout (+ stderr if merge) text"""
    rss = os.path.join(tmp, "rss")
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + cmd, stdout=out,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        die(f"{shlex.join(cmd)} failed (exit {p.returncode}): {p.stderr[-2000:]}")
    return wall, int(open(rss).read().split()[-1]), (p.stdout or "") + (p.stderr if merge else "")

def vjson(args):
    w, r, o = run([vigil, "scan", str(pid)] + args + ["--json"], subprocess.PIPE)
    return w, r, json.loads(o)

def in_block(doc):
    return sum(1 for m in doc["matches"] if lo <= int(m["address"], 16) < hi)

# ---- correctness gates -------------------------------------------------------
for key, val in (("v", value), ("m", manyvalue)):
    for aligned in (False, True):
        # The few matches of VALUE are listed and located; the MANY only counted
        # (nothing outside the block holds them: the counts must be equal).
        args = [val, "--type", "i32", "--max-list", "1000" if key == "v" else "0"] + (["--aligned"] if aligned else [])
        _, _, d = vjson(args)
        n = in_block(d) if key == "v" else d["matches_total"]
        if n != want[(key, aligned)] or (key == "v" and d["matches_listed"] != d["matches_total"]):
            die(f"vigil scan {val} --type i32{' --aligned' if aligned else ''}: {n} matches in the block "
                f"({d['matches_total']} in all), the target counted {want[(key, aligned)]}")
        if key == "v" and not aligned:
            v_total = d["matches_total"]
sm_cmd = None
if scanmem:
    sm_cmd = [scanmem, "-p", str(pid), "-c",
              f"option scan_data_type int32;option region_scan_level 3;reset;{value};exit"]
    _, _, o = run(sm_cmd, subprocess.PIPE, merge=True)
    m = re.findall(r"we currently have (\d+) matches", o)
    if not m:
        die("scanmem printed no match count: " + o[-500:])
    sm_total = int(m[-1])
    if sm_total != v_total:
        print(f"warning: scanmem found {sm_total} matches, vigil {v_total}", file=sys.stderr)

# ---- timing ------------------------------------------------------------------
res = {}
def timed(label, cmd, n=runs, bytes_=None):
    walls, rss = [], 0
    for _ in range(n):
        w, r, _ = run(cmd)
        walls.append(w); rss = max(rss, r)
    res[label] = {"median": statistics.median(walls), "min": min(walls), "rss": rss, "bytes": bytes_}
    return res[label]

sset = os.path.join(tmp, "many.set")
snap = os.path.join(tmp, "mem.snap")
# bytes actually scanned, from vigil's own report
_, _, d = vjson([value, "--type", "i32"])
scanned = d["bytes_scanned"]
self_gbs, self_s = d["gb_per_s"], d["seconds"]
vs = timed("vigil scan i32", [vigil, "scan", str(pid), value, "--type", "i32"], bytes_=scanned)
va = timed("vigil scan i32 --aligned", [vigil, "scan", str(pid), value, "--type", "i32", "--aligned"], bytes_=scanned)
if sm_cmd:
    sm = timed("scanmem int32 (level 3)", sm_cmd, n=sm_runs, bytes_=scanned)
fs = timed(f"vigil scan i32 --save ({int(m_any)} matches)",
           [vigil, "scan", str(pid), manyvalue, "--type", "i32", "--save", sset], bytes_=scanned)
nr = timed(f"vigil --from set --eq ({int(m_any)} matches)",
           [vigil, "scan", str(pid), "--from", sset, "--eq", manyvalue])
_, _, d = vjson(["--from", sset, "--eq", manyvalue, "--max-list", "0"])
if d["matches_total"] < int(m_any):
    die(f"narrowing kept {d['matches_total']} of {m_any}")
sn = timed("vigil --snapshot", [vigil, "scan", str(pid), "--snapshot", snap], bytes_=scanned)
snap_bytes = os.path.getsize(snap)
sc = timed("vigil --from snapshot --changed", [vigil, "scan", str(pid), "--from", snap, "--type", "i32",
                                               "--aligned", "--changed"], bytes_=scanned)
o = subprocess.run([pvr, str(pid), addr, str(size), "3"], capture_output=True, text=True, check=True).stdout
pvr_gbs = float(o.split()[1])

# ---- report ------------------------------------------------------------------
w = max(len(k) for k in res) + 2
print(f"{'what':<{w}} {'median s':>9} {'GB/s':>7} {'peak MiB':>9}")
for k, r in res.items():
    g = f"{r['bytes'] / r['median'] / 1e9:7.2f}" if r["bytes"] else f"{'':>7}"
    print(f"{k:<{w}} {r['median']:9.3f} {g} {r['rss'] / 1024:9.1f}")
print(f"{'process_vm_readv copy (pvr_copy)':<{w}} {'':>9} {pvr_gbs:7.2f}")
print()
print(f"bytes scanned: {scanned} (block {size}); matches of 0x5eed1234: {v_total}"
      + (f", scanmem {sm_total}" if sm_cmd else ""))
gbs = lambda r: r["bytes"] / r["median"] / 1e9
if sm_cmd:
    print(f"vigil first scan vs scanmem:          {sm['median'] / vs['median']:.1f}x faster, "
          f"{sm['rss'] / vs['rss']:.1f}x less memory ({vs['rss'] / 1024:.1f} vs {sm['rss'] / 1024:.1f} MiB)")
print(f"vigil's own report (scan loop only): {self_s:.3f} s, {self_gbs:.2f} GB/s = {self_gbs / pvr_gbs:.0%} of the raw copy rate; "
      f"the rest of the wall time is startup (maps, images)")
print(f"vigil first scan vs process_vm_readv: {gbs(vs) / pvr_gbs:.0%} of the raw copy rate ({gbs(vs):.2f} vs {pvr_gbs:.2f} GB/s); --aligned {gbs(va) / pvr_gbs:.0%}")
print(f"narrowing {int(m_any)} matches:            {nr['median']:.3f} s = {int(m_any) / nr['median'] / 1e6:.2f} M matches/s; "
      f"scan set {os.path.getsize(sset) / 2**20:.1f} MiB ({os.path.getsize(sset) / int(m_any):.2f} bytes/match)")
print(f"snapshot:                             {gbs(sn):.2f} GB/s = {gbs(sn) / pvr_gbs:.0%} of the raw copy rate; "
      f"{snap_bytes / 2**20:.0f} MiB on disk ({snap_bytes / scanned:.0%}); compare {gbs(sc):.2f} GB/s")
PY
