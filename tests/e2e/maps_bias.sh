#!/bin/bash
# maps_bias: `vigil maps --json` of a PIE and a non-PIE target: every image's
# load_bias is exactly the dynamic linker's dlpi_addr (main program, libc,
# ld.so), bias_method "exact", build-ids equal; regions equal /proc/PID/maps
# line for line; the PROCMAP_QUERY walk (VIGIL_MAPS_SOURCE=query) and the text parser
# (VIGIL_MAPS_SOURCE=text) give identical regions and images.
source "$(dirname "$0")/lib.sh"

for variant in pie nonpie; do
	truth=$T/$variant.truth
	start_target "tgt_globals_$variant" "$truth"
	wait_truth "$truth" ready
	pid=$(truth_get "$truth" pid)

	VIGIL_MAPS_SOURCE=query vg "ioctl_$variant" maps "$pid" --json
	assert_rc 0
	VIGIL_MAPS_SOURCE=text vg "text_$variant" maps "$pid" --json
	assert_rc 0
	cp "/proc/$pid/maps" "$T/procmaps_$variant"

	vg_py "$variant" "$truth" "$T/ioctl_$variant.out" "$T/text_$variant.out" \
		"$T/procmaps_$variant" <<'PY'
import sys
from vgcheck import *

variant, truth_path, ioctl_path, text_path, procmaps = sys.argv[1:]
truth = Truth(truth_path)
proc = read_proc_maps(procmaps)
docs = {"ioctl": load_json(ioctl_path), "text": load_json(text_path)}

for src, doc in docs.items():
    w = f"{variant}/{src}"
    check_header(doc, "maps", truth.pid, w)
    regions = [norm_region(r, f"{w} regions[{i}]") for i, r in enumerate(get(doc, "regions"))]
    eq(f"{w}: number of regions vs /proc/PID/maps lines", len(proc), len(regions))
    if proc and regions:
        eq(f"{w}: first region", proc[0], regions[0])
        eq(f"{w}: last region", proc[-1], regions[-1])
    eq_list(f"{w}: regions vs /proc/PID/maps", proc, regions)
    for r in get(doc, "regions"):
        check(isinstance(r.get("kind"), str) and r.get("kind"), f"{w}: region without kind: {r!r}")

    images = get(doc, "images")
    mains = [im for im in images if im.get("is_main") is True]
    eq(f"{w}: number of images with is_main", 1, len(mains))
    for o in truth.files():
        found = [im for im in images if im.get("path") == o["path"]]
        if not check(len(found) == 1, f"{w}: expected one image {o['path']}, found {len(found)}; "
                     f"images: {[im.get('path') for im in images]}"):
            continue
        im = found[0]
        iw = f"{w}: image {o['path']}"
        eq_addr(f"{iw} load_bias (dl_iterate_phdr's dlpi_addr)", o["bias"], addr(iw + " load_bias", im.get("load_bias")))
        eq(f"{iw} bias_method", "exact", im.get("bias_method"))
        eq(f"{iw} build_id", o["build_id"], im.get("build_id"))
        eq(f"{iw} is_main", o["kind"] == "main", im.get("is_main"))
        eq(f"{iw} deleted", False, im.get("deleted"))
        check(im.get("open_via") in ("map_files", "proc_root"), f"{iw} open_via: {im.get('open_via')!r}")
        mine = [p for p in proc if p["path"] == o["path"]]
        if mine:
            eq_addr(f"{iw} low (lowest mapping start)", min(p["start"] for p in mine), addr(iw + " low", im.get("low")))
            eq_addr(f"{iw} high (highest mapping end)", max(p["end"] for p in mine), addr(iw + " high", im.get("high")))

# Both sources must agree on everything but maps_source.
a, b = docs["ioctl"], docs["text"]
check(a.get("maps_source") != b.get("maps_source"),
      f"{variant}: VIGIL_MAPS_SOURCE=text did not change maps_source ({a.get('maps_source')!r})")
eq_list(f"{variant}: regions ioctl vs text", a.get("regions"), b.get("regions"))
eq_list(f"{variant}: images ioctl vs text", a.get("images"), b.get("images"))
done()
PY

	# The table names every region's file and one line per image.
	vg "table_$variant" maps "$pid"
	assert_rc 0
	exe=$(truth_get "$truth" "obj main" | cut -d' ' -f3-)
	grep -qF "$exe" "$T/table_$variant.out" || { show_last; fail "table of $variant lacks $exe"; }
	grep -qF "libc.so.6" "$T/table_$variant.out" || { show_last; fail "table of $variant lacks libc.so.6"; }
	echo "ok: $variant"
done
