#!/bin/bash
# profile_vdso: tgt_images vdso loops on clock_gettime(), whose work is in
# the vDSO (__vdso_clock_gettime).  Its samples must be named (not a raw
# address) and unwound through the vDSO with the vDSO's own .eh_frame:
# >= 95 % of the samples whose leaf is __vdso_clock_gettime reach vdso_spin
# and main, with no unwind stop "no_image"; the leaf is the [vdso] image.
# (perf record --call-graph dwarf: 100 %.)
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_images "$truth" vdso
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg json profile "$pid" --duration 1500 --freq 999 --json
assert_rc 0

vg_py "$pid" <<'PY' || { show_last; fail "vigil profile through the vDSO: see above"; }
import os, sys
from profcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
doc = load_json(f"{T}/json.out")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check(n >= 100, f"json: {n} samples in 1.5 s of a CPU-bound target")
leaf = good = 0
for s in stacks:
    fr, c = s.get("frames") or [], s.get("count") or 0
    if not fr or fr[-1].get("function") != "__vdso_clock_gettime":
        continue
    leaf += c
    eq("leaf image", "[vdso]", fr[-1].get("image"))
    names = [f.get("function") for f in fr]
    if "vdso_spin" in names and "main" in names:
        good += c
check(leaf >= n // 2, f"json: {leaf} of {n} samples in __vdso_clock_gettime (expected most)")
check(good >= 0.95 * leaf, f"json: only {good} of {leaf} __vdso_clock_gettime samples unwound to vdso_spin and main")
stops = obs.get("unwind_stops") or {}
check(not stops.get("no_image"), f"json: unwind_stops {stops}")
print(f"vdso: {leaf}/{n} samples in __vdso_clock_gettime, {good} unwound to main")
done()
PY
