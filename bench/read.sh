#!/usr/bin/env bash
# bench/read.sh: how fast does `vigil read --raw` move bytes out of a live process?
#
#   bench/read.sh                 VIGIL=path/to/vigil  (default: build/vigil)
#                                 SIZE_MIB=1024  RUNS=5  WARMUP=1
#
# Starts bench/out/big_buffer (1 GiB of anonymous memory, every page filled with
# a pattern), then, in one run:
#   1. proves both readers return the same bytes: sha256 of
#        dd if=/proc/PID/mem ... | sha256sum   and   vigil read ... --raw | sha256sum
#   2. times, with the same repetitions:
#        dd if=/proc/PID/mem bs=1M iflag=skip_bytes,count_bytes skip=ADDR count=1G of=/dev/null
#        vigil read PID 0xADDR 1G --raw > /dev/null
#   3. measures references: bench/out/memcpy_bw (memcpy from a 1 GiB out-of-cache
#      source into a 1 MiB buffer: the ceiling for any copy out of another
#      process) and dd if=/dev/zero of=/dev/null bs=1M (read(2) syscall ceiling).
# Prints GB/s (1e9 bytes/s) for each, vigil vs dd, and vigil as a fraction of
# memory (memcpy) bandwidth. Uses hyperfine when installed, else a python3 loop.
set -euo pipefail

bench_name=read.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mib=${SIZE_MIB:-1024}
runs=${RUNS:-5}
warmup=${WARMUP:-1}
[[ $mib =~ ^[1-9][0-9]*$ ]] || die "SIZE_MIB must be a positive integer"

compile_target big_buffer
compile_target memcpy_bw
start_target big_buffer 30 "$mib"
read -r _ addr size <"$tmp/target.out"
(( mib % 1024 == 0 )) && len="$((mib / 1024))G" || len="${mib}M"

dd_cmd="dd if=/proc/$pid/mem bs=1M iflag=skip_bytes,count_bytes skip=$((16#$addr)) count=$size of=/dev/null status=none"
vigil_cmd="'$vigil' read $pid 0x$addr $len --raw > /dev/null"

# ---- correctness gate: same bytes, full length, exit 0 ----------------------
hashlen() {   # stdin -> "SHA256 LENGTH"
    python3 -c 'import hashlib, sys
h = hashlib.sha256(); n = 0
for b in iter(lambda: sys.stdin.buffer.read(1 << 20), b""):
    h.update(b); n += len(b)
print(h.hexdigest(), n)'
}
dd if="/proc/$pid/mem" bs=1M iflag=skip_bytes,count_bytes skip=$((16#$addr)) count="$size" status=none \
    | hashlen >"$tmp/dd.sum"
rc=0
"$vigil" read "$pid" "0x$addr" "$len" --raw 2>"$tmp/vigil.err" | hashlen >"$tmp/vigil.sum" || rc=$?
if (( rc != 0 )); then
    cat "$tmp/vigil.err" >&2
    die "vigil read $pid 0x$addr $len --raw failed (pipeline status $rc)"
fi
read -r dd_sha dd_len <"$tmp/dd.sum"
read -r vg_sha vg_len <"$tmp/vigil.sum"
(( dd_len == size )) || die "dd returned $dd_len bytes, expected $size"
(( vg_len == size )) || die "vigil read --raw returned $vg_len bytes, expected $size"
[[ $dd_sha == "$vg_sha" ]] || die "vigil and dd returned different bytes: sha256 ${vg_sha:0:16}… vs ${dd_sha:0:16}…"
same="sha256 identical (${dd_sha:0:16}…), $size bytes each"

# ---- timing -----------------------------------------------------------------
labels=("dd /proc/PID/mem bs=1M" "vigil read --raw" "dd /dev/zero bs=1M (4 GiB)")
cmds=("$dd_cmd" "$vigil_cmd" "dd if=/dev/zero of=/dev/null bs=1M count=4096 status=none")
bytes=("$size" "$size" "$((4096 << 20))")

time_commands 0
"$out/memcpy_bw" "$mib" 1024 5 >"$tmp/memcpy.out"

# ---- report -----------------------------------------------------------------
echo
echo "vigil read benchmark: $size bytes at 0x$addr in target (pid $pid), $runs runs each after $warmup warm-up, $tool"
print_system
echo "bytes: $same"
echo
python3 - "$tmp/results.json" "$tmp/memcpy.out" "${bytes[@]}" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
mc = dict(l.split() for l in open(sys.argv[2]) if l.strip())
nbytes = [int(x) for x in sys.argv[3:]]
w = max(max(len(r["command"]) for r in res), len("memcpy 1 GiB -> 1 MiB buffer"))
print(f"{'what':<{w}}  {'median s':>8}  {'GB/s':>6}")
gbs = []
for r, n in zip(res, nbytes):
    g = n / r["median"] / 1e9
    gbs.append(g)
    print(f"{r['command']:<{w}}  {r['median']:8.3f}  {g:6.2f}")
mem = float(mc["memcpy_to_chunk"])
print(f"{'memcpy 1 GiB -> 1 MiB buffer':<{w}}  {'':>8}  {mem:6.2f}   (best of 5, bench/out/memcpy_bw)")
print(f"{'memcpy large -> large':<{w}}  {'':>8}  {float(mc['memcpy_large']):6.2f}")
print()
print(f"vigil read vs dd /proc/PID/mem:       {gbs[1] / gbs[0]:.2f}x the throughput")
print(f"vigil read as fraction of memcpy bw:  {gbs[1] / mem:.0%}")
print(f"dd /proc/PID/mem as fraction:         {gbs[0] / mem:.0%}")
PY
