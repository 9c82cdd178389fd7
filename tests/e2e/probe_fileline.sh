#!/bin/bash
# probe_fileline: `vigil probe PID tgt_probe.c:L` where L is the line marked
# PROBE_INLINE_LINE in tgt_probe.c: one instruction of an always-inlined
# helper (fl_helper), inlined into probe_caller_a (300 calls) and
# probe_caller_b (200 calls).  Both copies are probed: 2 sites, each inside
# its caller, marked inlined into it, at line L of fl_helper, with 300 and
# 200 calls; the location's calls == 500, exact.  The int3 was at each
# site while armed, and the callers' bytes are restored afterwards.
source "$(dirname "$0")/lib.sh"

truth=$T/fl.truth
start_target tgt_probe "$truth" fileline
pid=$TPID
wait_truth "$truth" ready
L=$(truth_get "$truth" line)
src=$E2E_DIR/../targets/tgt_probe.c
mark=$(grep -n 'PROBE_INLINE_LINE \*/' "$src" | tail -n1 | cut -d: -f1)
[[ $L == "$mark" ]] || harness_error "tgt_probe says line $L, the PROBE_INLINE_LINE mark of $src is on line $mark"

source "$E2E_DIR/probelib.bash"

probe_bg fl int "$truth" "$pid" probe "$pid" "tgt_probe.c:$L" --json
assert_rc 0 "vigil probe tgt_probe.c:$L"
final "$truth" "$pid"
check "$truth" "$T/fl.out" '
L = t.int("line")
eq(w + ": the target calls (harness)", (300, 200), (t.int("caller_a"), t.int("caller_b")))
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
eq(w + ": input", "tgt_probe.c:%d" % L, loc.get("input"))
eq(w + ": image", t.exe(), loc.get("image"))
sites = loc.get("sites") or []
eq(w + ": number of sites (the line inlined in two callers)", 2, len(sites))
want = {"probe_caller_a": 300, "probe_caller_b": 200}
offs = {}
ra = [addr(w + " runtime_addresses[]", a) for a in loc.get("runtime_addresses") or []]
for s in sites:
    into = s.get("inlined_into")
    sw = "%s: site inlined into %r" % (w, into)
    if not check(into in want, sw + ": expected inlined into probe_caller_a or probe_caller_b"):
        continue
    eq(sw + ": calls", want.pop(into), s.get("calls"))
    eq(sw + ": inlined", True, s.get("inlined"))
    eq(sw + ": function (the symbol containing the site)", into, s.get("function"))
    eq(sw + ": inlined_function (whose copy the line is in)", "fl_helper", s.get("inlined_function"))
    eq(sw + ": line", L, s.get("line"))
    fl = s.get("file")
    check(isinstance(fl, str) and fl.endswith("/tests/targets/tgt_probe.c") and "/../" not in fl,
          sw + ": file %r must be the normalized path of tests/targets/tgt_probe.c" % (fl,))
    f = t.funcs[into]
    a = addr(sw + " runtime_address", s.get("runtime_address"))
    if a is None:
        continue
    off = a - f["runtime"]
    check(0 < off < 32, sw + ": runtime_address %#x must lie in the first 32 bytes of %s (%#x), not at its entry" % (a, into, f["runtime"]))
    offs[into] = off
    eq_addr(sw + ": file_offset (the caller file offset + the same distance)", f["offset"] + off,
            addr(sw + " file_offset", s.get("file_offset")))
    check(a in ra, sw + ": runtime_address %#x not in the location runtime_addresses" % a)
eq(w + ": callers without a site", {}, want)
eq(w + ": runtime_addresses (one per site)", 2, len(ra))
eq(w + ": calls (300 + 200)", 500, loc.get("calls"))
eq(w + ": calls_exact", True, loc.get("calls_exact"))
if len(offs) == 2:
    check_code_restored(t, ["probe_caller_a", "probe_caller_b"], w, offsets=offs)
'
echo "ok: tgt_probe.c:$L: 2 inlined sites, 300 + 200 calls"
