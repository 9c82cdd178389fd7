#!/bin/bash
# watch_expr: `vigil watch PID 'g_head->mid->tail->val'` on tgt_watch chain
# M N: three pointer hops (g_head, g_head->mid, g_head->mid->tail) and the
# leaf, the 4 debug registers.  N writes through the path, then M times:
# the middle pointer g_head->mid re-pointed to the next g_cmids[g] (whose
# tail is another g_ctails[g]), 100 ms for vigil to re-bind, a decoy
# write to the old, unreachable leaf (never counted), N writes through the
# path.  Every write through the path counted in its generation, each
# generation at the slots the target read, the re-point seen on hop 2,
# the leaf's values typed (int64_t: negative decimals).  Then g_head->mid
# alone (one hop + leaf): its pointer values typed with their symbols.
source "$(dirname "$0")/lib.sh"

M=${WATCH_M:-3}
N=${WATCH_N:-5}
truth=$T/truth
start_target tgt_watch "$truth" chain "$M" "$N"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
watch_probe "$pid"
# Emulation: one group per breakpoint (root, hop 2, hop 3, leaf); nothing
# stores to g_head or a tail pointer in this mode, so their uprobes sit on
# stores that never run (repoint, imm).
watch_env "$truth" repoint setmid imm val

expr='g_head->mid->tail->val'
vg_watch_start run watch "$pid" "$expr" --duration 3000 --json
grep -qxF "# $expr needs 4 debug registers: 3 hops + leaf; this machine has 4" "$T/run.err" ||
	{ show_last; fail "vigil watch $expr: no slot budget line on stderr"; }
kill -USR1 "$pid"
wait_truth "$truth" done
vg_watch_wait 20
assert_rc 0 "vigil watch $expr --duration 3000"

