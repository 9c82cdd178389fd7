#!/bin/bash
# sym_bss: the loader maps an image's file only up to the last file page
# of its data segment; the rest of .bss (inside PT_LOAD p_memsz) is an
# anonymous mapping right after it.  tgt_images bss has a 3 MiB array in
# .bss: its last byte (bss_tail) lies there, its first (bss_head) in the
# file-backed page.  vigil sym must give both to the executable, with the
# target's own static addresses and the symbol bss_big, not "anonymous
# memory (no ELF image)".
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_images "$truth" bss
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg bss sym "$pid" "$(truth_sym "$truth" bss_head runtime)" "$(truth_sym "$truth" bss_tail runtime)" --json
assert_rc 0
cp "/proc/$pid/maps" "$T/maps"

vg_py "$truth" <<'PY' || { show_last; fail "vigil sym in the anonymous tail of .bss: see above"; }
import os, sys
from vgcheck import *
T = os.environ["T"]
syms = {}
for l in open(sys.argv[1]):
    w = l.split(maxsplit=6)
    if w[0] == "sym":
        syms[w[1]] = (int(w[2], 16), int(w[3], 16), w[6].strip())
maps = read_proc_maps(f"{T}/maps")
tail = syms["bss_tail"][0]
reg = [r for r in maps if r["start"] <= tail < r["end"]]
check(reg and reg[0]["path"] == "", f"harness: bss_tail 0x{tail:x} is not in an anonymous mapping: {reg}")
res = get(load_json(f"{T}/bss.out"), "results")
for r, name in zip(res, ("bss_head", "bss_tail")):
    rt, st, path = syms[name]
    eq(f"{name}: image", path, r.get("image"))
    eq_addr(f"{name}: static_address", st, addr(name, r.get("static_address")))
    eq(f"{name}: symbol", "bss_big", r.get("symbol"))
done()
PY
echo "ok"
