#!/bin/bash
# sym_index_batch: a large batch on standard input with the persistent
# index present is looked up on two threads (sym_batch.c, at 2,048
# addresses and more): its answers must be byte-identical to the
# cold run's (--no-cache: one thread, the DWARF), in input order.
#
# Every byte of tgt_inline's .text (lines, padding, inline frames) and
# every byte of tgt_cxx's (demangled names: the name cache both threads
# fill), shuffled with a fixed seed so that input order is not address
# order, with lines that are not addresses and symbolic ones among them
# (main+0x4, @0xHEX: answered after the two threads, by the main one);
# both styles.  The input is a file read 64 KiB at a time: batches of
# some 4,000 lines, several of them split between the threads, each
# written by the second thread while the first goes on (sym_batch.c's
# write_async): into a file, into a pipe, and into /dev/full, which
# must fail the run as a failed write does.
source "$(dirname "$0")/lib.sh"

for bin in "$TARGETS/tgt_inline" "$TARGETS/tgt_cxx"; do
	name=${bin##*/}
	read -r lo size < <(readelf -SW "$bin" | awk '$2 == ".text" { print $4, $6 }')
	[[ -n ${lo:-} ]] || harness_error "no .text in $bin"
	"$PYTHON" -c "
import random
lo, size = int('$lo', 16), int('$size', 16)
lines = ['0x%x' % a for a in range(lo, lo + size)]
lines += ['not-an-address', '0xzz', '%x' % (lo + 1), 'main', 'main+0x4', '@0x%x' % lo]
random.Random(20).shuffle(lines)
print('\n'.join(lines))" >"$T/$name.in"
	n=$(wc -l <"$T/$name.in")
	(( n > 3 * 4096 )) || harness_error "$name: only $n input lines"
	vg build sym --index "$bin"
	assert_rc 0
	for style in vigil llvm; do
		rc=0
		"$VIGIL" --no-cache sym --bin "$bin" --style "$style" <"$T/$name.in" \
			>"$T/$name.$style.cold" 2>"$T/$name.$style.cold.err" || rc=$?
		(( rc == 2 )) || { cat "$T/$name.$style.cold.err" >&2; fail "$name $style cold: exit $rc, not 2"; }
		rc=0
		"$VIGIL" sym --bin "$bin" --style "$style" <"$T/$name.in" \
			>"$T/$name.$style.warm" 2>"$T/$name.$style.warm.err" || rc=$?
		(( rc == 2 )) || { cat "$T/$name.$style.warm.err" >&2; fail "$name $style with the index: exit $rc, not 2"; }
		grep -q "  #1 \|(inlined)\|^$" "$T/$name.$style.cold" || fail "$name $style: no answer has frames"
		cmp -s "$T/$name.$style.cold" "$T/$name.$style.warm" || {
			diff "$T/$name.$style.cold" "$T/$name.$style.warm" | head -20 >&2
			fail "$name $style: the answers with the index differ from the cold ones"
		}
		cmp -s "$T/$name.$style.cold.err" "$T/$name.$style.warm.err" ||
			fail "$name $style: stderr differs: $(cat "$T/$name.$style.warm.err")"
	done
done
in=$T/tgt_inline.in
rc=0
"$VIGIL" sym --bin "$TARGETS/tgt_inline" --style llvm <"$in" 2>"$T/pipe.err" | cat >"$T/pipe.out" || rc=$?
(( rc == 2 )) || fail "into a pipe: exit $rc, not 2: $(cat "$T/pipe.err")"
cmp -s "$T/tgt_inline.llvm.cold" "$T/pipe.out" || fail "into a pipe: the answers differ from the cold ones"
rc=0
"$VIGIL" sym --bin "$TARGETS/tgt_inline" --style llvm <"$in" >/dev/full 2>"$T/full.err" || rc=$?
(( rc == 1 )) || fail "into /dev/full: exit $rc, not 1: $(cat "$T/full.err")"
grep -q "cannot write output: No space left on device; the output is incomplete" "$T/full.err" ||
	fail "into /dev/full: $(cat "$T/full.err")"
# One batch (3,000 lines in one read: two threads, the write left to the
# second) with a line that is not an address.  Into /dev/full the run
# fails as a failed write does, and says only that (the last write is
# seen through before the count of bad lines); into a slow pipe with
# stderr joined, the count comes after every answer.
grep -m 3000 '^0x' "$in" >"$T/one.in"
echo not-an-address >>"$T/one.in"
rc=0
"$VIGIL" sym --bin "$TARGETS/tgt_inline" --style llvm <"$T/one.in" >/dev/full 2>"$T/one.full.err" || rc=$?
(( rc == 1 )) || fail "one batch into /dev/full: exit $rc, not 1: $(cat "$T/one.full.err")"
grep -q "cannot write output" "$T/one.full.err" || fail "one batch into /dev/full: $(cat "$T/one.full.err")"
grep -q "not an address" "$T/one.full.err" && fail "one batch into /dev/full: the bad lines were counted: $(cat "$T/one.full.err")"
rc=0
"$VIGIL" sym --bin "$TARGETS/tgt_inline" --style llvm <"$T/one.in" 2>&1 | { sleep 0.3; cat; } >"$T/one.joined" || rc=$?
(( rc == 2 )) || fail "one batch, stderr joined: exit $rc, not 2"
tail -n 1 "$T/one.joined" | grep -q "^vigil: error: 1 input line was not an address" ||
	fail "one batch, stderr joined: the count is not the last line: $(grep -n "vigil: error" "$T/one.joined")"
[[ $(grep -c "vigil: error" "$T/one.joined") == 1 ]] || fail "one batch, stderr joined: the count is inside the answers"
grep -q "::" "$T/tgt_cxx.vigil.warm" || fail "tgt_cxx: no demangled C++ name in the answers"
grep -q "  (main+0x4)$" "$T/tgt_inline.vigil.warm" || fail "tgt_inline: main+0x4 was not answered"
echo ok
