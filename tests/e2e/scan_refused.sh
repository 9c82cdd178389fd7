#!/bin/bash
# scan_refused: a scan set (and a snapshot) belongs to the process it was
# taken from.  In a fresh PID namespace (unshare --pid --fork --mount-proc,
# where ns_last_pid steers the next PID) tgt_scan runs as PID P, vigil
# saves a scan set and a snapshot of it (and narrows them once: exit 0);
# the process is killed and a second tgt_scan gets the same PID P; then
# --from the set and --from the snapshot are refused: exit 4, one stderr
# line saying the process changed (and the JSON error, exit_code 4).
source "$(dirname "$0")/lib.sh"

if ! unshare --pid --fork --mount-proc true 2>"$T/unshare.err"; then
	grep -qi "operation not permitted" "$T/unshare.err" &&
		skip "unshare --pid --mount-proc refused: $(cat "$T/unshare.err")"
	harness_error "unshare --pid --fork --mount-proc failed: $(cat "$T/unshare.err")"
fi

# Runs as PID 1 of the new namespace.  Exit 99: the harness could not set
# the scene up (reason on stderr); otherwise what it writes in $T.
cat >"$T/inner.sh" <<'EOF'
set -u
vigil=$1 tgt=$2 T=$3
err() { echo "inner: $*" >&2; exit 99; }
wait_state() {
	for ((i = 0; i < 500; i++)); do
		grep -qx "state $2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	err "no 'state $2' in $1"
}
"$tgt" "$T/t1" 8 </dev/null & p1=$!
wait_state "$T/t1" ready
base=$(grep '^counter_base ' "$T/t1" | cut -d' ' -f2)
"$vigil" scan "$p1" "$base" --type i32 --save "$T/p1.set" >"$T/save.out" 2>"$T/save.err"
echo $? >"$T/save.rc"
"$vigil" scan "$p1" --snapshot "$T/p1.snap" --regions tgt_scan >"$T/snap.out" 2>"$T/snap.err"
echo $? >"$T/snap.rc"
# Control: the same process narrows both.
"$vigil" scan "$p1" --from "$T/p1.set" --unchanged >"$T/same.out" 2>"$T/same.err"
echo $? >"$T/same.rc"
"$vigil" scan "$p1" --from "$T/p1.snap" --type u32 --unchanged --max-list 1 >"$T/samesnap.out" 2>"$T/samesnap.err"
echo $? >"$T/samesnap.rc"
kill -KILL "$p1"
wait "$p1" 2>/dev/null
# Start times are in clock ticks (10 ms): let at least two pass.
sleep 0.05
echo $((p1 - 1)) >/proc/sys/kernel/ns_last_pid || err "cannot write ns_last_pid"
"$tgt" "$T/t2" 8 </dev/null & p2=$!
[[ $p2 == "$p1" ]] || { kill -KILL "$p2"; err "the second target got pid $p2, not $p1"; }
wait_state "$T/t2" ready
echo "$p1" >"$T/pid"
"$vigil" scan "$p1" --from "$T/p1.set" --unchanged >"$T/refused.out" 2>"$T/refused.err"
echo $? >"$T/refused.rc"
"$vigil" scan "$p1" --from "$T/p1.set" --unchanged --json >"$T/refused_json.out" 2>"$T/refused_json.err"
echo $? >"$T/refused_json.rc"
"$vigil" scan "$p1" --from "$T/p1.snap" --type u32 --changed >"$T/refsnap.out" 2>"$T/refsnap.err"
echo $? >"$T/refsnap.rc"
kill -KILL "$p2"
exit 0
EOF

set +e
unshare --pid --fork --mount-proc bash "$T/inner.sh" "$VIGIL" "$TARGETS/tgt_scan" "$T" >"$T/inner.out" 2>"$T/inner.err" </dev/null
irc=$?
set -e
((irc != 99)) || harness_error "$(cat "$T/inner.err")"
((irc == 0)) || fail "the namespace script failed (exit $irc): $(cat "$T/inner.err")"
pid=$(cat "$T/pid")

# result NAME CMD  - load the inner run NAME into $RC, $LAST, $LAST_CMD.
result() { LAST=$1 LAST_CMD="(pid namespace) vigil $2"; RC=$(cat "$T/$1.rc"); }

result save "scan $pid BASE --type i32 --save p1.set"
assert_rc 0
result snap "scan $pid --snapshot p1.snap --regions tgt_scan"
assert_rc 0
result same "scan $pid --from p1.set --unchanged (same process)"
assert_rc 0
grep -qw g_counter "$T/same.out" ||
	{ show_last; fail "$LAST_CMD: the narrowing on the same process does not list g_counter"; }
result samesnap "scan $pid --from p1.snap --type u32 --unchanged (same process)"
assert_rc 0
echo "ok: pid $pid: the set and the snapshot narrow on their own process"

for name in refused refsnap; do
	result "$name" "scan $pid --from $([[ $name == refused ]] && echo "p1.set --unchanged" || echo "p1.snap --type u32 --changed") (pid $pid reused)"
	assert_rc 4
	assert_one_error_line
	grep -qiE "changed|different process|earlier process" "$T/$name.err" ||
		{ show_last; fail "$LAST_CMD: the error does not say the process changed"; }
	[[ ! -s $T/$name.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the refusal"; }
done
result refused_json "scan $pid --from p1.set --unchanged --json (pid $pid reused)"
assert_rc 4
vg_py "$T/refused_json.out" <<'PY'
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
check_error_doc(doc, 4, "refused --json")
done()
PY
echo "ok: pid $pid reused by another process: scan set and snapshot refused (exit 4)"
