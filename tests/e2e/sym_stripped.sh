#!/bin/bash
# sym_stripped: stripped code is not padding.  An address that no symbol
# covers but an .eh_frame FDE does is inside a function whose symbol was
# stripped: vigil sym --bin must answer "[function at 0xSTART, no symbol]"
# with START the FDE's first address (readelf --debug-dump=frames is the
# oracle), source eh_frame, never "padding".  PLT stubs are NAME@plt (the
# names objdump -d gives them), and NAME@plt is accepted back as input.
# Checked on a stripped copy of tgt_images, and on /usr/bin/python3.11
# (Debian ships it stripped) when it is installed.
source "$(dirname "$0")/lib.sh"

command -v readelf >/dev/null && command -v objdump >/dev/null && command -v strip >/dev/null ||
	skip "binutils (readelf, objdump, strip) not installed"
cp "$TARGETS/tgt_images" "$T/stripped"
strip -s "$T/stripped"

check_bin() {	# check_bin NAME FILE: every FDE's middle, every PLT stub
	local name=$1 file=$2
	readelf --debug-dump=frames "$file" >"$T/$name.frames" 2>/dev/null
	objdump -d "$file" >"$T/$name.dis" 2>/dev/null
	"$PYTHON" -S - "$T/$name.frames" "$T/$name.dis" "$T/$name.in" <<'PY'
import random, re, sys
fdes = []
for l in open(sys.argv[1]):
    m = re.search(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", l)
    if m and int(m.group(2), 16) > int(m.group(1), 16):
        fdes.append((int(m.group(1), 16), int(m.group(2), 16)))
plt = re.findall(r"^([0-9a-f]+) <([^>]+@plt)>:", open(sys.argv[2]).read(), re.M)
random.seed(1)
if len(fdes) > 400:
    fdes = random.sample(fdes, 400)
with open(sys.argv[3], "w") as f:
    for s, e in fdes:
        f.write(f"fde {s:x} {e:x} {(s + e) // 2:x}\n")
    for a, n in plt[:200]:
        f.write(f"plt {int(a, 16):x} {n}\n")
PY
	[[ -s $T/$name.in ]] || harness_error "no FDE or PLT entry found in $file"
	awk '{ print "0x" $NF; if ($1 == "plt") print "0x" $2 }' "$T/$name.in" | awk '$1 !~ /@plt$/' >"$T/$name.addrs"
	awk '$1 == "plt" { print $3 }' "$T/$name.in" >>"$T/$name.addrs"
	LAST=$name
	LAST_CMD="vigil sym --bin $file --json < $T/$name.addrs"
	set +e
	"$VIGIL" sym --bin "$file" --json <"$T/$name.addrs" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
	set -e
	assert_rc 0
	vg_py "$T/$name.in" "$T/$name.out" "$name" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import sys
from vgcheck import *
want, doc, name = sys.argv[1], load_json(sys.argv[2]), sys.argv[3]
res = {r.get("input"): r for r in get(doc, "results")}
n_fde = n_plt = 0
for l in open(want):
    w = l.split()
    if w[0] == "fde":
        s, e, mid = (int(x, 16) for x in w[1:])
        r = res.get(f"0x{mid:x}") or {}
        fr = (r.get("frames") or [{}])[0].get("function")
        if r.get("symbol") is None:
            n_fde += 1
            eq(f"{name} 0x{mid:x} (FDE 0x{s:x}..0x{e:x}): frame", f"[function at 0x{s:x}, no symbol]", fr)
            eq(f"{name} 0x{mid:x}: source", "eh_frame", r.get("source"))
            eq_addr(f"{name} 0x{mid:x}: function_start", s, addr("function_start", r.get("function_start")))
            check("padding" not in (r.get("why") or ""), f"{name} 0x{mid:x}: why {r.get('why')!r}")
    else:
        a, n = int(w[1], 16), w[2]
        n_plt += 1
        r = res.get(f"0x{a:x}") or {}
        eq(f"{name} PLT 0x{a:x}: symbol", n, r.get("symbol"))
        eq(f"{name} PLT 0x{a:x}: offset", "0x0", r.get("offset"))
        r = res.get(n) or {}
        eq_addr(f"{name} input {n}: address", a, addr(n, r.get("address")))
check(n_fde > 0, f"{name}: no FDE without a symbol checked")
print(f"{name}: {n_fde} stripped functions, {n_plt} PLT stubs")
done()
PY
}

check_bin stripped "$T/stripped"
if [[ -x /usr/bin/python3.11 ]]; then
	check_bin python3.11 /usr/bin/python3.11
else
	echo "note: /usr/bin/python3.11 not installed, checked tgt_images only"
fi
echo "ok"
