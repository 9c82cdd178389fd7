#!/bin/bash
# scan_bad_input: every bad vigil scan command line exits 2 (4 for a dead
# PID) with exactly one stderr line "vigil: error: ..." and nothing on
# stdout; with --json the error is a JSON document with the same exit code.
# Values out of range or malformed for their type, unknown types, missing
# --type, malformed --range, a scan set that is garbage, truncated, empty or
# missing, a snapshot used without --type, an ordering test on a str set,
# bad --depth, --regions naming no mapped file.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_scan "$truth" 8
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

# bad CODE NAME ARGS...  - vigil ARGS must exit CODE with one error line.
bad() {
	local code=$1 name=$2
	shift 2
	vg "$name" "$@"
	assert_rc "$code"
	assert_one_error_line
	[[ ! -s $T/$name.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the error"; }
}

# Good inputs first (what the bad ones are cut from).
vg set scan "$pid" 1 --type u8 --regions tgt_scan --save "$T/good.set"
assert_rc 0
vg snap scan "$pid" --snapshot "$T/good.snap" --regions tgt_scan
assert_rc 0
vg strset scan "$pid" "tgt_scan" --type str --save "$T/str.set"
assert_rc 0

bad 2 u8_300 scan "$pid" 300 --type u8
# --regions naming no mapped file scanned 0 regions: "0 matches", exit 0.
bad 2 regions_libc scan "$pid" 1 --type i32 --regions libc
grep -q "'libc' matches no mapped file.*(libc\.so\.6, " "$T/regions_libc.err" ||
	{ show_last; fail "$LAST_CMD: the error does not name libc.so.6 first"; }
bad 2 regions_snap scan "$pid" --snapshot "$T/none.snap" --regions no_such_image
[[ ! -e $T/none.snap ]] || fail "$LAST_CMD: a snapshot was written"
grep -q 300 "$T/u8_300.err" || { show_last; fail "$LAST_CMD: the error does not name 300"; }
bad 2 u8_neg scan "$pid" -1 --type u8
bad 2 i8_128 scan "$pid" 128 --type i8
bad 2 i8_m129 scan "$pid" -129 --type i8
# A negative VALUE is a number, not the options -1 -2 -9.
grep -q "out of range for i8" "$T/i8_m129.err" || { show_last; fail "$LAST_CMD: -129 not parsed as a number"; }
vg i8_m128 scan "$pid" -128 --type i8 --json
assert_rc 0 "$LAST_CMD (a negative VALUE before --type)"
[[ $(jget "$T/i8_m128.out" 'd["scan"]["value"]') == -128 ]] || { show_last; fail "$LAST_CMD: scan.value is not -128"; }
vg f64_neg scan "$pid" --type f64 -1.5 --aligned
assert_rc 0 "$LAST_CMD (a negative VALUE after --type)"
bad 2 u64_big scan "$pid" 18446744073709551616 --type u64
bad 2 i32_text scan "$pid" twelve --type i32
bad 2 i32_trail scan "$pid" 12x --type i32
bad 2 f32_nan scan "$pid" nan --type f32
bad 2 bytes_odd scan "$pid" "de a" --type bytes
bad 2 bytes_wild scan "$pid" "?? ??" --type bytes
bad 2 type_unknown scan "$pid" 1 --type q32
grep -q q32 "$T/type_unknown.err" || { show_last; fail "$LAST_CMD: the error does not name q32"; }
bad 2 type_missing scan "$pid" 1
bad 2 no_value scan "$pid" --type i32
bad 2 no_pid scan
bad 2 bad_pid scan -p notapid 1 --type i32
bad 4 no_name scan "nosuchproc$$" 1 --type i32
bad 2 eps_neg scan "$pid" 1.5 --type f64 --epsilon -1
echo "ok: values, types, PID"

# A PID that no longer exists: exit 4.
sleep 0 & dead=$!
wait "$dead"
bad 4 dead scan "$dead" 1 --type i32
vg dead_json scan "$dead" 1 --type i32 --json
assert_rc 4
vg_py "$T/dead_json.out" <<'PY'
import sys
from vgcheck import *
check_error_doc(load_json(sys.argv[1]), 4, "dead pid --json")
done()
PY
echo "ok: dead pid"

# Narrowing: the test and its operand.
bad 2 no_op scan "$pid" --from "$T/good.set"
bad 2 two_ops scan "$pid" --from "$T/good.set" --changed --unchanged
bad 2 op_without_from scan "$pid" 1 --type u8 --changed
for r in 5 5.. ..5 a..b 1..2..3 "" 300..301; do
	bad 2 range scan "$pid" --from "$T/good.set" --range "$r"
done
bad 2 eq_range scan "$pid" --from "$T/good.set" --eq 256
bad 2 incby_text scan "$pid" --from "$T/good.set" --increased-by x
bad 2 str_increased scan "$pid" --from "$T/str.set" --increased
echo "ok: narrowing tests"

# Scan set files: missing, empty, garbage, truncated, corrupted.
bad 2 set_missing scan "$pid" --from "$T/no-such.set" --changed
: >"$T/empty.set"
bad 2 set_empty scan "$pid" --from "$T/empty.set" --changed
head -c 4096 /dev/urandom >"$T/garbage.set"
bad 2 set_garbage scan "$pid" --from "$T/garbage.set" --changed
size=$(stat -c %s "$T/good.set")
((size > 16)) || harness_error "the scan set is only $size bytes"
for cut in $((size - 1)) $((size / 2)) 8; do
	head -c "$cut" "$T/good.set" >"$T/trunc.set"
	bad 2 set_truncated scan "$pid" --from "$T/trunc.set" --changed
done
# One byte flipped in the middle (the matches), then in the last byte.
for at in $((size / 2)) $((size - 1)); do
	cp "$T/good.set" "$T/flip.set"
	b=$(od -An -tu1 -j "$at" -N1 "$T/flip.set" | tr -d ' ')
	printf "$(printf '\\%03o' $(((b ^ 0x5a) & 255)))" | dd of="$T/flip.set" bs=1 seek="$at" conv=notrunc status=none
	bad 2 set_flipped scan "$pid" --from "$T/flip.set" --changed
done
snapsize=$(stat -c %s "$T/good.snap")
head -c $((snapsize / 2)) "$T/good.snap" >"$T/trunc.snap"
bad 2 snap_truncated scan "$pid" --from "$T/trunc.snap" --type u32 --changed
echo "ok: scan set files"

# A snapshot needs --type; a scan set knows its own.
bad 2 snap_no_type scan "$pid" --from "$T/good.snap" --changed
grep -q -- --type "$T/snap_no_type.err" || { show_last; fail "$LAST_CMD: the error does not mention --type"; }
bad 2 snap_type_str scan "$pid" --from "$T/good.snap" --type str --changed

# Pointer scan options.
bad 2 depth0 scan "$pid" --pointers-to 0x1000 --depth 0
bad 2 depth9 scan "$pid" --pointers-to 0x1000 --depth 9
bad 2 ptr_addr scan "$pid" --pointers-to no_such_symbol_here
bad 2 maxlist scan "$pid" 1 --type u8 --max-list -1
echo "ok: snapshot without --type, pointer options"

# The same errors as JSON documents on stdout.
vg json_u8 scan "$pid" 300 --type u8 --json
assert_rc 2
vg json_trunc scan "$pid" --from "$T/trunc.set" --changed --json
assert_rc 2
vg_py "$T/json_u8.out" "$T/json_trunc.out" <<'PY'
import sys
from vgcheck import *
for p in sys.argv[1:]:
    check_error_doc(load_json(p), 2, p)
done()
PY
echo "ok: --json errors"
