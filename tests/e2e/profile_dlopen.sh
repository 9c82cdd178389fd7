#!/bin/bash
# profile_dlopen: a library loaded while vigil profiles.  tgt_profile
# dlopen burns CPU in before_load until SIGUSR1, then dlopens libvgprof.so
# and spends all its time in vgprof_hot.  vigil profile --duration 3000 is
# started first; the signal comes 1 s after it says it samples ("# profiling
# pid").  vgprof_hot must be named (an
# image that did not exist when vigil started), with image libvgprof.so at
# the path the target loaded, and hold >= 50 % of all samples (about 2 of
# the 3 s); before_load must have samples too (the time before), and the
# two together nearly all of them (no unnamed addresses of the new image).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
lib=$TARGETS/libvgprof.so
start_target tgt_profile "$truth" dlopen "$lib"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
grep -q libvgprof "/proc/$pid/maps" && harness_error "libvgprof.so mapped before SIGUSR1"

vg_bg() {
	LAST=$1
	LAST_CMD="vigil ${*:2}"
	"$VIGIL" "${@:2}" >"$T/$1.out" 2>"$T/$1.err" </dev/null &
	VGPID=$!
	track_pid "$VGPID"
}
t0=$(cpu_ticks "$pid")
vg_bg run profile "$pid" --duration 3000 --freq 999 --json
# The second before the load counts from the start of the sampling (its
# "# profiling pid" line), not from vigil's exec.
for ((i = 0; i < 1000; i++)); do
	grep -q '^# profiling pid' "$T/run.err" && break
	kill -0 "$VGPID" 2>/dev/null || break
	sleep 0.01
done
grep -q '^# profiling pid' "$T/run.err" || { vg_watch_wait 1; show_last; fail "$LAST_CMD: no '# profiling pid' line on stderr within 10 s"; }
sleep 1
kill -0 "$VGPID" 2>/dev/null || { vg_watch_wait 1; show_last; fail "$LAST_CMD exited 1 s into the profile (exit $RC)"; }
kill -USR1 "$pid"
wait_truth "$truth" loaded
vg_watch_wait 15
echo "$(($(cpu_ticks "$pid") - t0)) $(getconf CLK_TCK)" >"$T/run.cpu"
assert_rc 0
vg_py "$pid" "$(truth_sym "$truth" vgprof_hot path)" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import os, sys
from profcheck import *
T, pid, path = os.environ["T"], int(sys.argv[1]), sys.argv[2]
doc = load_json(f"{T}/run.out")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check_sample_count(n, run_cpu_s("run"), 999, "json: observation.samples")

hot, pre = by.get("vgprof_hot"), by.get("before_load")
if check(hot, f"json: no function vgprof_hot; functions: {sorted(by)[:20]!r}"):
    eq("json: images of the stacks whose leaf is vgprof_hot (samples per image)",
       [path], list(leaf_images(stacks, "vgprof_hot")))
    check((hot.get("self") or 0) >= 0.5 * n,
          f"json: vgprof_hot has {hot.get('self')!r} of {n} samples, expected >= 50 % (about 2/3)")
check(pre and (pre.get("self") or 0) > 0, "json: no samples in before_load (the second before the dlopen)")
both = (hot or {}).get("self", 0) + (pre or {}).get("self", 0)
check(n and both >= 0.9 * n, f"json: vgprof_hot + before_load = {both} of {n} samples; "
      f"top functions {sorted(((f.get('self') or 0, k) for k, f in by.items()), reverse=True)[:6]!r}")
for s in stacks:
    fr = s.get("frames") or []
    if fr and fr[-1].get("function") == "vgprof_hot":
        eq(f"json: stack {[f.get('function') for f in fr]}: vgprof_hot inlined", False, fr[-1].get("inlined"))
        check(os.path.basename(str(fr[-1].get("file"))) == "libvgprof.c",
              f"json: vgprof_hot's file {fr[-1].get('file')!r}, expected libvgprof.c (its DWARF)")
        break
print(f"json: {n} samples; vgprof_hot {(hot or {}).get('self')} in {leaf_images(stacks, 'vgprof_hot')}, "
      f"before_load {(pre or {}).get('self')}")
done()
PY
echo "ok"
