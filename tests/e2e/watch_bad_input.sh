#!/bin/bash
# watch_bad_input: what `vigil watch` refuses before arming anything (no
# breakpoint needed: runs for real on every machine), each with its exit
# code (2 bad input, 4 dead PID), one stderr line "vigil: error: ..." that
# says what is wrong, nothing on stdout, and with --json an error document:
# an unaligned address (names the aligned address and --len), an unmapped
# one, a read-only one (.rodata, .text) for a write watch, five plain watches (5
# debug registers), three follows (6), --len 3, a dead PID, a --duration
# out of range (0, over a year, 2^64-1); expressions: an unknown member
# (print's error, with the suggestion), a type wider than 8 bytes (a member
# suggested), a null pointer hop at start (exit 1: the expression is fine,
# the target's value is not), more hops than debug registers.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_watch "$truth" single 1
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
cell=$(truth_sym "$truth" g_cell runtime)

# A PID that was alive and is not any more.
sleep 0 &
dead=$!
wait "$dead" || true

# refuse NAME RC REGEX ARGS...  - vigil watch ARGS exits RC, one error line
# matching REGEX (grep -E), no stdout; then the same with --json: an error
# document with exit_code RC whose message matches REGEX too.
refuse() {
	local name=$1 rc=$2 re=$3
	shift 3
	vg "$name" watch "$@"
	assert_rc "$rc"
	assert_one_error_line
	grep -Eq -- "$re" "$T/$name.err" || { show_last; fail "$LAST_CMD: the error does not match /$re/"; }
	[[ ! -s $T/$name.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the error"; }
	vg "${name}_json" watch "$@" --json
	assert_rc "$rc"
	vg_py "$T/${name}_json.out" "$rc" "$re" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: bad error document"; }
import re, sys
from vgcheck import *
doc = load_json(sys.argv[1])
check_error_doc(doc, int(sys.argv[2]), sys.argv[4])
m = (doc.get("error") or {}).get("message") or ""
check(re.search(sys.argv[3], m), f"{sys.argv[4]}: error.message {m!r} does not match /{sys.argv[3]}/")
done()
PY
	echo "ok: $name: exit $rc, $(head -c 160 "$T/$name.err")"
}

refuse expr_member 2 "g_head->mdi: struct chead has no member 'mdi'; did you mean 'mid'\\?" \
	"$pid" 'g_head->mdi->tail->val'
refuse expr_wide 2 "g_chead is struct chead \\(16 bytes\\): a hardware breakpoint watches 1, 2, 4 or 8 aligned bytes; watch one member \\(g_chead.tag\\)" \
	"$pid" --expr g_chead
refuse expr_deref_wide 2 "watch one member \\(\\(\\*g_head\\).tag\\)" "$pid" '*g_head'
refuse expr_null 1 "g_nomid->tail: null pointer g_nomid" "$pid" 'g_nomid->tail->val'
refuse expr_hops 2 "needs 5 debug registers \\(4 pointer hops \\+ leaf\\); x86 has 4" \
	"$pid" '(*g_headp)->mid->tail->val'
aligned=$(printf '0x%x' "$cell")
refuse unaligned 2 "not aligned to --len 8.*$aligned --len 8" "$pid" g_cell+4
refuse unaligned_len 2 "not aligned to --len 4" "$pid" g_cell+2 --len 4
refuse unmapped 2 "0x1000 .*not mapped" "$pid" 0x1000
refuse rodata 2 "read-only region" "$pid" g_rodata
refuse text 2 "read-only region \\(r-xp" "$pid" vgw_store_reg --len 1
refuse five 2 "5 watches need 5 hardware debug registers" "$pid" g_more g_more+8 g_more+16 g_more+24 g_more+32
refuse follows 2 "3 watches need 6 hardware debug registers" "$pid" \
	--follow g_ptrs+8 --follow g_ptrs+8+8 --follow g_ptrs+16+8
refuse follow_plus 2 "3 watches need 5 hardware debug registers" "$pid" g_cell --follow g_ptrs+8 --follow g_ptrs+8+8
refuse len3 2 "--len" "$pid" g_cell --len 3
refuse dead 4 "$dead" "$dead" 0x1000
# A duration whose nanoseconds overflow stopped at once with "hits 0,
# exact"; the same parser and bounds as profile and probe (1 ms..a year).
refuse duration_u64max 2 "invalid --duration '18446744073709551615'" "$pid" g_cell --duration 18446744073709551615
refuse duration_year 2 "invalid --duration '31536000001'" "$pid" g_cell --duration 31536000001
refuse duration_zero 2 "invalid --duration '0'" "$pid" g_cell --duration 0

# The limits themselves are accepted: four plain watches, two follows.
vg four watch "$pid" g_more g_more+8 g_more+16 g_more+24 --duration 1
[[ $RC == 0 || $RC == 3 ]] || { show_last; fail "$LAST_CMD: four watches must be accepted (exit 0, or 3 where breakpoints do not fire)"; }
! grep -q "debug registers;" "$T/four.err" || { show_last; fail "$LAST_CMD: four watches refused for the count"; }
echo "ok: four plain watches accepted (exit $RC)"
