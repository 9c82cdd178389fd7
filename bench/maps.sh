#!/usr/bin/env bash
# bench/maps.sh: how long does `vigil maps` take on a process with 10,000 mappings?
#
#   bench/maps.sh                 VIGIL=path/to/vigil  (default: build/vigil)
#                                 MAPS_N=10000  RUNS=50  WARMUP=5
#
# Starts bench/out/many_maps (10,000 single-page anonymous VMAs of alternating
# protection, plus the usual ELF images), then times, in one run and with the
# same repetitions, side by side:
#   cat /proc/PID/maps                      the floor: the kernel formatting the text
#   vigil maps PID                          the default (table) path
#   vigil maps PID --json                   the JSON path
#   VIGIL_MAPS_SOURCE=query vigil maps PID  forcing the PROCMAP_QUERY walk (one ioctl per VMA)
# and prints medians in ms and ratios vs cat. Goal: vigil maps < 20 ms wall.
# Uses hyperfine when installed (apt-get install hyperfine), else (or with
# BENCH_NO_HYPERFINE=1) a python3 loop that also subtracts the shell spawn time.
set -euo pipefail

bench_name=maps.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n=${MAPS_N:-10000}
runs=${RUNS:-50}
warmup=${WARMUP:-5}
goal_ms=20

compile_target many_maps
start_target many_maps 10 "$n"

nmaps=$(wc -l <"/proc/$pid/maps")
(( nmaps >= n )) || die "target has only $nmaps mappings, wanted >= $n (vm.max_map_count?)"

# ---- correctness gate: every variant must succeed and see every mapping -------
check() {   # check LABEL MIN_LINES CMD...
    local label=$1 min=$2; shift 2
    local rc=0
    "$@" >"$tmp/check.out" 2>"$tmp/check.err" || rc=$?
    if (( rc != 0 )); then
        head -c 2000 "$tmp/check.out" >&2   # --json reports its error on stdout
        cat "$tmp/check.err" >&2
        die "'$label' failed with exit code $rc"
    fi
    local lines; lines=$(wc -l <"$tmp/check.out")
    (( lines >= min )) || die "'$label' printed $lines lines, expected >= $min (one per mapping)"
}
check "vigil maps PID" "$n" "$vigil" maps "$pid"
cp "$tmp/check.out" "$tmp/table.default"
check "VIGIL_MAPS_SOURCE=query vigil maps PID" "$n" env VIGIL_MAPS_SOURCE=query "$vigil" maps "$pid"
cp "$tmp/check.out" "$tmp/table.query"
check "vigil maps PID --json" 1 "$vigil" maps "$pid" --json
python3 - "$tmp/check.out" "$n" <<'PY' || die "'vigil maps PID --json' output is not valid JSON or lacks the mappings"
import json, sys
doc = json.load(open(sys.argv[1]))
def longest_list(o):
    best = 0
    if isinstance(o, list):
        best = len(o)
        for x in o: best = max(best, longest_list(x))
    elif isinstance(o, dict):
        for x in o.values(): best = max(best, longest_list(x))
    return best
n = longest_list(doc)
if n < int(sys.argv[2]):
    sys.exit(f"longest array in the JSON has {n} entries")
PY
# The header names the source ("maps via procmap_query" / "via text"); the rest must match.
sed -i "s/(maps via [a-z_+]*)//" "$tmp/table.default" "$tmp/table.query"
if ! cmp -s "$tmp/table.default" "$tmp/table.query"; then
    echo "maps.sh: WARNING: default and VIGIL_MAPS_SOURCE=query outputs differ:" >&2
    diff "$tmp/table.default" "$tmp/table.query" | head -n 10 >&2 || true
fi

# ---- timing -------------------------------------------------------------------
labels=("cat /proc/PID/maps" "vigil maps PID" "vigil maps PID --json" "VIGIL_MAPS_SOURCE=query vigil maps PID")
cmds=("cat /proc/$pid/maps > /dev/null"
      "'$vigil' maps $pid > /dev/null"
      "'$vigil' maps $pid --json > /dev/null"
      "VIGIL_MAPS_SOURCE=query '$vigil' maps $pid > /dev/null")

time_commands 1

# ---- report -------------------------------------------------------------------
echo
echo "vigil maps benchmark: $nmaps mappings in target (pid $pid), $runs runs each after $warmup warm-up, $tool"
print_system
echo
python3 - "$tmp/results.json" "$goal_ms" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
goal = float(sys.argv[2])
base = res[0]["median"]
w = max(len(r["command"]) for r in res)
print(f"{'command':<{w}}  {'median ms':>9}  {'min ms':>7}  {'max ms':>7}  {'vs cat':>7}")
for r in res:
    print(f"{r['command']:<{w}}  {r['median']*1e3:9.2f}  {r['min']*1e3:7.2f}  {r['max']*1e3:7.2f}  {r['median']/base:6.2f}x")
print()
for r in res[1:]:
    ms = r["median"] * 1e3
    print(f"goal {r['command']} < {goal:g} ms wall: {'met' if ms < goal else 'MISSED'} ({ms:.2f} ms)")
PY
