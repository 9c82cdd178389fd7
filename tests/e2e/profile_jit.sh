#!/bin/bash
# profile_jit: samples in JIT code are named from /tmp/perf-PID.map.
# tgt_jit spins in a loop copied into anonymous executable memory
# (jit_hot_loop), and after 1 s appends the name of a second copy
# (jit_late_loop) and spins in both: a 3 s profile must attribute most
# samples to the two names (each at least a fifth), with image
# [perf-PID.map], and none to a raw address in that memory; the late one
# shows the map is re-read while sampling.  The same run's pprof names
# the mapping [perf-PID.map] and puts both functions in it (go tool pprof
# -raw), and its folded output has both leaves.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_jit "$truth" 1000
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
map=$(truth_get "$truth" map)
trap 'rm -f "$map"; vg_cleanup' EXIT

vg_cpu "$pid" json profile "$pid" --duration 3s --freq 999 -o "$T/p.json" -o "$T/p.pb.gz" -o "$T/p.folded"
assert_rc 0
grep -qx "state late" "$truth" || harness_error "tgt_jit did not append its late line during the profile"

vg_py "$pid" <<'PY' || { show_last; fail "vigil profile of JIT code: see above"; }
import os, re, shutil, subprocess, sys
from profcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
label = f"[perf-{pid}.map]"
doc = load_json(f"{T}/p.json")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check_sample_count(n, run_cpu_s("json"), 999, "json: observation.samples")

leaves = leaf_self(stacks)
hot, late = leaves.get("jit_hot_loop", 0), leaves.get("jit_late_loop", 0)
check(hot >= n // 5, f"json: {hot} of {n} samples in jit_hot_loop (leaves {leaves})")
check(late >= n // 5, f"json: {late} of {n} samples in jit_late_loop (leaves {leaves})")
check(hot + late >= 0.9 * n, f"json: only {hot + late} of {n} samples in JIT code (leaves {leaves})")
for fn in ("jit_hot_loop", "jit_late_loop"):
    eq(f"{fn} leaf images", [label], list(leaf_images(stacks, fn)))
raw = {k: v for k, v in leaves.items() if k and re.match(r"^0x[0-9a-f]+$", k)}
check(not raw, f"json: raw addresses as leaves: {raw}")

folded = parse_folded(open(f"{T}/p.folded").read(), "folded")
fl = folded_self(folded)
check(fl.get("jit_hot_loop", 0) >= n // 5 and fl.get("jit_late_loop", 0) >= n // 5,
      f"folded leaves: {fl}")

if shutil.which("go"):
    env = dict(os.environ, HOME=T, GOCACHE=f"{T}/gocache", GOPATH=f"{T}/gopath",
               GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=T)
    r = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", f"{T}/p.pb.gz"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0, f"go tool pprof -raw: {r.stderr[:400]}")
    maps = re.findall(r"^(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)",
                      r.stdout.split("Mappings", 1)[-1], re.M)
    ids = [i for i, p in maps if p == label]
    check(ids, f"pprof: no mapping named {label} among {[m[1] for m in maps]}")
    for fn in ("jit_hot_loop", "jit_late_loop"):
        locs = re.findall(r"^\s*\d+: 0x[0-9a-f]+ M=(\d+) " + fn, r.stdout, re.M)
        check(locs and set(locs) <= set(ids), f"pprof: {fn} in mappings {set(locs)}, {label} is {ids}")
    print(f"pprof: mapping {label} = {ids}")
print(f"jit: {hot} + {late} of {n} samples named from the perf map")
done()
PY
