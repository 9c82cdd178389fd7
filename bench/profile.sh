#!/usr/bin/env bash
# bench/profile.sh: `vigil profile` against `perf record` on a CPU-bound
# target, in one run: how much does each slow the target, how much CPU
# does the profiler itself use, how many samples does it keep, how much
# data does it leave, and how long from the stop (SIGINT) to a finished
# report?
#
#   bench/profile.sh             VIGIL=path/to/vigil  (default: build/vigil)
#                                SECS=5  FREQ=999
#
# Target tests/targets/tgt_profile.c in mode split (cc -O2 -g
# -fno-omit-frame-pointer into bench/out/): one thread doing 7 units of
# work in hot_a for every 3 in hot_b, counting its units; SIGUSR2 makes it
# write the count with its wall and CPU clocks.  Each tool gets a fresh
# target (bench/profile_bench.py does the measuring):
#   vigil profile PID --freq 999 --unwind fp    --format folded -o F
#   perf record -F 999 -g -p PID -o F           (+ perf report --stdio,
#                                                 perf script | collapse)
#   vigil profile PID --freq 999 --unwind dwarf --format folded -o F
#   perf record -F 999 --call-graph dwarf -p PID -o F   (same)
# The raw results are kept in bench/out/profile_results.json.  Runtime:
# about 4 x (2 x SECS + 3 s) plus perf report's time (~1 minute).
set -euo pipefail

bench_name=profile.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs=${SECS:-5}
freq=${FREQ:-999}
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "SECS must be a positive integer"
[[ $freq =~ ^[1-9][0-9]*$ ]] || die "FREQ must be a positive integer"
for tool in perf cc; do
    command -v "$tool" >/dev/null || die "$tool is required (scripts/install-deps.sh)"
done
"$vigil" profile --help >/dev/null 2>&1 || die "$vigil has no working 'profile' command"
(( $(id -u) == 0 )) || echo "profile.sh: not root: perf_event_paranoid may refuse perf and vigil" >&2

cc -O2 -g -fno-omit-frame-pointer -std=gnu17 -D_GNU_SOURCE -Wall -o "$out/tgt_profile" \
    "$root/tests/targets/tgt_profile.c" "$root/tests/targets/truth.c" -ldl ||
    die "cannot compile tests/targets/tgt_profile.c"

echo
echo "vigil profile benchmark: tgt_profile split, $freq Hz, ${secs} s windows"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
print_system
echo "tools: $(perf version)"

python3 "$root/bench/profile_bench.py" --vigil "$vigil" --target "$out/tgt_profile" --tmp "$tmp" \
    --secs "$secs" --freq "$freq" --results "$out/profile_results.json" ||
    die "the benchmark failed (see above)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
