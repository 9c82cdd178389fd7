#!/bin/bash
# probe_concurrent: two vigil probes on the same instruction.  A is armed
# first; B (0.3 s) starts and ends while A is still armed (A has a
# 60 s --duration and is stopped by SIGTERM once B has exited).  The
# kernel keeps one int3 in the target's copy of the page while any uprobe
# there is open and does not hide it from process_vm_readv, so B's
# read-back sees A's int3: B must still say code_restored true (it said
# "the code differs from the file", exit 0 with code bytes NOT verified),
# with a code_note naming another uprobe still armed; A, closing last,
# finds the file's bytes and no note.
source "$(dirname "$0")/lib.sh"

[[ -e /sys/bus/event_source/devices/uprobe/type ]] || skip "no uprobe PMU in this kernel"
start_target tgt_scan "$T/truth" 8
wait_truth "$T/truth" ready
pid=$(truth_get "$T/truth" pid)
loc=libc.so.6:read

"$VIGIL" probe "$pid" "$loc" --duration 60000 --json >"$T/a.out" 2>"$T/a.err" </dev/null &
apid=$!
track_pid "$apid"
for ((i = 0; i < 500; i++)); do
	grep -q '^# probing' "$T/a.err" 2>/dev/null && break
	kill -0 "$apid" 2>/dev/null || break
	sleep 0.01
done
if ! grep -q '^# probing' "$T/a.err"; then
	set +e
	wait "$apid"
	arc=$?
	set -e
	[[ $arc == 3 ]] && skip "the kernel refuses uprobes here: $(head -n1 "$T/a.err")"
	fail "probe A did not arm (exit $arc): $(head -c 300 "$T/a.err")"
fi

vg b probe "$pid" "$loc" --duration 300 --json
assert_rc 0
kill -0 "$apid" 2>/dev/null || fail "probe A exited before B was done: $(head -c 300 "$T/a.err")"
kill -TERM "$apid"
set +e
wait "$apid"
arc=$?
set -e
[[ $arc == 0 ]] || fail "probe A (SIGTERM once B was done): exit $arc: $(head -c 300 "$T/a.err")"


vg_py "$T/a.out" "$T/b.out" <<'PY' || { show_last; fail "code read-back with two probes on one instruction (above)"; }
import sys
from vgcheck import *
a, b = load_json(sys.argv[1]), load_json(sys.argv[2])
ob, oa = b.get("observation") or {}, a.get("observation") or {}
eq("B (closed while A was armed): code_restored", True, ob.get("code_restored"))
check("another uprobe" in (ob.get("code_note") or ""),
      f"B: code_note {ob.get('code_note')!r} does not name another uprobe")
eq("A (closed last): code_restored", True, oa.get("code_restored"))
eq("A (closed last): code_note", None, oa.get("code_note"))
done()
PY
grep -q "code bytes verified (another uprobe's int3 still armed there)" "$T/b.err" ||
	{ show_last; fail "B's summary line does not say that another uprobe is armed"; }
echo "ok: B saw A's int3 and said so (code_restored true); A found the file's bytes"
