#!/usr/bin/env bash
# bench/print.sh: how long does `vigil print` take to show a typed global of a
# live process, against the tools a user would otherwise pick?
#
#   bench/print.sh                VIGIL=path/to/vigil  (default: build/vigil)
#                                 RUNS=10  WARMUP=2  EXPR=g_config
#                                 GEN_FUNCS="20000 60000"  GEN_TUS=100
#
# Targets, one after the other:
#   demo       the demo server (build/demo/demo_server: four busy threads, a
#              struct config g_config), printing EXPR;
#   gen-N      for each N of GEN_FUNCS, a C++ program of N functions and
#              methods (bench/targets/gen_cxx.py: GEN_TUS files, namespaces,
#              classes with virtual methods and static members), built
#              g++ -O1 -g (DWARF 5) into bench/out/gen_cxx_N once (rebuilt
#              when gen_cxx.py changes), printing g_config (app::Config:
#              nested struct, array, scoped enum, string, bool, double).
# For each target, in one run:
#   1. checks the values agree with gdb -batch -p PID -ex 'print EXPR':
#      demo: the fields that do not move (name, timeout_s); gen-N: the whole
#      value, byte for byte after "EXPR = " / "$1 = ";
#   2. times, with the same repetitions:
#        vigil print PID EXPR
#        gdb -nx -batch -p PID -ex 'print EXPR'       (stops the target meanwhile)
#        drgn (python3-drgn): Program.set_pid, load_default_debug_info,
#             print(prog[EXPR])                       (when installed)
# Prints median wall times and the ratios vigil/gdb and vigil/drgn, and how
# vigil's time moves from the smallest generated program to the largest:
# DWARF is read for what the expression touches, so it should not grow with
# the program.  gdb freezes the target for about its whole wall time
# (ptrace attach to detach); vigil and drgn never stop it.
# Runtime: ~2 min, plus compiling the generated programs the first time
# (several minutes on two cores).
set -euo pipefail

bench_name=print.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
runs=${RUNS:-10}
warmup=${WARMUP:-2}
expr=${EXPR:-g_config}
gen_funcs=${GEN_FUNCS:-20000 60000}
gen_tus=${GEN_TUS:-100}
server=$(dirname "$vigil")/demo/demo_server
[[ -x $server ]] || die "$server not found (build first: make)"
command -v gdb >/dev/null || die "gdb is required for the comparison (apt-get install gdb)"
command -v g++ >/dev/null || die "g++ is required to build the generated C++ program"

# drgn is a Python module of Debian's python3-drgn, for the system python.
drgn_py=/usr/bin/python3
cat >"$tmp/drgn_print.py" <<'PY'
import sys, drgn
prog = drgn.Program()
prog.set_pid(int(sys.argv[1]))
try:
    prog.load_default_debug_info()
except drgn.MissingDebugInfoError:
    pass          # libc without debug info: g_config is in the executable
print(prog[sys.argv[2]])
PY
have_drgn=0
if "$drgn_py" -c 'import drgn' 2>/dev/null; then
    have_drgn=1
    drgn_version=$("$drgn_py" -c 'import drgn; print(drgn.__version__)')
fi

# ---- the generated C++ programs (built once per gen_cxx.py version and N) ------
build_gen() {
    local n=$1 dir=$out/gen_cxx_$1 stamp t0
    stamp="$(sha256sum "$root/bench/targets/gen_cxx.py" | cut -d' ' -f1) $n $gen_tus"
    if [[ -x $dir/gen_cxx && "$(cat "$dir/stamp" 2>/dev/null)" == "$stamp" ]]; then
        return
    fi
    rm -rf "$dir"
    mkdir -p "$dir/src"
    python3 "$root/bench/targets/gen_cxx.py" "$dir/src" "$n" "$gen_tus"
    echo "print.sh: compiling $n generated C++ functions with g++ -O1 -g on $(nproc) cores (once)" >&2
    t0=$SECONDS
    ( cd "$dir/src" && ls gx_*.cc | xargs -P "$(nproc)" -I{} g++ -O1 -g -c {} -o "$dir/{}.o" ) \
        >"$dir/build.log" 2>&1 || { tail -n 30 "$dir/build.log" >&2; die "compiling gen_cxx_$n failed"; }
    g++ -o "$dir/gen_cxx" "$dir"/gx_*.o >>"$dir/build.log" 2>&1 ||
        { tail -n 30 "$dir/build.log" >&2; die "linking gen_cxx_$n failed"; }
    echo "print.sh: built in $((SECONDS - t0)) s" >&2
    echo "$stamp" >"$dir/stamp"
}
for n in $gen_funcs; do build_gen "$n"; done

