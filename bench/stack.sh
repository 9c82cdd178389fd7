#!/usr/bin/env bash
# bench/stack.sh: `vigil stack` against eu-stack and gdb on a process whose
# threads are blocked at a known depth (bench/targets/stack_threads.c):
# wall time of a full dump of every thread, how long each tool stops the
# target, and whether vigil's frames agree with eu-stack's.
#
#   bench/stack.sh             VIGIL=path/to/vigil  (default: build/vigil)
#                              THREADS=11,100,1000  RUNS=10
#
# Tools, each on the same target, one after the other, RUNS dumps each
# (fewer at 1,000 threads, gdb once there):
#   none                          the target alone (its own stall figure)
#   vigil stack PID               table: inline frames, file:line
#   vigil stack PID --json
#   eu-stack -p PID               function names only
#   eu-stack -p PID -i -s         with inline frames and file:line
#   gdb -batch -p PID -ex 'thread apply all bt'
# Ratios are to eu-stack -i -s (the like-for-like answer) and eu-stack.
#
# Stalls: a thread of the target (the gap meter) measures its longest late
# wake-up during each dump.  Two targets per thread count:
#   unpinned  target and tools where the scheduler puts them (the times
#             come from here): the stall is the stop plus the tool
#             competing with the meter for two cores
#   pinned    the meter pinned to one CPU at SCHED_FIFO, each tool run by
#             `taskset -c` on another: the stall is the stop alone (a
#             stopped thread runs at no priority), and an observer process
#             on the meter's CPU adds up the time it sees the meter in
#             state t or T ("stopped"), which no gap of the machine's own
#             (a virtual CPU's steal time) can fake
# eu-stack attaches to one thread at a time (a short stop each); gdb stops
# every thread for the whole dump; vigil stops none.
# Agreement (first thread count only): every frame eu-stack -i -s shows
# (address, file, line) appears in vigil's stack of the same thread, in
# order; vigil may show more (vDSO, inline frames eu-stack misses).
# Raw results: bench/out/stack_results.json.
set -euo pipefail

bench_name=stack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
for tool in cc eu-stack gdb; do
    command -v "$tool" >/dev/null || die "$tool is required (apt-get install elfutils gdb)"
done
# taskset (util-linux) and a second CPU give the pinned figures; without
# them stack_bench.py says so and reports the unpinned ones.
"$vigil" stack --help >/dev/null 2>&1 || die "$vigil has no working 'stack' command"
cc -O2 -g -std=gnu17 -Wall -pthread -o "$out/stack_threads" "$root/bench/targets/stack_threads.c" ||
    die "cannot compile bench/targets/stack_threads.c"

echo
echo "vigil stack benchmark: full dumps of a process with blocked threads"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
print_system
echo "tools: $(eu-stack --version | head -n1), $(gdb --version | head -n1)"

python3 "$root/bench/stack_bench.py" --vigil "$vigil" --target "$out/stack_threads" \
    --tmp "$tmp" --threads "${THREADS:-11,100,1000}" --runs "${RUNS:-10}" \
    --json-out "$out/stack_results.json"
