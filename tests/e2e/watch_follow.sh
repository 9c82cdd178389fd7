#!/bin/bash
# watch_follow: `vigil watch PID --follow g_ptr+8 --regs` on tgt_watch follow
# M N: N leaf writes through g_ptr, then M times: g_ptr re-pointed to the
# next object, 100 ms for vigil to re-bind, N leaf writes.  M re-binds
# (generation M, root_hits M), each generation bound to the object the
# target pointed at with exactly N hits, the leaf writer and the pointer
# writer at their lines with the values written (leaf values, pointers).
source "$(dirname "$0")/lib.sh"

M=${WATCH_M:-4}
N=${WATCH_N:-6}
truth=$T/truth
start_target tgt_watch "$truth" follow "$M" "$N"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
watch_probe "$pid"
watch_env "$truth" repoint leaf

vg_watch_start run watch "$pid" --follow g_ptr+8 --regs --duration 3000 --json
kill -USR1 "$pid"
wait_truth "$truth" done
vg_watch_wait 20
assert_rc 0 "vigil watch --duration 3000"

vg_py "$truth" "$M" "$N" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import os, sys
from watchcheck import *
T = os.environ["T"]
truth, M, N = WatchTruth(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
w = "watch --follow g_ptr+8"
doc = load_json(f"{T}/run.out")
# A real re-bind takes time: a leaf write between the pointer store and the
# moved breakpoint cannot be seen, so the counts are a lower bound with the
# window measured (the target sleeps 100 ms after each re-point, so none
# was missed here, but vigil cannot know that).  Emulation has no window.
obs = check_watch_header(doc, truth.pid, w, exact=MODE == "emulation")
eq(f"{w}: stop_reason", "duration", obs.get("stop_reason"))
if MODE == "real":
    why = obs.get("lower_bound_reasons") or []
    eq(f"{w}: observation.counts_are_lower_bound (re-bind window)", True, obs.get("counts_are_lower_bound"))
    lat = [g.get("rebind_latency_ns") for d0 in doc.get("dependent_watches") or []
           for g in d0.get("generations") or [] if "rebind_latency_ns" in g]
    want = f"watch 1: leaf writes between a pointer store and the re-bind (at most {max(lat or [0]) // 1000} us here) are not seen"
    eq(f"{w}: observation.lower_bound_reasons", [want], why)
eq(f"{w}: watches", [], doc.get("watches"))
deps = doc.get("dependent_watches") or []
if not eq(f"{w}: number of dependent_watches", 1, len(deps)):
    done()
d = deps[0]
eq(f"{w}: the target's generations", M + 1, len(truth.gens))
eq_addr(f"{w}: ptr_slot_runtime_va", truth.syms["g_ptr"]["runtime"], hexint(w, d.get("ptr_slot_runtime_va")))
eq(f"{w}: leaf_offset", 8, d.get("leaf_offset"))
eq(f"{w}: binding_state", "bound", d.get("binding_state"))
eq_addr(f"{w}: leaf_runtime_va (last object + 8)", truth.gens[-1]["pointer"] + 8,
        hexint(w, d.get("leaf_runtime_va")))
eq(f"{w}: generation (re-binds)", M, d.get("generation"))
eq(f"{w}: root_hits (re-points)", M, d.get("root_hits"))
eq(f"{w}: accepted_hits (leaf writes, all generations)", (M + 1) * N, d.get("accepted_hits"))
eq(f"{w}: rebind_failures", 0, d.get("rebind_failures"))
gens = d.get("generations") or []
if eq(f"{w}: number of generations", M + 1, len(gens)):
    for g, tg in zip(gens, truth.gens):
        gw = f"{w}: generations[{tg['index']}]"
        eq(f"{gw}.index", tg["index"], g.get("index"))
        eq_addr(f"{gw}.pointer", tg["pointer"], hexint(gw, g.get("pointer")))
        eq_addr(f"{gw}.leaf_runtime_va", tg["pointer"] + 8, hexint(gw, g.get("leaf_runtime_va")))
        eq(f"{gw}.binding_state", "bound", g.get("binding_state"))
        eq(f"{gw}.hits", tg["writes"], g.get("hits"))

sites = d.get("writer_sites") or []
eq(f"{w}: number of leaf writer sites", 1, len(sites))
leaf = site_at_line(sites, truth.lines["leaf"], w + " leaf")
check_site(leaf, truth, "leaf", f"{w} leaf site", "store", hits=(M + 1) * N, function="vgw_store_leaf",
           mnemonic="mov")
samples = d.get("samples") or []
eq(f"{w}: number of leaf samples", (M + 1) * N, len(samples))
eq_list(f"{w}: leaf samples' generations", [g for g in range(M + 1) for _ in range(N)],
        [s.get("generation") for s in samples])
eq_list(f"{w}: leaf values", [tg["first"] + i for tg in truth.gens for i in range(tg["writes"])],
        values_of(samples, w + " leaf", kind="register_store", register="rax"))

rsites = d.get("root_writer_sites") or []
eq(f"{w}: number of pointer writer sites", 1, len(rsites))
root = site_at_line(rsites, truth.lines["repoint"], w + " re-point")
check_site(root, truth, "repoint", f"{w} re-point site", "store", hits=M, function="vgw_repoint", mnemonic="mov")
rs = d.get("root_samples") or []
eq(f"{w}: number of pointer samples", M, len(rs))
eq_list(f"{w}: pointer values written", [tg["pointer"] for tg in truth.gens[1:]],
        values_of(rs, w + " re-point", kind="register_store"))
eq(f"{w}: initial_pointer", f"{truth.gens[0]['pointer']:#x}", d.get("initial_pointer"))
eq(f"{w}: latest_pointer", f"{truth.gens[-1]['pointer']:#x}", d.get("latest_pointer"))
done()
print(f"ok: {M} re-binds, {N} leaf hits in each of {M + 1} generations ({MODE})")
PY
