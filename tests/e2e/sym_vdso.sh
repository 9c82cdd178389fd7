#!/bin/bash
# sym_vdso: the vDSO is an ELF image the kernel maps from its own memory
# ([vdso], AT_SYSINFO_EHDR).  tgt_images vdso lists every function of its
# vDSO's .dynsym (read from the mapped image itself).  vigil must:
#  - list it in `maps --json` as image "[vdso]" (target_memory, exact bias
#    = the mapping's start, the build-id of its note);
#  - name every one of those addresses (and one inside each function) by a
#    name the vDSO gives that address, __vdso_clock_gettime for the
#    clock_gettime entry (the global name, as perf does), never "not an ELF
#    image";
#  - accept the names back: __vdso_clock_gettime and [vdso]:clock_gettime.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_images "$truth" vdso
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

args=()
while read -r _ name a size; do
	args+=("$a" "$(printf '0x%x' $((a + size / 2)))")
done < <(grep '^vdsosym ' "$truth")
((${#args[@]})) || harness_error "the target found no function in its vDSO"
vg addrs sym "$pid" "${args[@]}" --json
assert_rc 0
vg names sym "$pid" __vdso_clock_gettime '[vdso]:clock_gettime' '[vdso]:clock_gettime+3' --json
assert_rc 0
vg maps maps "$pid" --json
assert_rc 0

vg_py "$truth" <<'PY' || { show_last; fail "vigil sym on the vDSO: see above"; }
import os, sys
from vgcheck import *
T = os.environ["T"]
lines = [l.split() for l in open(sys.argv[1])]
base = int([l for l in lines if l[0] == "vdso"][0][1], 16)
syms = [(l[1], int(l[2], 16), int(l[3])) for l in lines if l[0] == "vdsosym"]
names_at = {}
for name, a, size in syms:
    names_at.setdefault(a, set()).add(name)

m = load_json(f"{T}/maps.out")
v = [i for i in get(m, "images") if i.get("path") == "[vdso]"]
if check(len(v) == 1, f"maps: one [vdso] image expected, got {[i.get('path') for i in get(m, 'images')]}"):
    eq_addr("maps: [vdso] low", base, addr("low", v[0].get("low")))
    eq("maps: [vdso] open_via", "target_memory", v[0].get("open_via"))
    eq("maps: [vdso] bias_method", "exact", v[0].get("bias_method"))
    check(len(v[0].get("build_id") or "") >= 16, f"maps: [vdso] build-id {v[0].get('build_id')!r}")

doc = load_json(f"{T}/addrs.out")
res = get(doc, "results")
i = 0
for name, a, size in syms:
    for where, x in (("entry", a), ("middle", a + size // 2)):
        r = res[i]
        i += 1
        w = f"{name} {where} 0x{x:x}"
        eq(f"{w}: image", "[vdso]", r.get("image"))
        check(r.get("symbol") in names_at[a], f"{w}: symbol {r.get('symbol')!r}, expected one of {sorted(names_at[a])}")
        fr = r.get("frames") or [{}]
        check(fr[0].get("function") in names_at[a], f"{w}: function {fr[0].get('function')!r}")
        eq_addr(f"{w}: symbol_address", a, addr(w, r.get("symbol_address")))
        eq_addr(f"{w}: static_address", x - base, addr(w, r.get("static_address")))
cg = [a for name, a, size in syms if name == "__vdso_clock_gettime"]
if check(cg, "the vDSO has no __vdso_clock_gettime"):
    r = [r for r in res if addr("a", r.get("address")) == cg[0]][0]
    eq("clock_gettime entry: the global name", "__vdso_clock_gettime", r.get("symbol"))
    doc = load_json(f"{T}/names.out")
    for r, off in zip(get(doc, "results"), (0, 0, 3)):
        eq_addr(f"{r.get('input')}: address", cg[0] + off, addr("address", r.get("address")))
        eq(f"{r.get('input')}: image", "[vdso]", r.get("image"))
done()
PY
echo "ok: ${#args[@]} vDSO addresses"
