#!/bin/bash
# profile_node: a real JIT.  node --perf-basic-prof writes
# /tmp/perf-PID.map as V8 compiles; a profile of node spinning in one JS
# function must name most samples after it ("JS:*vigilHotLoop FILE:1:..",
# V8's name in the map, optimized tier or not), with image
# [perf-PID.map], unwound through the JIT and V8's builtins (frame
# pointers, no CFI) down to node::Start and _start, and sym must name the
# address the map gives for it.
# Skips when node is not installed (Debian: apt-get install nodejs).
source "$(dirname "$0")/lib.sh"

command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
cat >"$T/hot.js" <<'JS'
function vigilHotLoop(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s = (s + i * 7) % 1000003;
	return s;
}
let t = 0;
require("fs").writeFileSync(process.argv[2], "ready\n");
for (;;)
	t += vigilHotLoop(5e6);
JS
# (in $T: node --perf-basic-prof also writes isolate-*-v8.log to its cwd)
(cd "$T" && exec node --perf-basic-prof "$T/hot.js" "$T/ready" </dev/null) &
pid=$!
track_pid "$pid"
map=/tmp/perf-$pid.map
trap 'rm -f "$map"; vg_cleanup' EXIT
wait_truth "$T/ready"
# V8 names the function in the map as it compiles it, once per tier, but
# through a buffered stream: wait for the optimized tier's line ("JS:*")
# to reach the file, since no reader can name what is still in node.
for ((i = 0; i < 1000; i++)); do
	grep -q 'JS:\*vigilHotLoop' "$map" 2>/dev/null && break
	sleep 0.01
done
grep -q 'JS:\*vigilHotLoop' "$map" ||
	harness_error "node wrote no JS:*vigilHotLoop line to $map within 10 s"

vg_cpu "$pid" json profile "$pid" --duration 2s --freq 999 -o "$T/p.json"
assert_rc 0
addr=$(awk '/JS:\*vigilHotLoop/ { a = $1 } END { print a }' "$map")
[[ -n $addr ]] || addr=$(awk '/vigilHotLoop/ { a = $1 } END { print a }' "$map")
vg sym sym "$pid" "0x$addr" --json
assert_rc 0

vg_py "$pid" "$map" "$addr" <<'PY' || { show_last; fail "vigil profile of node: see above"; }
import os, sys
from profcheck import *
T, pid, mapfile, addr = os.environ["T"], int(sys.argv[1]), sys.argv[2], int(sys.argv[3], 16)
label = f"[perf-{pid}.map]"
doc = load_json(f"{T}/p.json")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check_sample_count(n, run_cpu_s("json"), 999, "json: observation.samples (all of node's threads)")

leaves = leaf_self(stacks)
hot = {k: v for k, v in leaves.items() if k and "vigilHotLoop" in k}
check(sum(hot.values()) >= n // 2, f"json: {sum(hot.values())} of {n} samples in vigilHotLoop (leaves {sorted(leaves.items(), key=lambda kv: -kv[1])[:6]})")
for fn in hot:
    check(fn.startswith("JS:") and "hot.js" in fn, f"json: leaf {fn!r} is not V8's name from the map")
    eq(f"{fn} leaf images", [label], list(leaf_images(stacks, fn)))

# Unwound through the JIT frames (no CFI: their frame pointers) and V8's
# builtins below them down to node's main: the JS function's callers.
deep = sum(st.get("count") or 0 for st in stacks
           if (st.get("frames") or [{}])[-1].get("function") in hot
           and any((f.get("function") or "").startswith("node::Start(") for f in st["frames"])
           and st["frames"][0].get("function") == "_start")
check(deep >= 0.9 * sum(hot.values()), f"json: only {deep} of {sum(hot.values())} vigilHotLoop samples unwound to node::Start and _start (stops {obs.get('unwind_stops')})")

# The name sym gives is the map's last line covering the address.
names = {}
for line in open(mapfile, errors="replace"):
    parts = line.rstrip("\n").split(" ", 2)
    if len(parts) == 3:
        try:
            s, z = int(parts[0], 16), int(parts[1], 16)
        except ValueError:
            continue
        if s <= addr < s + z:
            names = parts[2]
sd = load_json(f"{T}/sym.out")
r = (sd.get("results") or [{}])[0]
eq("sym source", "perf-map", r.get("source"))
eq("sym image", label, r.get("image"))
eq("sym symbol", names, r.get("symbol"))
print(f"node: {sum(hot.values())} of {n} samples in {sorted(hot)}, {deep} unwound to _start")
done()
PY
