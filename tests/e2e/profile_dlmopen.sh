#!/bin/bash
# profile_dlmopen: tgt_images dlmopen spends its time in cos() of both
# copies of libm.so.6 (one loaded by dlopen, one by dlmopen in a new
# link-map namespace).  Samples in either copy must be named from that copy
# and unwound through it: >= 95 % of all samples reach dlm_spin and main,
# and the libm frames are in libm.so.6.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_images "$truth" dlmopen
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg_cpu "$pid" json profile "$pid" --duration 1500 --freq 999 --json
assert_rc 0

vg_py "$pid" <<'PY' || { show_last; fail "vigil profile through a dlmopen'ed copy: see above"; }
import os, sys
from profcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
doc = load_json(f"{T}/json.out")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check_sample_count(n, run_cpu_s("json"), 999, "json: observation.samples")

good = libm = 0
for s in stacks:
    fr, c = s.get("frames") or [], s.get("count") or 0
    names = [f.get("function") for f in fr]
    if "dlm_spin" in names and "main" in names:
        good += c
    if any(str(f.get("image")).endswith("/libm.so.6") for f in fr):
        libm += c
check(good >= 0.95 * n, f"json: only {good} of {n} samples unwound to dlm_spin and main")
check(libm >= n // 4, f"json: only {libm} of {n} samples have a libm.so.6 frame")
print(f"dlmopen: {good}/{n} samples reach main, {libm} in libm")
done()
PY
