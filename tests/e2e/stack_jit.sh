#!/bin/bash
# stack_jit: vigil stack names a thread spinning in JIT code from the
# process's /tmp/perf-PID.map, as sym does: tgt_jit's thread has frame #0
# in jit_hot_loop or jit_late_loop (its two loops, named in the map),
# image [perf-PID.map], pc inside the function's 9 bytes.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_jit "$truth" 0
wait_truth "$truth" late
pid=$(truth_get "$truth" pid)
map=$(truth_get "$truth" map)
trap 'rm -f "$map"; vg_cleanup' EXIT
read -r hot_start _ <<<"$(truth_get "$truth" hot)"
read -r late_start _ <<<"$(truth_get "$truth" late)"

vg json stack "$pid" --json
assert_rc 0
vg_py "$pid" "$hot_start" "$late_start" <<'PY' || { show_last; fail "vigil stack of JIT code: see above"; }
import os, sys
from vgcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
starts = {"jit_hot_loop": int(sys.argv[2], 16), "jit_late_loop": int(sys.argv[3], 16)}
doc = load_json(f"{T}/json.out")
th = [t for t in doc.get("threads") or [] if t.get("tid") == pid]
eq("threads with the pid", 1, len(th))
fr = (th[0].get("frames") or [{}])[0] if th else {}
fn = fr.get("function")
check(fn in starts, f"frame #0 function {fn!r}, expected one of {sorted(starts)} (frame {fr})")
eq("frame #0 image", f"[perf-{pid}.map]", fr.get("image"))
if fn in starts:
    pc = int(fr.get("pc") or "0", 16)
    check(starts[fn] <= pc < starts[fn] + 9, f"frame #0 pc {pc:#x} outside {fn} at {starts[fn]:#x}")
done()
PY
echo "ok: vigil stack names JIT code from the perf map"
