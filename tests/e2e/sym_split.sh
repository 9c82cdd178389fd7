#!/bin/bash
# sym_split: split DWARF (gcc -gsplit-dwarf).  The main file keeps only a
# skeleton unit (ranges, DW_AT_comp_dir, DW_AT_dwo_name, the line table);
# functions and inline scopes are in the .dwo, or in a .dwp package next
# to the binary.  vigil sym --bin must give, for every instruction start
# of work() (an inlined helper in a loop), the frames (function, file
# name, line, column, inlined) it gives for the same code built without
# -gsplit-dwarf (eu-addr2line 0.188 loses the inline frames of split
# units, so it is no oracle here): DWARF 5 and DWARF 4 with the .dwo.
# DWARF 4 packaged by dwp with the .dwo removed: libdw 0.188 (Debian 12)
# cannot read a .dwp, so only the lines (from the skeleton) must be right,
# and a warning must say that the split units were not found.
source "$(dirname "$0")/lib.sh"

command -v gcc >/dev/null && command -v eu-addr2line >/dev/null && command -v objdump >/dev/null ||
	skip "gcc, elfutils or binutils not installed"
cat >"$T/s.c" <<'C'
#include <stdio.h>
static inline __attribute__((always_inline)) int sq(int x) { return x * x + 1; }
__attribute__((noinline)) int work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += sq(i) ^ (s >> 3);
	return s;
}
int main(int argc, char **argv) { (void)argv; printf("%d\n", work(argc * 1000)); return 0; }
C

check_split() {	# check_split DIR PLAINDIR
	local dir=$1 plain=$2 addrs
	addrs=$(objdump -d --no-show-raw-insn "$dir/s" |
		awk '/<work>:$/ { on = 1; next } /^$/ { on = 0 } on && /^ +[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }')
	[[ -n $addrs ]] || harness_error "no instruction of work() in $dir/s"
	# shellcheck disable=SC2086
	vg "$(basename "$dir")" sym --bin "$dir/s" $addrs --json
	assert_rc 0
	# shellcheck disable=SC2086
	vg "$(basename "$plain")" sym --bin "$plain/s" $addrs --json
	assert_rc 0
	vg_py "$T/$(basename "$plain").out" "$T/$(basename "$dir").out" <<'PY' || { show_last; fail "split DWARF in $dir: see above"; }
import os, sys
from vgcheck import *
def frames(path):
    return [[(f.get("function"), os.path.basename(f.get("file") or ""), f.get("line"), f.get("column"),
              f.get("inlined")) for f in r.get("frames") or []] for r in get(load_json(path), "results")]
want, got = frames(sys.argv[1]), frames(sys.argv[2])
eq_list("frames vs the same code without -gsplit-dwarf", want, got)
res = get(load_json(sys.argv[2]), "results")
for r in res:
    check(r.get("source") == "dwarf" and (r.get("file") or "").endswith("/s.c") and r.get("line"),
          f"{r.get('input')}: source {r.get('source')} file {r.get('file')} line {r.get('line')}")
check(any(f.get("inlined") and f.get("function") == "sq" for r in res for f in r.get("frames") or []),
      "no address gave sq() inlined")
print(f"{len(res)} addresses of work()")
done()
PY
}

mkdir -p "$T/dwo" "$T/plain5" "$T/plain4"
(cd "$T/plain5" && gcc -O2 -g -o s ../s.c && cd ../plain4 && gcc -O2 -gdwarf-4 -o s ../s.c) ||
	harness_error "gcc failed"
(cd "$T/dwo" && gcc -O2 -g -gsplit-dwarf -o s ../s.c) || harness_error "gcc -gsplit-dwarf failed"
[[ -f $T/dwo/s.dwo ]] || harness_error "gcc left no s.dwo"
check_split "$T/dwo" "$T/plain5"

mkdir -p "$T/dwo4"
(cd "$T/dwo4" && gcc -O2 -gdwarf-4 -gsplit-dwarf -o s ../s.c) || harness_error "gcc -gdwarf-4 -gsplit-dwarf failed"
check_split "$T/dwo4" "$T/plain4"

if command -v dwp >/dev/null; then
	mkdir -p "$T/dwp"
	(cd "$T/dwp" && gcc -O2 -gdwarf-4 -gsplit-dwarf -o s ../s.c && dwp -e s -o s.dwp && rm -f s.dwo) ||
		harness_error "gcc -gdwarf-4 -gsplit-dwarf + dwp failed"
	addr=$(nm "$T/dwp/s" | awk '$3 == "work" { print "0x" $1 }')
	vg dwp sym --bin "$T/dwp/s" "$addr" --json
	assert_rc 0
	vg plainw sym --bin "$T/plain4/s" "$addr" --json
	vg_py <<'PY' || { show_last; fail "split DWARF packaged with dwp: see above"; }
import os
from vgcheck import *
T = os.environ["T"]
d, p = load_json(f"{T}/dwp.out"), load_json(f"{T}/plainw.out")
r, q = get(d, "results")[0], get(p, "results")[0]
eq("dwp: line of work()", q.get("line"), r.get("line"))
w = " ".join(d.get("warnings") or [])
check("split DWARF units" in w and ".dwp" in w, f"dwp: no warning about the split units: {d.get('warnings')}")
done()
PY
else
	echo "note: dwp not installed, .dwp packages not checked"
fi
echo ok
