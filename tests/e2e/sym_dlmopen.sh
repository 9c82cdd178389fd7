#!/bin/bash
# sym_dlmopen: libm.so.6 loaded twice, the second time in a new link-map
# namespace (dlmopen(LM_ID_NEWLM)): one file, two mapping sets, two biases.
# tgt_images dlmopen writes each copy's bias (l_addr) and its cos().
# vigil maps must list two libm images with those exact biases, and sym
# must answer each copy's cos from that copy (static address cos - bias,
# the same in both), not one merged "heuristic" image.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_images "$truth" dlmopen
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg maps maps "$pid" --json
assert_rc 0
vg sym sym "$pid" $(awk '$1 == "copy" { print $4 }' "$truth") --json
assert_rc 0

vg_py "$truth" <<'PY' || { show_last; fail "vigil on a library loaded twice: see above"; }
import os, sys
from vgcheck import *
T = os.environ["T"]
copies = [(int(l.split()[2], 16), int(l.split()[3], 16)) for l in open(sys.argv[1]) if l.startswith("copy ")]
eq("copies in the truth", 2, len(copies))
imgs = [i for i in get(load_json(f"{T}/maps.out"), "images") if i.get("path", "").endswith("/libm.so.6")]
eq("libm images", 2, len(imgs))
got = sorted(addr("load_bias", i.get("load_bias")) for i in imgs)
eq("libm biases (dlinfo's l_addr)", sorted(b for b, c in copies), got)
for i in imgs:
    eq(f"libm at {i.get('low')}: bias_method", "exact", i.get("bias_method"))
res = get(load_json(f"{T}/sym.out"), "results")
for (bias, cos), r in zip(copies, res):
    w = f"cos of the copy at 0x{bias:x}"
    check((r.get("image") or "").endswith("/libm.so.6"), f"{w}: image {r.get('image')}")
    eq_addr(f"{w}: static_address", cos - bias, addr(w, r.get("static_address")))
    check(r.get("symbol"), f"{w}: no symbol ({r.get('why')})")
done()
PY
echo ok
