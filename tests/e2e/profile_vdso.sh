#!/bin/bash
# profile_vdso: tgt_images vdso loops on clock_gettime(), whose work is in
# the vDSO (__vdso_clock_gettime).  Its samples must be named (not a raw
# address) and unwound through the vDSO with the vDSO's own .eh_frame:
# >= 95 % of the samples whose leaf is __vdso_clock_gettime (or an unnamed
# vDSO function it calls: kvm-clock's pvclock read) reach vdso_spin and
# main, with no unwind stop "no_image"; the leaf is the [vdso] image.
# (perf record --call-graph dwarf: 100 %.)
# The same run's pprof (the JSON and it as two -o): go tool pprof -raw lists the
# program first (Mapping[0], "File: tgt_images", not libc.so.6) and a
# mapping named [vdso] that the __vdso_clock_gettime location belongs to.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_images "$truth" vdso
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg_cpu "$pid" json profile "$pid" --duration 1500 --freq 999 -o "$T/v.json" -o "$T/v.pb.gz"
assert_rc 0

vg_py "$pid" <<'PY' || { show_last; fail "vigil profile through the vDSO: see above"; }
import os, sys
from profcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
doc = load_json(f"{T}/v.json")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check_sample_count(n, run_cpu_s("json"), 999, "json: observation.samples")

# The leaf is __vdso_clock_gettime, or a function of the vDSO that its
# symbols do not name, called from it: with the kvm-clock clocksource the
# pvclock read is a function of its own ("[function at 0x..., no
# symbol]"), where most of the time goes.
leaf = good = 0
for s in stacks:
    fr, c = s.get("frames") or [], s.get("count") or 0
    if not fr:
        continue
    if fr[-1].get("function") != "__vdso_clock_gettime" and not (
            len(fr) >= 2 and fr[-2].get("function") == "__vdso_clock_gettime" and
            fr[-1].get("image") == "[vdso]" and "no symbol" in str(fr[-1].get("function"))):
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
print(f"vdso: {leaf}/{n} samples in __vdso_clock_gettime or an unnamed vDSO function it calls, {good} unwound to main")

# pprof: the program is Mapping[0], the vDSO is named.
import re, subprocess
env = dict(os.environ, HOME=T, GOCACHE=f"{T}/gocache", GOPATH=f"{T}/gopath",
           GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=T)
raw = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", f"{T}/v.pb.gz"],
                     capture_output=True, text=True, env=env)
check(raw.returncode == 0, f"go tool pprof -raw: {raw.stderr[:400]}")
maps = re.findall(r"^(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)", raw.stdout.split("Mappings", 1)[-1], re.M)
check(maps, f"no Mappings in go tool pprof -raw:\n{raw.stdout[-800:]}")
eq("pprof Mapping[0]", "tgt_images", os.path.basename(maps[0][1]) if maps else None)
vdso_ids = [i for i, path in maps if path == "[vdso]"]
check(vdso_ids, f"pprof: no mapping named [vdso] among {[m[1] for m in maps]}")
locs = re.findall(r"^\s*\d+: 0x[0-9a-f]+ M=(\d+) __vdso_clock_gettime", raw.stdout, re.M)
check(locs and set(locs) <= set(vdso_ids), f"pprof: __vdso_clock_gettime in mappings {set(locs)}, [vdso] is {vdso_ids}")
top = subprocess.run(["go", "tool", "pprof", "-top", "-symbolize=none", f"{T}/v.pb.gz"],
                     capture_output=True, text=True, env=env)
check("File: tgt_images" in top.stdout, f"go tool pprof -top header: {top.stdout[:200]!r}")
print(f"pprof: Mapping[0] {maps[0][1] if maps else None}, [vdso] mapping {vdso_ids}")
done()
PY
