#!/bin/bash
# watch_enospc: running out of debug registers (ENOSPC) is reported as
# such.  A real tool, `perf record` with four write breakpoints on the
# target, holds all four debug registers (DR0-DR3) of its thread; then
# `vigil watch` of one more location exits 1 with one stderr line "vigil:
# error: no free hardware debug register for thread PID ..." naming
# DR0-DR3, and with --json an error document with errno 28 (ENOSPC).
# Without the holder the same command arms (exit 0, backend
# "perf_breakpoint"), and after it exited perf takes all four registers
# again (vigil left none behind).
#
# VIGIL_WATCH_NO_SELFTEST=1: where breakpoints never fire (a VM) vigil
# would refuse at its self-test (exit 3) before asking for a register;
# the kernel still accounts the slots, which is all this test needs, so it
# runs the same on every machine.  Skips only without perf, or when perf
# itself cannot open mem: events.
source "$(dirname "$0")/lib.sh"

command -v perf >/dev/null 2>&1 || skip "perf is not installed"

truth=$T/truth
start_target tgt_watch "$truth" single 1
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
cell=$(truth_sym "$truth" g_cell runtime)
more=$(truth_sym "$truth" g_more runtime)   # 8 u64s, 64-aligned, writable
export VIGIL_WATCH_NO_SELFTEST=1

# hold NAME  - perf record with 4 write breakpoints on g_more[0..3] of the
# target, in the background (HOLDER: perf's pid).  Its workload, a shell
# waiting for $T/NAME.release, sets how long it holds them.  Returns 0 once
# the workload runs: perf starts it (the exec of sh) only after every
# event is open, so the 4 registers are held from then on; 1 when perf
# exited first ($T/NAME.err says why).
hold() {
	local name=$1 i
	HOLD_NAME=$name
	perf record -q -o "$T/$name.data" \
		-e "mem:$(printf '0x%x' "$more"):w" \
		-e "mem:$(printf '0x%x' $((more + 8))):w" \
		-e "mem:$(printf '0x%x' $((more + 16))):w" \
		-e "mem:$(printf '0x%x' $((more + 24))):w" \
		-p "$pid" -- sh -c 'i=0; while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done' \
		sh "$T/$name.release" >"$T/$name.out" 2>"$T/$name.err" </dev/null &
	HOLDER=$!
	track_pid "$HOLDER"
	for ((i = 0; i < 1000; i++)); do
		if pgrep -P "$HOLDER" -x sh >/dev/null; then
			return 0
		fi
		kill -0 "$HOLDER" 2>/dev/null || return 1
		sleep 0.01
	done
	harness_error "perf record did not start its workload within 10 s: $(head -c 400 "$T/$name.err")"
}

# release  - end the holder's workload: perf then stops by itself and
# exits; its exit code in HOLDER_RC.
release() {
	pgrep -P "$HOLDER" -x sh >/dev/null || harness_error "perf's workload ended before its release"
	touch "$T/$HOLD_NAME.release"
	set +e
	wait "$HOLDER"
	HOLDER_RC=$?
	set -e
}

# refused NAME  - with the holder in place, vigil watch of g_cell is
# refused for ENOSPC, in text and in JSON.
refused() {
	local name=$1
	vg "$name" watch "$pid" "$cell" --len 4 --duration 300
	assert_rc 1 "$LAST_CMD with all 4 debug registers held by perf"
	assert_one_error_line
	grep -q "^vigil: error: no free hardware debug register for thread $pid " "$T/$name.err" ||
		{ show_last; fail "$LAST_CMD: the error is not 'no free hardware debug register for thread $pid ...'"; }
	grep -qF 'DR0-DR3' "$T/$name.err" || { show_last; fail "$LAST_CMD: the error does not name DR0-DR3"; }
	[[ ! -s $T/$name.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the error"; }

	vg "${name}_json" watch "$pid" "$cell" --len 4 --duration 300 --json
	assert_rc 1 "$LAST_CMD with all 4 debug registers held by perf"
	vg_py "$T/${name}_json.out" "$pid" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: bad error document"; }
import sys
from vgcheck import *
doc, pid, w = load_json(sys.argv[1]), sys.argv[2], sys.argv[3]
check_error_doc(doc, 1, w)
e = doc.get("error") or {}
eq(f"{w}: error.errno", 28, e.get("errno"))
m = e.get("message") or ""
check(m.startswith(f"no free hardware debug register for thread {pid} "),
      f"{w}: error.message {m!r} is not about a free debug register of thread {pid}")
check("DR0-DR3" in m, f"{w}: error.message {m!r} does not name DR0-DR3")
check("backend" not in doc, f"{w}: an error document with a backend")
done()
PY
	echo "ok: $name: exit 1, $(head -c 200 "$T/$name.err")"
}

# 1. perf holds the 4 registers: vigil is refused for ENOSPC.
if ! hold holder1; then
	wait "$HOLDER" || true
	skip "perf cannot open 4 mem: breakpoint events on pid $pid: $(head -c 400 "$T/holder1.err" | tr '\n' ' ')"
fi
refused held1
release
assert_eq "perf record (first holder) exit code" 0 "$HOLDER_RC"

# 2. No holder: the same command arms its breakpoint (nothing fires on a
# VM, but the kernel accepted it) and exits 0.
vg free watch "$pid" "$cell" --len 4 --duration 300 --json
assert_rc 0 "$LAST_CMD without a holder"
vg_py "$T/free.out" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: bad report"; }
import sys
from vgcheck import *
doc, w = load_json(sys.argv[1]), sys.argv[2]
check("error" not in doc, f"{w}: an error in the report: {doc.get('error')!r}")
eq(f"{w}: backend", "perf_breakpoint", doc.get("backend"))
eq(f"{w}: stop_reason", "duration", (doc.get("observation") or {}).get("stop_reason"))
eq(f"{w}: debug_registers_used", 1, (doc.get("capabilities") or {}).get("debug_registers_used"))
done()
PY
echo "ok: no holder: exit 0, backend perf_breakpoint"

# 3. vigil has exited: perf takes all 4 registers again (vigil left no
# breakpoint behind), and while it holds them vigil is refused again.
hold holder2 || {
	wait "$HOLDER" || true
	fail "after vigil exited, perf record cannot take 4 debug registers: $(head -c 400 "$T/holder2.err" | tr '\n' ' ')"
}
refused held2
release
assert_eq "perf record (second holder) exit code" 0 "$HOLDER_RC"
[[ ! -s $T/holder2.err ]] || fail "perf record (second holder) complained: $(head -c 400 "$T/holder2.err")"
echo "ok: after vigil exited, perf held all 4 debug registers again"
