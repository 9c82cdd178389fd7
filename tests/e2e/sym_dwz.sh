#!/bin/bash
# sym_dwz: debug info compressed by dwz (as Debian's and Fedora's debug
# packages are): DIEs shared by two programs move to a common file
# (.gnu_debugaltlink), and inlined functions name their abstract origin
# there by DW_FORM_GNU_ref_alt.  Offsets in that file overlap the main
# file's, so a name cache keyed by DIE offset gives one function's name to
# another.  Two generated programs share 200 inline functions and define
# 200 of their own; every instruction of their 200 callers must give
# eu-addr2line's whole inline chain, names included (elfutils reads the alt
# file; llvm-symbolizer-14 does not).
source "$(dirname "$0")/lib.sh"

for tool in gcc dwz eu-addr2line objdump nm; do
	command -v "$tool" >/dev/null || harness_error "$tool not installed (scripts/install-deps.sh)"
done

cd "$T"
{
	for i in $(seq 0 199); do
		echo "static inline __attribute__((always_inline)) int shared_fn_$i(int x) { return x * $((i + 3)) + $i; }"
	done
} >shared.h
for p in a b; do
	{
		echo '#include "shared.h"'
		for i in $(seq 0 199); do
			echo "static inline __attribute__((always_inline)) int ${p}_own_$i(int x) { return x ^ $((i * 7 + 1)); }"
			echo "__attribute__((noinline)) int ${p}_work_$i(int x) { return shared_fn_$i(${p}_own_$i(x)) + 1; }"
		done
		echo "int main(int argc, char **argv) { (void)argv; int s = 0;"
		for i in $(seq 0 199); do echo "s += ${p}_work_$i(argc);"; done
		echo "return s & 1; }"
	} >"$p.c"
	gcc -O2 -g -o "$p" "$p.c" || harness_error "cannot build $p.c"
done
dwz -m "$T/common.debug" -M "$T/common.debug" a b 2>dwz.err ||
	harness_error "dwz failed: $(cat dwz.err)"
readelf -S a | grep -q gnu_debugaltlink || harness_error "dwz made no alternate file"

# Every instruction of the a_work_* functions.
nm a | awk '/ T a_work_[0-9]+$/ { print $1 }' | sort >starts
[[ $(wc -l <starts) == 200 ]] || harness_error "expected 200 a_work_* functions, found $(wc -l <starts)"
objdump -d --no-show-raw-insn a | awk '
	/^[0-9a-f]+ <a_work_[0-9]+>:$/ { p = 1; next }
	/^$/ { p = 0 }
	p && /^ *[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' >addrs
n=$(wc -l <addrs)
[[ $n -ge 400 ]] || harness_error "only $n instructions found"

# eu-addr2line -f -i: "NAME[ inlined at ...]" then "FILE:LINE[:COL]" per
# frame; vigil --style llvm: NAME then FILE:LINE:COL per frame, blank line
# after each address.  Compare NAME FILE:LINE per frame.
eu-addr2line -f -i -e a <addrs | awk '
	NR % 2 == 1 { sub(/ inlined at .*/, ""); name = $0; next }
	{ split($0, f, ":"); print name " " f[1] ":" f[2] }' >want.raw
"$VIGIL" sym --bin a --style llvm <addrs >vigil.out || fail "vigil sym exited $?"
awk 'NF == 0 { next } { if (++k % 2 == 1) name = $0; else { split($0, f, ":"); print name " " f[1] ":" f[2] } }' \
	vigil.out >got.raw
# eu prints all frames of all addresses in one stream, and so does the
# conversion above: equal streams mean equal chains, address by address
# (both print one frame per line pair, in input order).
if ! cmp -s want.raw got.raw; then
	diff want.raw got.raw | head -20 >&2
	fail "inline chains through the dwz alternate file differ from eu-addr2line (< eu, > vigil)"
fi
grep -q "shared_fn_" got.raw || harness_error "no frame named from the alternate file: the test proves nothing"
echo "ok: $n instructions, $(wc -l <got.raw) frames, same names and lines as eu-addr2line through the dwz file"
