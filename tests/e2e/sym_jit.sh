#!/bin/bash
# sym_jit: code in no ELF image, named in /tmp/perf-PID.map the way JITs
# name theirs (tgt_jit copies a loop into anonymous memory made
# executable).  vigil sym must name it from the map: jit_hot_loop+0x3 (the
# later of two lines covering it wins over jit_stale, a bad line between
# them is skipped), image [perf-PID.map], source perf-map, one frame, no
# file.  An address the map does not name yet stays unnamed; once the
# target appends its line, a new vigil names it, and so does a symbolizer
# that was already running (stdin mode, one address before and one after
# the append: the target appends on SIGUSR1, sent once that symbolizer has
# answered the first, so the order is the test's and not a race with a
# timer).  A map of another user is ignored.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_jit "$truth" usr1
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
map=$(truth_get "$truth" map)
trap 'rm -f "$map"; vg_cleanup' EXIT
read -r hot_start hot_loop <<<"$(truth_get "$truth" hot)"
read -r late_start late_loop <<<"$(truth_get "$truth" late)"

# One symbolizer across the append (the table, which answers each line at
# once): the late address first misses; the target appends once that
# answer is out; more than a second later (the re-read's rate limit) the
# same address is named.
mkfifo "$T/addrs"
LAST=running LAST_CMD="vigil sym $pid < (late address, append, late address)"
"$VIGIL" sym "$pid" <"$T/addrs" >"$T/running.out" 2>"$T/running.err" &
vpid=$!
track_pid "$vpid"
exec 3>"$T/addrs"
echo "$late_loop" >&3
for ((i = 0; i < 1000; i++)); do
	grep -q "^$late_loop  " "$T/running.out" && break
	kill -0 "$vpid" 2>/dev/null || break
	sleep 0.01
done
grep -q "^$late_loop  " "$T/running.out" || { show_last; fail "$LAST_CMD: no answer for the first address within 10 s"; }
kill -USR1 "$pid"
wait_truth "$truth" late
sleep 1.2
echo "$late_loop" >&3
exec 3>&-
set +e
wait "$vpid"
RC=$?
set -e
assert_rc 0
mapfile -t answers < <(grep "^$late_loop  " "$T/running.out")
assert_eq "running symbolizer: answers" 2 "${#answers[@]}"
assert_eq "late before the append" "$late_loop  ??  [none]" "${answers[0]}"
assert_eq "late after the append, same symbolizer" \
	"$late_loop  jit_late_loop+0x3  [perf-$pid.map]  [perf-map]" "${answers[1]}"
grep -q '^  #0 jit_late_loop$' "$T/running.out" || { show_last; fail "$LAST_CMD: no frame '#0 jit_late_loop'"; }

vg json sym "$pid" "$hot_loop" "$hot_start" "$late_loop" --json
assert_rc 0
vg table sym "$pid" "$hot_loop"
assert_rc 0

vg_py "$pid" "$hot_start" "$hot_loop" "$late_start" "$late_loop" <<'PY' || { show_last; fail "vigil sym of JIT code: see above"; }
import os, sys
from vgcheck import *
T = os.environ["T"]
pid = int(sys.argv[1])
hot_start, hot_loop, late_start, late_loop = (int(a, 16) for a in sys.argv[2:6])
label = f"[perf-{pid}.map]"

def jit(r, what, name, start, address):
    eq(f"{what} address", f"{address:#x}", r.get("address"))
    eq(f"{what} source", "perf-map", r.get("source"))
    eq(f"{what} image", label, r.get("image"))
    eq(f"{what} symbol", name, r.get("symbol"))
    eq(f"{what} symbol_address", f"{start:#x}", r.get("symbol_address"))
    eq(f"{what} symbol_size", "0x9", r.get("symbol_size"))
    eq(f"{what} offset", f"{address - start:#x}", r.get("offset"))
    eq(f"{what} frames", [name], [f.get("function") for f in r.get("frames") or []])
    eq(f"{what} file", None, r.get("file"))

doc = load_json(f"{T}/json.out")
check_header(doc, "symbolize", pid)
res = doc.get("results") or []
eq("results", 3, len(res))
if len(res) == 3:
    jit(res[0], "hot loop", "jit_hot_loop", hot_start, hot_loop)
    jit(res[1], "hot entry", "jit_hot_loop", hot_start, hot_start)
    jit(res[2], "late (appended before this run)", "jit_late_loop", late_start, late_loop)


table = open(f"{T}/table.out").read()
check(f"jit_hot_loop+0x3  {label}  [perf-map]" in table, f"table: {table!r}")
check("#0 jit_hot_loop" in table, f"table frames: {table!r}")
done()
PY

# A map the process's user did not write is not believed (anyone may
# create /tmp/perf-PID.map in a shared /tmp).
chown 65534 "$map"
vg foreign sym "$pid" "$hot_loop" --json
assert_rc 0
vg_py "$pid" <<'PY' || { show_last; fail "a foreign perf map was believed"; }
import os, sys
from vgcheck import *
doc = load_json(os.environ["T"] + "/foreign.out")
r = (doc.get("results") or [{}])[0]
eq("foreign map: symbol", None, r.get("symbol"))
eq("foreign map: source", "none", r.get("source"))
check(any("not to the process's user" in w for w in doc.get("warnings") or []),
      f"foreign map: warnings {doc.get('warnings')}")
done()
PY
echo "ok: JIT code named from $map (latest line wins, re-read as it grows, foreign map refused)"
