#!/bin/bash
# scan_unmapped: regions unmapped between vigil's reading of the maps and
# its reading of memory are skipped and counted, never fatal.  tgt_scan maps
# 4 separate 256 KiB regions and a fifth that stays, each holding
# UNMAP_VALUE at offset 100, and unmaps the 4 on SIGHUP.  VIGIL_SCAN_SYNC
# makes vigil stop after the maps (PATH.ready) until PATH.go: the test
# sends SIGHUP in between.  The scan exits 0 with regions_skipped 4,
# bytes_skipped 1 MiB and exactly the value in the region that stayed.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_scan "$truth" 8
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
v=$(truth_get "$truth" unmap_value)

check_json() {  # check_json NAME PYTHON-EXPECTATIONS (d: doc, t: truth)
	vg_py "$truth" "$T/$1.out" "$2" "$LAST_CMD" "$pid" <<'PY'
import sys
from scancheck import *
t = ScanTruth(sys.argv[1])
d = load_json(sys.argv[2])
code, w, pid = sys.argv[3], sys.argv[4], int(sys.argv[5])
check_scan(d, pid, "first", w)
eq(w + ": truth has 4 regions to unmap", 4, len(t.unmap))
exec(code)
done()
PY
}

# Control, before the unmap: all 5 copies, nothing skipped.
vg before scan "$pid" "$v" --type i32 --json
assert_rc 0
check_json before 'eq_set(w, [s + 100 for s, _ in t.unmap] + [t.keep[0] + 100], d)
eq(w + ": regions_skipped", 0, d.get("regions_skipped"))
eq(w + ": bytes_skipped", 0, d.get("bytes_skipped"))'
echo "ok: before: 5 copies, nothing skipped"

# The scan, held after its maps read while the target unmaps 4 regions.
LAST=mid LAST_CMD="VIGIL_SCAN_SYNC=$T/sync vigil scan $pid $v --type i32 --json"
VIGIL_SCAN_SYNC=$T/sync "$VIGIL" scan "$pid" "$v" --type i32 --json >"$T/mid.out" 2>"$T/mid.err" </dev/null &
vpid=$!
track_pid "$vpid"
for ((i = 0; i < 1000; i++)); do
	[[ -e $T/sync.ready ]] && break
	kill -0 "$vpid" 2>/dev/null || break
	sleep 0.01
done
if [[ ! -e $T/sync.ready ]]; then
	set +e; wait "$vpid"; RC=$?; set -e
	show_last
	fail "$LAST_CMD: no $T/sync.ready within 10 s (VIGIL_SCAN_SYNC not honoured?)"
fi
kill -HUP "$pid"
wait_truth "$truth" u0-s0-h1
touch "$T/sync.go"
set +e
wait "$vpid"
RC=$?
set -e
assert_rc 0
check_json mid '
eq_set(w, [t.keep[0] + 100], d)
eq(w + ": regions_skipped (the 4 unmapped)", 4, d.get("regions_skipped"))
eq(w + ": bytes_skipped", 4 * 256 * 1024, d.get("bytes_skipped"))
eq(w + ": interrupted", False, d.get("interrupted"))'
echo "ok: 4 regions unmapped mid-scan: skipped and counted, exit 0"

# After: the maps no longer have them; nothing skipped.
vg after scan "$pid" "$v" --type i32 --json
assert_rc 0
check_json after 'eq_set(w, [t.keep[0] + 100], d)
eq(w + ": regions_skipped", 0, d.get("regions_skipped"))'
echo "ok: after: one copy, nothing skipped"
