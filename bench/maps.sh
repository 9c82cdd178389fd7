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
#   VIGIL_MAPS_SOURCE=text vigil maps PID   forcing the /proc/PID/maps text parser
# and prints medians in ms and ratios vs cat. Goal: vigil maps < 20 ms wall.
# Uses hyperfine when installed (apt-get install hyperfine), else (or with
# BENCH_NO_HYPERFINE=1) a python3 loop that also subtracts the shell spawn time.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vigil=${VIGIL:-$root/build/vigil}
case $vigil in /*) ;; *) vigil=$PWD/$vigil ;; esac
n=${MAPS_N:-10000}
runs=${RUNS:-50}
warmup=${WARMUP:-5}
goal_ms=20
out=$root/bench/out

die() { echo "maps.sh: $*" >&2; exit 1; }
[[ -x $vigil ]] || die "$vigil is not an executable (build it: ninja -C build, or set VIGIL=)"
command -v python3 >/dev/null || die "python3 is required"

mkdir -p "$out"
cc -O2 -Wall -Wextra -o "$out/many_maps" "$root/bench/targets/many_maps.c"

tmp=$(mktemp -d)
pid=
cleanup() {
    if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$out/many_maps" "$n" >"$tmp/target.out" &
pid=$!
for _ in $(seq 200); do
    grep -q '^ready' "$tmp/target.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || die "many_maps died: $(cat "$tmp/target.out")"
    sleep 0.05
done
grep -q '^ready' "$tmp/target.out" || die "many_maps not ready after 10 s"

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
check "VIGIL_MAPS_SOURCE=text vigil maps PID" "$n" env VIGIL_MAPS_SOURCE=text "$vigil" maps "$pid"
cp "$tmp/check.out" "$tmp/table.text"
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
sed -i "s/(maps via [a-z_]*)//" "$tmp/table.default" "$tmp/table.text"
if ! cmp -s "$tmp/table.default" "$tmp/table.text"; then
    echo "maps.sh: WARNING: default and VIGIL_MAPS_SOURCE=text outputs differ:" >&2
    diff "$tmp/table.default" "$tmp/table.text" | head -n 10 >&2 || true
fi

# ---- timing -------------------------------------------------------------------
labels=("cat /proc/PID/maps" "vigil maps PID" "vigil maps PID --json" "VIGIL_MAPS_SOURCE=text vigil maps PID")
cmds=("cat /proc/$pid/maps > /dev/null"
      "'$vigil' maps $pid > /dev/null"
      "'$vigil' maps $pid --json > /dev/null"
      "VIGIL_MAPS_SOURCE=text '$vigil' maps $pid > /dev/null")

if [[ -z ${BENCH_NO_HYPERFINE:-} ]] && command -v hyperfine >/dev/null; then
    tool="hyperfine $(hyperfine --version | awk '{print $2}')"
    hargs=()
    for i in "${!cmds[@]}"; do hargs+=(-n "${labels[$i]}" "${cmds[$i]}"); done
    hyperfine --style none --warmup "$warmup" --runs "$runs" \
        --export-json "$tmp/results.json" "${hargs[@]}" >"$tmp/hyperfine.log" 2>&1 \
        || { cat "$tmp/hyperfine.log" >&2; die "a benchmarked command failed"; }
else
    tool="python3 loop (hyperfine not installed)"
    python3 - "$tmp/results.json" "$runs" "$warmup" "${labels[@]}" -- "${cmds[@]}" <<'PY' \
        || die "a benchmarked command failed"
import json, subprocess, sys, time, statistics
outp, runs, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rest = sys.argv[4:]; k = rest.index("--"); labels, cmds = rest[:k], rest[k + 1:]
def t(cmd):
    t0 = time.perf_counter_ns()
    subprocess.run(cmd, shell=True, check=True)
    return (time.perf_counter_ns() - t0) / 1e9
shell = statistics.median([t(":") for _ in range(runs)])  # subtract the sh spawn, as hyperfine does
res = []
for label, cmd in zip(labels, cmds):
    for _ in range(warm): t(cmd)
    times = [max(0.0, t(cmd) - shell) for _ in range(runs)]
    res.append({"command": label, "median": statistics.median(times),
                "min": min(times), "max": max(times), "times": times})
json.dump({"results": res}, open(outp, "w"))
PY
fi

# ---- report -------------------------------------------------------------------
echo
echo "vigil maps benchmark: $nmaps mappings in target (pid $pid), $runs runs each after $warmup warm-up, $tool"
echo "kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
echo "vigil: $vigil ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
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
