#!/usr/bin/env bash
# bench/watch.sh: `vigil watch` against perf, bpftrace and gdb on a target
# that counts its own writes: how many writes does each tool catch, how much
# does it slow the writers, what does it cost per event?
#
#   bench/watch.sh               VIGIL=path/to/vigil  (default: build/vigil)
#                                MS=1000  RATES=1000,10000,100000,1000000,0
#
# Target bench/targets/watch_writer.c (cc -O2 into bench/out/): 4 threads
# write one 8-byte global, each at RATES[i]/4 per second (0: as fast as they
# can) for MS ms after the go, and count their own writes.  Every tool runs
# on a fresh target, one at a time, in this one run:
#   hardware data breakpoints, 2 of the 4 threads created after the attach:
#     vigil watch PID ADDR --len 8 --json
#     perf record -e mem:ADDR/8:w -p PID
#     bpftrace -p PID -e 'watchpoint:ADDR:8:w { @n = count(); }'
#     gdb -batch -p PID: watch *(long *)ADDR, commands: count, continue
#   emulation, all 4 threads created before the attach (uprobe emulation
#   covers only threads that exist then): a uprobe on the instruction after
#   the store (the label bw_after_store, where a data breakpoint traps):
#     VIGIL_WATCH_EMULATE_TRAPS=BIN:OFF vigil watch PID ADDR --len 8 --json
#     perf probe -x BIN --add vigilbench:after_store=ADDR (removed at the end),
#     perf record -e vigilbench:after_store -p PID
# Reported per run: captured / true writes, lost events (the tool's own
# count), writer throughput and its ratio to the same rate with no tool
# ("speed"), the watcher's CPU from the go to its exit and per event; and the
# ratios vigil / perf.  Where hardware breakpoints never fire (vigil watch's
# self-test exits 3, "do not fire"; some VMs) the script says so: the
# hardware rows are then what each tool measured (0 captured), and the
# emulation table is the meaningful comparison.  perf probe needs tracefs:
# mounted on /sys/kernel/tracing if it is not (root).  Raw results are kept
# in bench/out/watch_results.json.  Then the --follow blind window
# (bench/watch_rebind.py, target bench/targets/follow_writer.c): vigil's
# re-bind latency (median, p90, max) and the share of leaf writes caught at
# fixed delays after each pointer store (REBINDS=200 re-points).
# Runtime: ~2 minutes.
set -euo pipefail

bench_name=watch.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ms=${MS:-1000}
rates=${RATES:-1000,10000,100000,1000000,0}
[[ $ms =~ ^[1-9][0-9]*$ ]] || die "MS must be a positive integer"
[[ $rates =~ ^[0-9]+(,[0-9]+)*$ ]] || die "RATES must be a comma-separated list of integers"

for tool in perf readelf cc; do
    command -v "$tool" >/dev/null || die "$tool is required (scripts/install-deps.sh)"
done
hw_tools=vigil,perf
for tool in bpftrace gdb; do
    if command -v "$tool" >/dev/null; then
        hw_tools+=,$tool
    else
        echo "watch.sh: $tool not installed: no $tool row" >&2
    fi
done
"$vigil" watch --help >/dev/null 2>&1 || die "$vigil has no working 'watch' command"
(( $(id -u) == 0 )) || echo "watch.sh: not root: perf, bpftrace and perf probe may be refused" >&2

# perf probe (uprobes) needs tracefs.
if [[ ! -e /sys/kernel/tracing/uprobe_events && ! -e /sys/kernel/debug/tracing/uprobe_events ]]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
        echo "watch.sh: tracefs not mounted and mount failed: no perf row in the emulation table" >&2
fi

compile_target watch_writer

echo
echo "vigil watch benchmark: 4 writer threads, rates ${rates//,/ } writes/s (0: unlimited), $ms ms each"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
print_system
echo "tools: $(perf version); $(bpftrace --version 2>/dev/null || echo 'no bpftrace');" \
     "$(gdb --version 2>/dev/null | head -n1 || echo 'no gdb')"

python3 "$root/bench/watch_bench.py" --vigil "$vigil" --target "$out/watch_writer" --tmp "$tmp" \
    --ms "$ms" --rates "$rates" --hw-tools "$hw_tools" --results "$out/watch_results.json" ||
    die "the benchmark failed (see above)"

# The --follow blind window: re-bind latency and leaf writes caught at
# fixed delays after each pointer store (bench/watch_rebind.py).
compile_target follow_writer
echo
rc=0
python3 "$root/bench/watch_rebind.py" --vigil "$vigil" --target "$out/follow_writer" --tmp "$tmp" \
    --n "${REBINDS:-200}" || rc=$?
(( rc == 0 || rc == 3 )) || die "the re-bind measurement failed (see above)"
