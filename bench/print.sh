#!/usr/bin/env bash
# bench/print.sh: how long does `vigil print` take to show a typed global of a
# live process, against the tools a user would otherwise pick?
#
#   bench/print.sh                VIGIL=path/to/vigil  (default: build/vigil)
#                                 RUNS=10  WARMUP=2  EXPR=g_config
#
# Starts the demo server (build/demo/demo_server: four busy threads, a
# struct config g_config), then, in one run:
#   1. checks the values agree: vigil print and gdb -batch -p PID -ex 'print
#      EXPR' for the fields that do not move (name, timeout_s);
#   2. times, with the same repetitions:
#        vigil print PID EXPR
#        gdb -nx -batch -p PID -ex 'print EXPR'       (stops the target meanwhile)
#        drgn (python3-drgn): Program.set_pid, load_default_debug_info,
#             print(prog[EXPR])                       (when installed)
# Prints median wall times and the ratios vigil/gdb and vigil/drgn.  gdb
# freezes the target for about its whole wall time (ptrace attach to
# detach); vigil and drgn never stop it.
set -euo pipefail

bench_name=print.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
runs=${RUNS:-10}
warmup=${WARMUP:-2}
expr=${EXPR:-g_config}
server=$(dirname "$vigil")/demo/demo_server
[[ -x $server ]] || die "$server not found (build first: make)"
command -v gdb >/dev/null || die "gdb is required for the comparison (apt-get install gdb)"

"$server" --quiet >"$tmp/target.out" 2>&1 &
pid=$!
sleep 0.3
kill -0 "$pid" 2>/dev/null || die "demo server died: $(cat "$tmp/target.out")"

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

# ---- correctness gate: the same values as gdb ---------------------------------
for f in name timeout_s; do
    v=$("$vigil" print "$pid" "g_config.$f") || die "vigil print g_config.$f failed"
    g=$(gdb -nx -batch -p "$pid" -ex "print g_config.$f" 2>/dev/null | grep -E '^\$1 = ' | sed 's/^\$1 = //')
    [[ "${v#"g_config.$f = "}" == "$g" ]] || die "g_config.$f: vigil '${v#"g_config.$f = "}' vs gdb '$g'"
done
same="g_config.name and g_config.timeout_s identical to gdb's print"

# ---- timing -------------------------------------------------------------------
labels=("vigil print" "gdb -batch print")
cmds=("'$vigil' print $pid '$expr' >/dev/null"
      "gdb -nx -batch -p $pid -ex 'print $expr' >/dev/null 2>&1")
if ((have_drgn)); then
    labels+=("drgn $drgn_version prog[...]")
    cmds+=("$drgn_py '$tmp/drgn_print.py' $pid '$expr' >/dev/null 2>&1")
fi
time_commands 1

# ---- report -------------------------------------------------------------------
echo
echo "vigil print benchmark: print $expr of the demo server (pid $pid), $runs runs each after $warmup warm-up, $tool"
print_system
echo "values: $same"
((have_drgn)) || echo "drgn: not installed (Debian: apt-get install python3-drgn); left out"
echo
python3 - "$tmp/results.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
w = max(len(r["command"]) for r in res)
print(f"{'what':<{w}}  {'median ms':>9}  {'min ms':>7}  {'max ms':>7}")
for r in res:
    print(f"{r['command']:<{w}}  {r['median'] * 1e3:9.1f}  {r['min'] * 1e3:7.1f}  {r['max'] * 1e3:7.1f}")
print()
v = res[0]["median"]
for r in res[1:]:
    print(f"vigil / {r['command']}: {v / r['median']:.2f}x the wall time")
print(f"gdb stops the target for about its wall time ({res[1]['median'] * 1e3:.0f} ms per print); vigil and drgn never stop it")
PY
