#!/usr/bin/env bash
# bench/probe.sh: `vigil probe` against bpftrace, perf probe + perf stat
# and ltrace -c on a target that calls one function in a tight loop: the
# target's calls/s under each tool (ratio to no tool and to bpftrace's
# count-only uprobe, cost per call) and whether each tool's count is exact.
#
#   bench/probe.sh             VIGIL=path/to/vigil  (default: build/vigil)
#                              SECS=5  ARM_WAIT=2  TOOLS=none,vigil,...
#
# Target tests/targets/tgt_probe.c in mode spin (cc -O2 -g into
# bench/out/): after its go (SIGUSR1) it calls probe_bench() for SECS
# seconds, counting, then stops calling and writes the count.  Each tool is
# attached before the go and stopped (SIGINT) after the target's last call,
# so every call the target counts happened under the tool: an exact tool
# counts exactly the target's number (bench/probe_bench.py; its docstring
# has the protocol).  Tools, one fresh target each:
#   no tool
#   vigil probe PID probe_bench --json                 (counting)
#   vigil probe PID probe_bench --latency --json
#   bpftrace -p PID -e 'uprobe:BIN:probe_bench { @ = count(); }'
#   perf probe -x BIN probe_bench; perf stat -x, -e probe_tgt_probe:probe_bench -p PID
#   ltrace -c -x probe_bench -e '-*' -p PID           (ptrace: stops the target per call)
# The perf probe is deleted on exit (trap).  Raw results:
# bench/out/probe_results.json.  Runtime: about 6 x (SECS + 3 s).
set -euo pipefail

bench_name=probe.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs=${SECS:-5}
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "SECS must be a positive integer"
tools=${TOOLS:-none,vigil,vigil_latency,bpftrace,perf,ltrace}
for tool in cc perf bpftrace ltrace; do
    command -v "$tool" >/dev/null || die "$tool is required (scripts/install-deps.sh; apt-get install $tool)"
done
"$vigil" probe --help >/dev/null 2>&1 || die "$vigil has no working 'probe' command"
(( $(id -u) == 0 )) || die "needs root (uprobes for bpftrace and perf probe)"

bin=$out/tgt_probe
cc -O2 -g -std=gnu17 -D_GNU_SOURCE -Wall -o "$bin" \
    "$root/tests/targets/tgt_probe.c" "$root/tests/targets/truth.c" -ldl -lpthread ||
    die "cannot compile tests/targets/tgt_probe.c"

# perf probe needs tracefs; its event is removed whatever happens.
if [[ ! -e /sys/kernel/tracing/uprobe_events ]]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || die "tracefs is not mounted at /sys/kernel/tracing (perf probe needs it)"
fi
event=probe_tgt_probe:probe_bench
perf probe -q -d "$event" >/dev/null 2>&1 || true
perf probe -q -x "$bin" probe_bench >"$tmp/perf_probe.log" 2>&1 ||
    die "perf probe -x $bin probe_bench failed: $(cat "$tmp/perf_probe.log")"
trap 'perf probe -q -d "$event" >/dev/null 2>&1 || true; cleanup' EXIT

echo
echo "vigil probe benchmark: tgt_probe spin, probe_bench() in a tight loop, ${secs} s per tool"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
print_system
echo "tools: $(perf version), $(bpftrace --version), $(ltrace -V | head -n1)"

python3 "$root/bench/probe_bench.py" --vigil "$vigil" --target "$bin" --tmp "$tmp" \
    --secs "$secs" --arm-wait "${ARM_WAIT:-2}" --perf-event "$event" --tools "$tools" \
    --results "$out/probe_results.json" ||
    die "the benchmark failed (see above)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
