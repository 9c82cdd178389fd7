#!/bin/bash
# pid_namespace: vigil running in a child PID namespace that still sees the
# host's /proc (unshare -p -f without --mount-proc) observes a host process:
# process_vm_readv does not know that pid there (ESRCH), /proc/PID/mem does.
# The read must succeed through proc_pid_mem, not report the target exited.
source "$(dirname "$0")/lib.sh"

# LeakSanitizer (in the ASan build) reads /proc/<its own pid>/task: with the
# host's /proc in a child pid namespace that names another process or none,
# and LSan aborts.  It cannot work here; ASan's other checks still do.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

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

# A decoy: in vigil's namespace the host pid number names another process
# (ns_last_pid steers the decoy onto it), a second copy of the same non-PIE
# binary, so the same address holds a different vg_nonce.  A pid syscall
# (process_vm_readv) would read the decoy without a word; vigil must read the
# target through /proc/PID/mem.
truth=$T/nonpie.truth
start_target tgt_globals_nonpie "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
((pid > 2)) || harness_error "pid $pid too small to steer a decoy onto"
LAST=decoy LAST_CMD="(child pid namespace, decoy at pid $pid) vigil read $pid vg_nonce 8 --json"
set +e
unshare -p -f bash -c '
	echo $(($2 - 1)) > /proc/sys/kernel/ns_last_pid || exit 99
	"$3" "$4" & d=$!
	[[ $d == "$2" ]] || { kill $d; echo "decoy got pid $d, not $2" >&2; exit 99; }
	for ((i = 0; i < 500; i++)); do grep -qx "state ready" "$4" 2>/dev/null && break; sleep 0.01; done
	"$1" read "$2" vg_nonce 8 --json; rc=$?
	kill $d
	exit $rc
' bash "$VIGIL" "$pid" "$TARGETS/tgt_globals_nonpie" "$T/decoy.truth" >"$T/decoy.out" 2>"$T/decoy.err" </dev/null
RC=$?
set -e
((RC != 99)) || harness_error "could not place the decoy: $(cat "$T/decoy.err")"
assert_rc 0 "read with a decoy at the same pid number"
vg_py "$truth" "$T/decoy.truth" <<'PY'
import os, sys
from vgcheck import *
truth, decoy = Truth(sys.argv[1]), Truth(sys.argv[2])
check(truth.syms["vg_nonce"]["hex"] != decoy.syms["vg_nonce"]["hex"], "target and decoy drew the same nonce")
eq("decoy: same address in both", truth.syms["vg_nonce"]["runtime"], decoy.syms["vg_nonce"]["runtime"])
doc = load_json(os.environ["T"] + "/decoy.out")
check_value_read(doc, truth.syms["vg_nonce"], "read with a decoy")
eq("read with a decoy: source", doc.get("source"), "proc_pid_mem")
done()
PY
echo "ok: decoy at the same pid number is not read"
