#!/bin/bash
# pid_namespace: vigil running in a child PID namespace that still sees the
# host's /proc (unshare -p -f without --mount-proc) observes a host process:
# process_vm_readv does not know that pid there (ESRCH), /proc/PID/mem does.
# The read must succeed through proc_pid_mem, not report the target exited.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_globals_pie "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
if ! unshare -p -f true 2>"$T/unshare.err"; then
	grep -q "Operation not permitted" "$T/unshare.err" &&
		skip "unshare -p refused: $(cat "$T/unshare.err")"
	harness_error "unshare -p failed: $(cat "$T/unshare.err")"
fi
LAST=ns LAST_CMD="(in a child pid namespace) vigil read $pid vg_magic 8 --json"
set +e
unshare -p -f "$VIGIL" read "$pid" vg_magic 8 --json >"$T/ns.out" 2>"$T/ns.err" </dev/null
RC=$?
set -e
assert_rc 0 "read from a child pid namespace"
vg_py "$truth" <<'PY'
import os, sys
from vgcheck import *
truth = Truth(sys.argv[1])
doc = load_json(os.environ["T"] + "/ns.out")
check_value_read(doc, truth.syms["vg_magic"], "pid namespace read")
eq("pid namespace read: source", doc.get("source"), "proc_pid_mem")
done()
PY
echo "ok"