vg_py "$truth" "$M" "$N" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import os, sys
from watchcheck import *
T = os.environ["T"]
truth, M, N = WatchTruth(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
expr = "g_head->mid->tail->val"
w = f"watch {expr}"
doc = load_json(f"{T}/run.out")
obs = check_watch_header(doc, truth.pid, w, exact=MODE == "emulation")
eq(f"{w}: stop_reason", "duration", obs.get("stop_reason"))
if MODE == "real":
    lat = [g.get("rebind_latency_ns") for d0 in doc.get("dependent_watches") or []
           for g in d0.get("generations") or [] if "rebind_latency_ns" in g]
    want = f"watch 1: leaf writes between a pointer store and the re-bind (at most {max(lat or [0]) // 1000} us here) are not seen"
    eq(f"{w}: observation.lower_bound_reasons", [want], obs.get("lower_bound_reasons") or [])
eq(f"{w}: watches", [], doc.get("watches"))
deps = doc.get("dependent_watches") or []
if not eq(f"{w}: number of dependent_watches", 1, len(deps)):
    done()
d = deps[0]
eq(f"{w}: decoys written by the target", M, int(truth.one("decoys")))
eq(f"{w}: expr", expr, d.get("expr"))
eq(f"{w}: type", "int64_t", d.get("type"))
eq(f"{w}: len_bytes (from the type)", 8, d.get("len_bytes"))
eq_addr(f"{w}: ptr_slot_runtime_va (&g_head)", truth.syms["g_head"]["runtime"],
        hexint(w, d.get("ptr_slot_runtime_va")))
eq(f"{w}: leaf_offset", 8, d.get("leaf_offset"))
eq(f"{w}: binding_state", "bound", d.get("binding_state"))
eq(f"{w}: generation (one re-bind per re-point)", M, d.get("generation"))
eq(f"{w}: root_hits (g_head is never written)", 0, d.get("root_hits"))
eq(f"{w}: accepted_hits (writes through the path, decoys excluded)", (M + 1) * N, d.get("accepted_hits"))
eq(f"{w}: writes", (M + 1) * N, d.get("writes"))
eq(f"{w}: rebind_failures", 0, d.get("rebind_failures"))
mid_slot = truth.syms["g_chead"]["runtime"] + 8
hops = d.get("hops") or []
if eq(f"{w}: number of hops after the root", 2, len(hops)):
    eq(f"{w}: hops[0].expr", "g_head->mid", hops[0].get("expr"))
    eq(f"{w}: hops[0].offset", 8, hops[0].get("offset"))
    eq_addr(f"{w}: hops[0].slot_runtime_va (&g_chead.mid)", mid_slot, hexint(w, hops[0].get("slot_runtime_va")))
    eq(f"{w}: hops[0].writes (re-points)", M, hops[0].get("writes"))
    site = site_at_line(hops[0].get("writer_sites") or [], truth.lines["setmid"], w + " re-point")
    check_site(site, truth, "setmid", f"{w} re-point site", "store", hits=M, function="vgw_set_mid", mnemonic="mov")
    eq_list(f"{w}: hops[0] values (the new mids)", [truth.syms["g_cmids"]["runtime"] + 16 * g for g in range(1, M + 1)],
            values_of(hops[0].get("samples") or [], w + " re-point", kind="register_store"))
    eq(f"{w}: hops[1].expr", "g_head->mid->tail", hops[1].get("expr"))
    eq_addr(f"{w}: hops[1].slot_runtime_va (last mid's tail)", truth.gens[-1]["mid_slot"],
            hexint(w, hops[1].get("slot_runtime_va")))
    eq(f"{w}: hops[1].writes", 0, hops[1].get("writes"))
gens = d.get("generations") or []
if eq(f"{w}: number of generations", M + 1, len(gens)):
    for g, tg in zip(gens, truth.gens):
        gw = f"{w}: generations[{tg['index']}]"
        eq(f"{gw}.index", tg["index"], g.get("index"))
        eq_addr(f"{gw}.pointer (the tail)", tg["pointer"], hexint(gw, g.get("pointer")))
        eq_addr(f"{gw}.leaf_runtime_va", tg["pointer"] + 8, hexint(gw, g.get("leaf_runtime_va")))
        eq(f"{gw}.hop_slots", [f"{mid_slot:#x}", f"{tg['mid_slot']:#x}"], g.get("hop_slots"))
        eq(f"{gw}.binding_state", "bound", g.get("binding_state"))
        eq(f"{gw}.hits (writes through the path)", tg["writes"], g.get("hits"))
samples = d.get("samples") or []
eq(f"{w}: number of leaf samples", (M + 1) * N, len(samples))
eq_list(f"{w}: leaf samples' generations", [g for g in range(M + 1) for _ in range(N)],
        [s.get("generation") for s in samples])
firsts = [tg["first"] + i for tg in truth.gens for i in range(tg["writes"])]
eq_list(f"{w}: leaf values", firsts, values_of(samples, w + " leaf", kind="register_store", register="rax"))
eq_list(f"{w}: leaf values typed (int64_t)", [str(v - (1 << 64) if v >> 63 else v) for v in firsts],
        [(s.get("value") or {}).get("typed") for s in samples])
done()
print(f"ok: {expr}: {M} re-points of the middle pointer, {N} writes in each of {M + 1} generations, "
      f"{M} decoys unseen ({MODE})")
PY

# A pointer leaf: g_head->mid (one hop + leaf), its values typed with the
# symbol they point into.
truth2=$T/truth2
start_target tgt_watch "$truth2" chain 2 1
wait_truth "$truth2" ready
pid2=$(truth_get "$truth2" pid)
watch_env "$truth2" repoint setmid
vg_watch_start run2 watch "$pid2" 'g_head->mid' --duration 2000 --json
grep -qxF "# g_head->mid needs 2 debug registers: 1 hop + leaf; this machine has 4" "$T/run2.err" ||
	{ show_last; fail "vigil watch g_head->mid: no slot budget line on stderr"; }
kill -USR1 "$pid2"
wait_truth "$truth2" done
vg_watch_wait 20
assert_rc 0 "vigil watch g_head->mid --duration 2000"
vg_py "$truth2" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import os, sys
from watchcheck import *
T = os.environ["T"]
truth = WatchTruth(sys.argv[1])
w = "watch g_head->mid"
d = (load_json(f"{T}/run2.out").get("dependent_watches") or [{}])[0]
eq(f"{w}: type", "struct cmid *", d.get("type"))
eq(f"{w}: hops", [], d.get("hops"))
eq(f"{w}: leaf_offset", 8, d.get("leaf_offset"))
mids = truth.syms["g_cmids"]["runtime"]
eq_list(f"{w}: values typed", [f"(struct cmid *) {mids + 16 * g:#x} <g_cmids+{16 * g}>" for g in (1, 2)],
        [(s.get("value") or {}).get("typed") for s in d.get("samples") or []])
done()
print(f"ok: g_head->mid: 2 pointer writes typed with their symbols ({MODE})")
PY