# start PROGRAM ARGS...: the target in the background, pid in $pid.
start() {
    "$@" >"$tmp/target.out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        grep -q '^ready' "$tmp/target.out" 2>/dev/null && return
        [[ $1 == "$server" ]] && { sleep 0.3; return; }
        kill -0 "$pid" 2>/dev/null || die "$1 died: $(cat "$tmp/target.out")"
        sleep 0.05
    done
    die "$1 not ready after 5 s"
}

stop() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; }

gdb_value() {   # gdb_value PID EXPR: what gdb prints after "$1 = "
    gdb -nx -batch -p "$1" -ex "print $2" 2>/dev/null | grep -E '^\$1 = ' | sed 's/^\$1 = //'
}

# bench_one NAME EXPR: time the three tools on $pid, results in $tmp/NAME.json
bench_one() {
    local name=$1 e=$2
    labels=("vigil print" "gdb -batch print")
    cmds=("'$vigil' print $pid '$e' >/dev/null"
          "gdb -nx -batch -p $pid -ex 'print $e' >/dev/null 2>&1")
    if ((have_drgn)); then
        labels+=("drgn $drgn_version prog[...]")
        cmds+=("$drgn_py '$tmp/drgn_print.py' $pid '$e' >/dev/null 2>&1")
    fi
    time_commands 1
    mv "$tmp/results.json" "$tmp/$name.json"
}

names=()
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the demo server -----------------------------------------------------------
start "$server" --quiet
kill -0 "$pid" 2>/dev/null || die "demo server died: $(cat "$tmp/target.out")"
for f in name timeout_s; do
    v=$("$vigil" print "$pid" "g_config.$f") || die "vigil print g_config.$f failed"
    g=$(gdb_value "$pid" "g_config.$f")
    [[ "${v#"g_config.$f = "}" == "$g" ]] || die "demo g_config.$f: vigil '${v#"g_config.$f = "}' vs gdb '$g'"
done
echo "demo: g_config.name and g_config.timeout_s identical to gdb's print" >"$tmp/values"
bench_one demo "$expr"
names+=(demo)
stop

# ---- the generated programs ----------------------------------------------------
for n in $gen_funcs; do
    start "$out/gen_cxx_$n/gen_cxx"
    v=$("$vigil" print "$pid" g_config) || die "vigil print g_config on gen_cxx_$n failed"
    g=$(gdb_value "$pid" g_config)
    [[ "${v#"g_config = "}" == "$g" ]] ||
        die "gen_cxx_$n g_config differs: vigil '${v#"g_config = "}' vs gdb '$g'"
    funcs=$(nm -C "$out/gen_cxx_$n/gen_cxx" | grep -c ' [TtWw] ')
    dwarf=$(readelf -SW "$out/gen_cxx_$n/gen_cxx" | sed -n 's/.*\] \.debug_info *PROGBITS *[0-9a-f]* [0-9a-f]* \([0-9a-f]*\) .*/\1/p')
    echo "gen-$n: $funcs function symbols, .debug_info $((0x${dwarf:-0} / 1024)) KiB; the whole g_config identical to gdb's print: $g" >>"$tmp/values"
    bench_one "gen-$n" g_config
    names+=("gen-$n")
    stop
done

# ---- report --------------------------------------------------------------------
echo
echo "vigil print benchmark: $runs runs each after $warmup warm-up, $tool"
print_system
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$tmp/values"
((have_drgn)) || echo "drgn: not installed (Debian: apt-get install python3-drgn); left out"
echo
python3 - "$tmp" "${names[@]}" <<'PY'
import json, sys, os
tmp, names = sys.argv[1], sys.argv[2:]
vig = {}
for name in names:
    res = json.load(open(os.path.join(tmp, name + ".json")))["results"]
    print(f"target {name}")
    w = max(len(r["command"]) for r in res)
    print(f"  {'what':<{w}}  {'median ms':>9}  {'min ms':>7}  {'max ms':>7}")
    for r in res:
        print(f"  {r['command']:<{w}}  {r['median'] * 1e3:9.1f}  {r['min'] * 1e3:7.1f}  {r['max'] * 1e3:7.1f}")
    v = res[0]["median"]
    vig[name] = v
    for r in res[1:]:
        print(f"  vigil / {r['command']}: {v / r['median']:.3f}x the wall time")
    print(f"  gdb stops the target for about its wall time ({res[1]['median'] * 1e3:.0f} ms per print)")
    print()
gens = [n for n in names if n.startswith("gen-")]
if len(gens) >= 2:
    a, b = gens[0], gens[-1]
    print(f"vigil print on {b} / on {a}: {vig[b] / vig[a]:.2f}x the wall time "
          f"({vig[a] * 1e3:.1f} -> {vig[b] * 1e3:.1f} ms)")
PY
