#!/bin/bash
# dlopen_after_start: a library dlopen'ed in the middle of the target's life
# is absent before and present after, with the exact bias and build-id, and
# `read libvgtestlib.so:vglib_counter` reads its value (both maps sources).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_dlopen "$truth" "$TARGETS/libvgtestlib.so"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg before maps "$pid" --json
assert_rc 0
if grep -q libvgtestlib "$T/before.out"; then
	show_last
	fail "libvgtestlib appears before the target loaded it"
fi
vg before_read read "$pid" libvgtestlib.so:vglib_counter 8
assert_rc 2 "reading a symbol of a library not loaded yet"
assert_one_error_line

kill -USR1 "$pid"
wait_truth "$truth" loaded
lib=$(truth_sym "$truth" vglib_counter path)

for src in query text; do
	export VIGIL_MAPS_SOURCE=$src
	vg "maps_$src" maps "$pid" --json
	assert_rc 0
	vg "read_$src" read "$pid" libvgtestlib.so:vglib_counter 8 --json
	assert_rc 0
	vg "bare_$src" read "$pid" vglib_counter 8 --json
	assert_rc 0
	vg "as_$src" read "$pid" libvgtestlib.so:vglib_counter --as u64 --json
	assert_rc 0
	vg_py "$truth" "$lib" "$src" <<'PY'
import os, sys
from vgcheck import *
truth, lib, src = Truth(sys.argv[1]), sys.argv[2], sys.argv[3]
T = os.environ["T"]
m = load_json(f"{T}/maps_{src}.out")
check_header(m, "maps", truth.pid, f"{src} maps")
check_image(m, truth.obj(lib), f"{src} maps")
for o in truth.files():
    if o["kind"] == "main":
        continue
    im = [i for i in m["images"] if i.get("path") == o["path"]]
    if check(im, f"{src}: no image {o['path']}"):
        eq_addr(f"{src}: bias of {o['path']}", o["bias"], addr("load_bias", im[0].get("load_bias")))
sym = truth.syms["vglib_counter"]
for name in ("read", "bare"):
    doc = load_json(f"{T}/{name}_{src}.out")
    check_header(doc, "read", truth.pid, f"{src} {name}")
    check_value_read(doc, sym, f"{src} {name}")
    eq(f"{src} {name}: region.path", lib, doc.get("region", {}).get("path"))
doc = load_json(f"{T}/as_{src}.out")
eq(f"{src} --as u64: value", str(int.from_bytes(bytes.fromhex(sym["hex"]), "little")), doc.get("value"))
done()
PY
	unset VIGIL_MAPS_SOURCE
	echo "ok: $src"
done
