#!/bin/bash
# probe_stacks: `vigil probe PID probe_leaf --stacks` on tgt_probe stacks,
# where probe_leaf() is called 60 times from stack_a() and 40 times from
# stack_b() (real calls, not tail jumps), both called from main's loop:
# every stack starts at probe_leaf (frames[0]), the stacks through stack_a
# (frames[1]) count 60 and those through stack_b 40, each reaching main;
# 100 in all, one record per call.
source "$(dirname "$0")/lib.sh"

truth=$T/st.truth
start_target tgt_probe "$truth" stacks
pid=$TPID
wait_truth "$truth" ready

source "$E2E_DIR/probelib.bash"

probe_bg st int "$truth" "$pid" probe "$pid" probe_leaf --stacks --json
assert_rc 0 "vigil probe --stacks"
final "$truth" "$pid"
check "$truth" "$T/st.out" '
eq(w + ": the target calls (harness)", (60, 40), (t.int("stack_a"), t.int("stack_b")))
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_leaf", w, calls=100)
st = loc.get("stacks")
if not check(isinstance(st, dict), w + ": stacks must be an object, got %r" % (st,)):
    done_now()
eq(w + ": stacks.records", 100, st.get("records"))
top = st.get("top") or []
by = {"stack_a": 0, "stack_b": 0}
for i, s in enumerate(top):
    fr = s.get("frames") or []
    names = [f.get("function") for f in fr]
    sw = "%s: stacks.top[%d] %r" % (w, i, names)
    if not check(len(fr) >= 3, sw + ": expected at least probe_leaf, its caller and main"):
        continue
    eq(sw + ": frames[0].function", "probe_leaf", names[0])
    eq_addr(sw + ": frames[0].address (the probed entry)", t.funcs["probe_leaf"]["runtime"], addr(sw + " frames[0].address", fr[0].get("address")))
    if check(names[1] in by, sw + ": frames[1].function must be stack_a or stack_b"):
        by[names[1]] += s.get("count", 0)
    check("main" in names[2:], sw + ": main must be an outer frame")
    fl = fr[1].get("file")
    check(isinstance(fl, str) and fl.endswith("tgt_probe.c"), sw + ": frames[1].file %r must end with tgt_probe.c" % (fl,))
    check(isinstance(fr[1].get("line"), int) and fr[1].get("line") > 0, sw + ": frames[1].line must be a line number")
eq(w + ": calls counted in the stacks through stack_a / stack_b", {"stack_a": 60, "stack_b": 40}, by)
counts = [s.get("count") for s in top]
eq(w + ": stacks.top sorted by count, descending", sorted(counts, reverse=True), counts)
check_code_restored(t, ["probe_leaf"], w)
'
echo "ok: --stacks: 60 through stack_a, 40 through stack_b"
