#!/bin/bash
# watch_tls: `vigil watch PID g_tls_cell --tid TID` on tgt_watch tls K: two
# threads each write K values to their own copy of the __thread variable
# g_tls_cell.  Without --tid the expression is refused (exit 2) naming the
# thread-local part; with --tid the watch is on that thread's copy (the
# address the thread wrote down), counts exactly its K writes with their
# values, all by that thread, and none of the other thread's writes to its
# own copy; the writer, an fs:-relative store, verified exact with the
# thread's fs base from libthread_db.  errno --tid resolves to the address each thread took of
# errno, where libc's debug info (libc6-dbg) describes it.
# Emulation: the two threads store through two different labels, and only
# thread 0's is given to the emulation (a uprobe cannot tell the two
# copies apart; a breakpoint on one copy does).
source "$(dirname "$0")/lib.sh"

K=${WATCH_K:-50}
truth=$T/truth
start_target tgt_watch "$truth" tls "$K"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
watch_probe "$pid"
watch_env "$truth" tls_a
read -r _ _ tid0 addr0 errno0 _ first0 <<<"$(grep '^tls 0 ' "$truth")"
read -r _ _ tid1 addr1 errno1 _ _ <<<"$(grep '^tls 1 ' "$truth")"
[[ $tid0 -gt 1 && $tid1 -gt 1 && $addr0 != "$addr1" ]] || harness_error "no two tls lines with two addresses in $truth"

# No thread named: a usage error that names the thread-local part.
vg notid watch "$pid" g_tls_cell --duration 100
assert_rc 2
grep -qF "g_tls_cell: 'g_tls_cell' is a thread-local variable (one copy per thread); name the thread with --tid TID" "$T/notid.err" ||
	{ show_last; fail "$LAST_CMD: the refusal must name the thread-local variable and --tid"; }
# A TID that is no thread of the process.
vg badtid watch "$pid" g_tls_cell --tid 1 --duration 100
assert_rc 2
grep -qF "g_tls_cell: thread 1 is not a thread of pid $pid" "$T/badtid.err" ||
	{ show_last; fail "$LAST_CMD: the error must name the expression and the thread"; }

# errno of each thread (alive until the go): the address the thread took
# of it.
vg errno_print print "$pid" errno --tid "$tid0"
if [[ $RC == 0 ]]; then
	for t in "$tid0:$errno0" "$tid1:$errno1"; do
		vg_watch_start errno watch "$pid" errno --tid "${t%%:*}" --duration 100 --json
		vg_watch_wait 10
		assert_rc 0
		got=$(jget "$T/errno.out" 'd["watches"][0]["runtime_va"]')
		assert_eq "$LAST_CMD: thread ${t%%:*}'s errno" "$(printf '0x%x' "${t#*:}")" "$got"
	done
else
	grep -q "no debug info\|errno" "$T/errno_print.err" || { show_last; fail "$LAST_CMD: unexpected refusal"; }
	echo "note: errno has no type here (libc6-dbg missing): its watch is not checked"
fi

vg_watch_start run watch "$pid" g_tls_cell --tid "$tid0" --duration 3000 --json
kill -USR1 "$pid"
wait_truth "$truth" done
vg_watch_wait 20
assert_rc 0 "vigil watch g_tls_cell --tid $tid0 --duration 3000"

vg_py "$truth" "$K" "$tid0" "$addr0" "$first0" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import os, sys
from watchcheck import *
T = os.environ["T"]
truth, K, tid0, addr0, first0 = WatchTruth(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4], 16), int(sys.argv[5], 16)
w = "watch g_tls_cell --tid"
doc = load_json(f"{T}/run.out")
obs = check_watch_header(doc, truth.pid, w)
eq(f"{w}: stop_reason", "duration", obs.get("stop_reason"))
d = the_watch(doc, w, 0, 1)
eq(f"{w}: expr", "g_tls_cell", d.get("expr"))
eq(f"{w}: type", "uint64_t", d.get("type"))
eq(f"{w}: len_bytes (from the type)", 8, d.get("len_bytes"))
eq_addr(f"{w}: runtime_va (thread {tid0}'s copy)", addr0, hexint(w, d.get("runtime_va")))
lines = [l.split() for l in open(sys.argv[1]) if l.startswith("tls ")]
eq(f"{w}: the target's writes per thread", [K, K], [int(l[5]) for l in lines])
eq(f"{w}: accepted_hits (thread {tid0}'s writes only)", K, d.get("accepted_hits"))
eq(f"{w}: writes", K, d.get("writes"))
samples = d.get("samples") or []
eq_list(f"{w}: values", [first0 + i for i in range(K)],
        values_of(samples, w, kind="register_store", register="rax"))
eq_list(f"{w}: writer threads", [tid0] * K, [s.get("tid") for s in samples])
sites = d.get("writer_sites") or []
eq(f"{w}: writer sites", 1, len(sites))
site = site_at_line(sites, truth.lines["tls_a"], w)
# An fs:-relative store: perf does not sample the fs base, libthread_db
# lists each thread's (its thread pointer) before arming, so the writer
# is verified exact like any other store.
check(site is None or "fs:[" in (site.get("instruction") or ""),
      f"{w}: instruction {site and site.get('instruction')!r} must be fs:-relative")
check_site(site, truth, "tls_a", w, "store", hits=K, function="vgw_store_tls_a", mnemonic="mov")
done()
print(f"ok: {K} writes of thread {tid0} to its g_tls_cell, none of the other thread's ({MODE})")
PY

