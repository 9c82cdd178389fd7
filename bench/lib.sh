# bench/lib.sh: what bench/maps.sh and bench/read.sh share.  Sourced, not run;
# the caller sets bench_name (for messages) first.
#
# Sets root, vigil (absolute), out (bench/out, created), tmp (removed on exit)
# and pid (the target, killed on exit); checks that vigil and python3 exist.
# Functions: die, compile_target, start_target, time_commands, print_system.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vigil=${VIGIL:-$root/build/vigil}
case $vigil in /*) ;; *) vigil=$PWD/$vigil ;; esac
out=$root/bench/out

die() { echo "$bench_name: $*" >&2; exit 1; }
[[ -x $vigil ]] || die "$vigil is not an executable (build it: ninja -C build, or set VIGIL=)"
command -v python3 >/dev/null || die "python3 is required"
mkdir -p "$out"

tmp=$(mktemp -d)
pid=
cleanup() {
    if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# compile_target NAME: bench/targets/NAME.c -> bench/out/NAME
compile_target() {
    cc -O2 -Wall -Wextra -o "$out/$1" "$root/bench/targets/$1.c"
}

# start_target NAME SECONDS ARGS...: run bench/out/NAME ARGS in the background
# (stdout in $tmp/target.out, pid in $pid) and wait up to SECONDS for "ready".
start_target() {
    local name=$1 secs=$2
    shift 2
    "$out/$name" "$@" >"$tmp/target.out" &
    pid=$!
    for _ in $(seq $((secs * 20))); do
        grep -q '^ready' "$tmp/target.out" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || die "$name died: $(cat "$tmp/target.out")"
        sleep 0.05
    done
    grep -q '^ready' "$tmp/target.out" || die "$name not ready after $secs s"
}

# time_commands SUBTRACT_SPAWN: time each of cmds[i] (named labels[i]) $runs
# times after $warmup untimed runs, into $tmp/results.json (hyperfine's
# format); sets tool.  hyperfine when installed (and BENCH_NO_HYPERFINE is
# unset), else a python3 loop, which subtracts the shell's spawn time as
# hyperfine does when SUBTRACT_SPAWN is 1.
time_commands() {
    if [[ -z ${BENCH_NO_HYPERFINE:-} ]] && command -v hyperfine >/dev/null; then
        tool="hyperfine $(hyperfine --version | awk '{print $2}')"
        local hargs=() i
        for i in "${!cmds[@]}"; do hargs+=(-n "${labels[$i]}" "${cmds[$i]}"); done
        hyperfine --style none --warmup "$warmup" --runs "$runs" \
            --export-json "$tmp/results.json" "${hargs[@]}" >"$tmp/hyperfine.log" 2>&1 \
            || { cat "$tmp/hyperfine.log" >&2; die "a benchmarked command failed"; }
        return
    fi
    tool="python3 loop (hyperfine not installed)"
    python3 - "$tmp/results.json" "$runs" "$warmup" "$1" "${labels[@]}" -- "${cmds[@]}" <<'PY' \
        || die "a benchmarked command failed"
import json, subprocess, sys, time, statistics
outp, runs, warm, subtract = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
rest = sys.argv[5:]; k = rest.index("--"); labels, cmds = rest[:k], rest[k + 1:]
def t(cmd):
    t0 = time.perf_counter_ns()
    subprocess.run(cmd, shell=True, check=True)
    return (time.perf_counter_ns() - t0) / 1e9
shell = statistics.median([t(":") for _ in range(runs)]) if subtract else 0.0
res = []
for label, cmd in zip(labels, cmds):
    for _ in range(warm): t(cmd)
    times = [max(0.0, t(cmd) - shell) for _ in range(runs)]
    res.append({"command": label, "median": statistics.median(times),
                "min": min(times), "max": max(times), "times": times})
json.dump({"results": res}, open(outp, "w"))
PY
}

# print_system: the machine and the vigil under test, for the report.
print_system() {
    echo "kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
    echo "vigil: $vigil ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
}
