#!/bin/bash
# leader_exited: the main thread called pthread_exit while the other threads
# run on.  The leader is then a zombie without a memory map, so
# /proc/PID/maps is empty and process_vm_readv(PID) fails; vigil must read
# the process through a live thread, say so, and give the same answers.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_threads "$truth" leader-exit
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
for ((i = 0; i < 300; i++)); do
	grep -q '^[0-9]* (.*) Z' "/proc/$pid/stat" && break
	sleep 0.01
done
grep -q '^[0-9]* (.*) Z' "/proc/$pid/stat" || harness_error "the leader of $pid did not exit"
[[ ! -s /proc/$pid/maps ]] || harness_error "/proc/$pid/maps is not empty: the premise of this test is gone"

for src in query text; do
	VIGIL_MAPS_SOURCE=$src vg maps_$src maps "$pid" --json
	assert_rc 0 "maps of a process whose main thread exited ($src)"
done
vg read read "$pid" vg_magic 8 --json
assert_rc 0 "read of a process whose main thread exited"
vg_py "$truth" <<'PY'
import os, sys
from vgcheck import *
truth = Truth(sys.argv[1])
T = os.environ["T"]
for src in ("query", "text"):
    doc = load_json(f"{T}/maps_{src}.out")
    check_header(doc, "maps", truth.pid, f"maps ({src})")
    warns = doc["process"]["warnings"]
    check(any("main thread" in w for w in warns), f"maps ({src}): no warning about the exited main thread: {warns!r}")
    check(doc["process"]["pid_alive_after"] is True, f"maps ({src}): the process is alive")
    check(len(doc["regions"]) > 5, f"maps ({src}): only {len(doc['regions'])} regions")
    main = [i for i in doc["images"] if i["is_main"]]
    eq(f"maps ({src}): main images", len(main), 1)
    want = [o["bias"] for o in truth.objs if o["kind"] == "main"][0]
    eq(f"maps ({src}): main bias", HexInt(int(main[0]["load_bias"], 16)), HexInt(want))
    eq(f"maps ({src}): main bias method", main[0]["bias_method"], "exact")
check_value_read(load_json(f"{T}/read.out"), truth.syms["vg_magic"], "read")
done()
PY
echo "ok"
