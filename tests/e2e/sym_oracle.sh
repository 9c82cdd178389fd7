#!/bin/bash
# sym_oracle: `vigil sym --bin FILE --json` against two oracles,
# llvm-symbolizer-14 --inlining and eu-addr2line -f -i, on 10,000 random
# instruction starts inside function symbols of tgt_inline (-O2 -g, deep
# inlining across files) and 10,000 of libc.so.6 (DWARF from libc6-dbg's
# /usr/lib/debug/.build-id file).  Whole inline chains (every frame's
# function and file:line) must agree with at least one oracle for >= 99.9%
# of the addresses of each binary; every disagreement is printed with all
# answers.  Cases where vigil is right and both oracles wrong are listed,
# with the reason, in sym_oracle_expected.txt.  Fails (not skips) while
# `vigil sym` does not exist.  The work is in sym_oracle.py.
source "$(dirname "$0")/lib.sh"

LIBC=/lib/x86_64-linux-gnu/libc.so.6
for tool in llvm-symbolizer-14 eu-addr2line objdump readelf; do
	command -v "$tool" >/dev/null || harness_error "$tool not installed (scripts/install-deps.sh)"
done
[[ -x $TARGETS/tgt_inline ]] || harness_error "target $TARGETS/tgt_inline not built"
bid=$(readelf -n "$LIBC" | sed -n 's/.*Build ID: *//p')
[[ -f /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] ||
	harness_error "no debug file for $LIBC (build-id $bid): install libc6-dbg"

# tgt_inline is one big CU, where eu-addr2line needs ~1.4 ms an address:
# it answers 2,000 (and every address where vigil and llvm disagree);
# on libc's small CUs it is fast enough for all 10,000.
"$PYTHON" "$E2E_DIR/sym_oracle.py" --vigil "$VIGIL" \
	--bin tgt_inline "$TARGETS/tgt_inline" 2000 \
	--bin libc "$LIBC" 10000 \
	--expected "$E2E_DIR/sym_oracle_expected.txt" ||
	fail "sym_oracle.py failed (see above)"
