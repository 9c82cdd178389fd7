#!/bin/bash
# sym_cold_batch: a large batch without the persistent index (the cold
# path: the DWARF indexed in memory as lookups go, a prefetch thread on
# the other core) is answered on two threads once every CU is indexed:
# the rest of that batch with the second thread helping (cmd_sym.c
# lookup_sorted), later batches on the two-thread path from their start.
# Its answers must be byte-identical to those of the same run allowed
# one CPU (taskset: one thread answers everything), in input order.
#
# tgt_inline (three CUs, inline frames, padding) byte by byte over its
# .text, and libc with libc6-dbg's DWARF (some two thousand CUs), every
# 17th byte of its .text; shuffled with a fixed seed, with lines that are
# not addresses and symbolic ones among them; both styles.  The input is
# a file read 64 KiB at a time: several batches.  strace shows the
# second answering thread started (the prefetch thread is the other).
source "$(dirname "$0")/lib.sh"

command -v taskset >/dev/null || harness_error "taskset not installed (util-linux)"
command -v strace >/dev/null || harness_error "strace not installed (scripts/install-deps.sh test)"
cpus=$("$PYTHON" -c 'import os; print(len(os.sched_getaffinity(0)))')
(( cpus >= 2 )) || skip "one CPU allowed: a batch is never split"
one_cpu=$("$PYTHON" -c 'import os; print(min(os.sched_getaffinity(0)))')
libc=/lib/x86_64-linux-gnu/libc.so.6
dpkg -s libc6-dbg >/dev/null 2>&1 || harness_error "libc6-dbg not installed (scripts/install-deps.sh build)"

for bin in "$TARGETS/tgt_inline" "$libc"; do
	name=${bin##*/}
	step=1
	[[ $bin == "$libc" ]] && step=17
	read -r lo size < <(readelf -SW "$bin" | awk '$2 == ".text" { print $4, $6 }')
	[[ -n ${lo:-} ]] || harness_error "no .text in $bin"
	"$PYTHON" -c "
import random
lo, size = int('$lo', 16), int('$size', 16)
lines = ['0x%x' % a for a in range(lo, lo + size, $step)]
lines += ['not-an-address', '0xzz', '%x' % (lo + 1), '@0x%x' % lo]
random.Random(20).shuffle(lines)
print('\n'.join(lines))" >"$T/$name.in"
	n=$(wc -l <"$T/$name.in")
	(( n > 3 * 4096 )) || harness_error "$name: only $n input lines"
	for style in vigil llvm; do
		rc=0
		taskset -c "$one_cpu" "$VIGIL" --no-cache sym --bin "$bin" --style "$style" <"$T/$name.in" \
			>"$T/$name.$style.one" 2>"$T/$name.$style.one.err" || rc=$?
		(( rc == 2 )) || { cat "$T/$name.$style.one.err" >&2; fail "$name $style on one CPU: exit $rc, not 2"; }
		rc=0
		# LeakSanitizer cannot run under ptrace (the ASan build).
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -f -qq -e trace=clone,clone3 -o "$T/$name.$style.strace" \
			"$VIGIL" --no-cache sym --bin "$bin" --style "$style" <"$T/$name.in" \
			>"$T/$name.$style.two" 2>"$T/$name.$style.two.err" || rc=$?
		(( rc == 2 )) || { cat "$T/$name.$style.two.err" >&2; fail "$name $style: exit $rc, not 2"; }
		grep -q "  #1 \|(inlined)\|^$" "$T/$name.$style.one" || fail "$name $style: no answer has frames"
		threads=$(grep -c "clone" "$T/$name.$style.strace" || true)
		(( threads >= 2 )) || fail "$name $style: $threads threads started, not the prefetch one and a second answering one"
		cmp -s "$T/$name.$style.one" "$T/$name.$style.two" || {
			diff "$T/$name.$style.one" "$T/$name.$style.two" | head -20 >&2
			fail "$name $style: the answers on two threads differ from those on one"
		}
		cmp -s "$T/$name.$style.one.err" "$T/$name.$style.two.err" ||
			fail "$name $style: stderr differs: $(cat "$T/$name.$style.two.err")"
	done
done
grep -q "(inlined)" "$T/tgt_inline.vigil.two" || fail "tgt_inline: no inline frame in the answers"
echo ok
