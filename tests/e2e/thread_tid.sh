#!/bin/bash
# thread_tid: a thread id that is not the leader resolves to its process:
# JSON process.pid is the thread-group id and a warning names the TID.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_threads "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
tid=$(truth_get "$truth" tid)
[[ $tid != "$pid" ]] || harness_error "thread id equals the pid"

vg maps maps "$tid" --json
assert_rc 0
vg read read "$tid" vg_magic 8 --json
assert_rc 0
vg leader maps "$pid" --json
assert_rc 0
vg_py "$truth" "$tid" <<'PY'
import os, sys
from vgcheck import *
truth, tid = Truth(sys.argv[1]), sys.argv[2]
T = os.environ["T"]
for name, op in (("maps", "maps"), ("read", "read")):
    doc = load_json(f"{T}/{name}.out")
    check_header(doc, op, truth.pid, f"{op} TID")
    warns = doc.get("process", {}).get("warnings", [])
    check(any(tid in str(w) for w in warns), f"{op} TID {tid}: no warning names the thread id: {warns!r}")
check_value_read(load_json(f"{T}/read.out"), truth.syms["vg_magic"], "read TID")
leader = load_json(f"{T}/leader.out")
check_header(leader, "maps", truth.pid, "maps PID")
check(not any(str(truth.pid) in str(w) and "thread" in str(w).lower() for w in leader["process"]["warnings"]),
      f"maps of the leader warns about a thread: {leader['process']['warnings']!r}")
eq("images of TID and PID", leader.get("images"), load_json(f"{T}/maps.out").get("images"))
done()
PY
# The table form works on a TID too.
vg table maps "$tid"
assert_rc 0
echo "ok"
