#!/bin/bash
# deleted_library: the target runs code from a library whose file is gone.
# maps shows its regions and image deleted=true with the canonical path (no
# " (deleted)"), the image is still opened (map_files) with the exact bias,
# and its global reads right by runtime address and by IMAGE:SYMBOL.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
copy=$T/libvgcopy.so
start_target tgt_deleted "$truth" "$TARGETS/libvgtestlib.so" "$copy"
wait_truth "$truth" deleted
pid=$(truth_get "$truth" pid)
[[ ! -e $copy ]] || harness_error "$copy still exists"
grep -qF "$copy (deleted)" "/proc/$pid/maps" || harness_error "/proc/$pid/maps does not show $copy (deleted)"
cp "/proc/$pid/maps" "$T/procmaps"
rt=$(truth_sym "$truth" vglib_counter runtime)

for src in query text; do
	export VIGIL_MAPS_SOURCE=$src
	vg "maps_$src" maps "$pid" --json
	assert_rc 0
	vg "img_$src" read "$pid" libvgcopy.so:vglib_counter 8 --json
	assert_rc 0
	vg "rt_$src" read "$pid" "$rt" 8 --json
	assert_rc 0
	vg_py "$truth" "$copy" "$src" <<'PY'
import os, sys
from vgcheck import *
truth, copy, src = Truth(sys.argv[1]), sys.argv[2], sys.argv[3]
T = os.environ["T"]
m = load_json(f"{T}/maps_{src}.out")
check_header(m, "maps", truth.pid, f"{src} maps")
regs = [r for r in get(m, "regions") if r.get("path") == copy]
check(regs, f"{src}: no region with path {copy!r} (the path must not keep ' (deleted)'); "
      f"paths: {sorted(set(str(r.get('path')) for r in m['regions']))}")
for r in regs:
    eq(f"{src}: region {r.get('start')} deleted", True, r.get("deleted"))
proc = [r for r in read_proc_maps(f"{T}/procmaps") if r["path"] == copy]
eq(f"{src}: number of regions of {copy}", len(proc), len(regs))
check_image(m, truth.obj(copy), f"{src} maps", deleted=True, open_via=("map_files",))
sym = truth.syms["vglib_counter"]
for name in ("img", "rt"):
    doc = load_json(f"{T}/{name}_{src}.out")
    check_header(doc, "read", truth.pid, f"{src} {name}")
    check_value_read(doc, sym, f"{src} {name}")
    eq(f"{src} {name}: region.path", copy, doc.get("region", {}).get("path"))
done()
PY
	unset VIGIL_MAPS_SOURCE
	echo "ok: $src"
done
