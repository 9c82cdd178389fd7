#!/bin/bash
# probe_ifunc: an IFUNC symbol names the implementation the process
# selected, never its resolver (issue 15 item 3).  tgt_procs ifunc N calls
# its own IFUNC procs_pick (resolver -> procs_pick_b, an IRELATIVE slot of
# the executable) and libc's strcmp (the executable's GLOB_DAT slot and
# libc's own IRELATIVE one) N times each after the go:
#   probe PID procs_pick       calls == N at procs_pick_b, ifunc object set
#   probe PID libc.so.6:strcmp calls == N at what dlsym(strcmp) returns
#   probe PID IMPL             the implementation's own name (libc6-dbg's
#                              .symtab for a stripped libc): calls == N
#   probe PID procs_unused     an IFUNC no slot refers to: refused, exit 2
#   sym PID procs_pick         names procs_pick_b
# Before the fix the first two counted the resolver: 0 calls, "exact".
source "$(dirname "$0")/lib.sh"
source "$E2E_DIR/probelib.bash"

N=20000
for c in own libc impl; do
	start_target tgt_procs "$T/$c.truth" ifunc "$N"
	eval "pid_$c=$TPID"
done
for c in own libc impl; do
	wait_truth "$T/$c.truth" ready
done

probe_bg own int "$T/own.truth" "$pid_own" probe "$pid_own" procs_pick --json
assert_rc 0 "vigil probe procs_pick"
check "$T/own.truth" "$T/own.out" '
loc = d["locations"][0]
want = dict((x.split()[0], int(x.split()[1], 16)) for x in t.kv["addr"])["procs_pick_b"]
ifn = loc.get("ifunc") or {}
eq(w + ": ifunc.symbol", "procs_pick", ifn.get("symbol"))
eq(w + ": ifunc.implementation", "procs_pick_b", ifn.get("implementation"))
eq(w + ": the site (procs_pick_b)", hex(want), loc["runtime_addresses"][0])
eq(w + ": calls (the target made " + t.one("calls") + ")", int(t.one("calls")), loc.get("calls"))
eq(w + ": calls_exact", True, loc.get("calls_exact"))
'
grep -q "^# procs_pick: 'procs_pick' is an IFUNC" "$T/own.err" || { show_last; fail "no '# procs_pick: ... is an IFUNC' line on stderr"; }
echo "ok: procs_pick probed at procs_pick_b: $N calls"

probe_bg libc int "$T/libc.truth" "$pid_libc" probe "$pid_libc" libc.so.6:strcmp --json
assert_rc 0 "vigil probe libc.so.6:strcmp"
check "$T/libc.truth" "$T/libc.out" '
loc = d["locations"][0]
want = dict((x.split()[0], int(x.split()[1], 16)) for x in t.kv["addr"])["strcmp_impl"]
ifn = loc.get("ifunc") or {}
eq(w + ": ifunc.symbol", "strcmp", ifn.get("symbol"))
eq(w + ": the site (dlsym(strcmp) in the target)", hex(want), loc["runtime_addresses"][0])
check(ifn.get("resolver") != hex(want), w + ": the resolver was probed")
eq(w + ": calls (the target made " + t.one("strcmp_calls") + ")", int(t.one("strcmp_calls")), loc.get("calls"))
'
impl=$(jget "$T/libc.out" 'd["locations"][0]["ifunc"]["implementation"] or ""')
echo "ok: libc.so.6:strcmp probed at ${impl:-its implementation}: $N calls"

if [[ -z $impl ]]; then
	echo "note: libc's implementation of strcmp has no symbol here (no libc6-dbg): its name is not tried"
else
	probe_bg impl int "$T/impl.truth" "$pid_impl" probe "$pid_impl" "libc.so.6:$impl" --json
	if [[ $RC == 2 ]] && grep -q 'cannot probe the instruction' "$T/impl.err"; then
		echo "note: the kernel refuses a uprobe on $impl's first instruction: its name resolved, not counted"
	else
		assert_rc 0 "vigil probe libc.so.6:$impl"
		check "$T/impl.truth" "$T/impl.out" '
loc = d["locations"][0]
eq(w + ": ifunc (a plain symbol)", None, loc.get("ifunc"))
eq(w + ": calls", int(t.one("strcmp_calls")), loc.get("calls"))
'
		echo "ok: libc.so.6:$impl by its own name: $N calls"
	fi
fi

refuse_cmd probe 5000 unused 2 "procs_unused.*IFUNC.*no relocation" "$pid_own" procs_unused --duration 100

vg sym_pick sym "$pid_own" procs_pick --json
assert_rc 0
got=$(jget "$T/sym_pick.out" 'd["results"][0]["symbol"] if "results" in d else d["symbol"]')
assert_eq "vigil sym PID procs_pick: the symbol at the address" procs_pick_b "$got"
echo "ok: sym names procs_pick_b"
