#!/bin/bash
# read_global: `vigil read` of initialized globals in a PIE and a non-PIE
# target: bytes equal what the target says it holds; 0xRUNTIME, @0xSTATIC,
# SYMBOL, IMAGE:SYMBOL and SYMBOL+OFF all resolve to the address the target
# reports; --as decodes every type; --bin matches its own build and refuses
# the other build unless --force-bin.
source "$(dirname "$0")/lib.sh"

for variant in pie nonpie; do
	start_target "tgt_globals_$variant" "$T/$variant.truth"
done
for variant in pie nonpie; do
	wait_truth "$T/$variant.truth" ready
done

# Every vigil run is recorded with what it must show in $T/expect (one
# tab-separated line each) and checked by one Python pass per build:
#   read NAME SYMBOL OFF LEN CMD   JSON read of LEN bytes at SYMBOL+OFF
#   as NAME TYPE WANT_JSON CMD     --as TYPE decoded WANT
#   field NAME EXPR WANT_JSON CMD  eval(EXPR, d=JSON) == WANT
expect() {
	local IFS=$'\t'
	printf '%s\n' "$*	$LAST_CMD" >>"$T/expect"
}
check_expectations() {
	vg_py "$truth" "$T/expect" <<'PY'
import json, os, sys
from vgcheck import *
T = os.environ["T"]
truth = Truth(sys.argv[1])
SOURCES = ("process_vm_readv", "proc_pid_mem", "image_file")

def check_read(doc, name, off, length, w):
    sym = truth.syms[name]
    check_header(doc, "read", truth.pid, w)
    a = sym["runtime"] + off
    eq_addr(f"{w}: address", a, addr(w + " address", doc.get("address")))
    eq(f"{w}: length", length, doc.get("length"))
    eq(f"{w}: bytes_read", length, doc.get("bytes_read"))
    eq(f"{w}: complete", True, doc.get("complete"))
    check(doc.get("source") in SOURCES, f"{w}: source {doc.get('source')!r}")
    hx = get(doc, "hex")
    eq(f"{w}: hex length", 2 * length, len(hx))
    check(hx == hx.lower() and " " not in hx, f"{w}: hex must be lower-case without spaces")
    want = sym["hex"][2 * off: 2 * (off + length)]
    eq(f"{w}: hex (what the target holds)", want, hx[: len(want)])
    segs = get(doc, "segments")
    if check(len(segs) >= 1, f"{w}: no segments"):
        eq_addr(f"{w}: segments[0].address", a, addr(w + " segment", segs[0].get("address")))
        eq(f"{w}: sum of segment lengths", length, sum(s.get("length", 0) for s in segs))
        for s in segs:
            check(s.get("source") in SOURCES, f"{w}: segment source {s.get('source')!r}")
    reg = get(doc, "region")
    lo, hi = addr(w + " region.start", reg.get("start")), addr(w + " region.end", reg.get("end"))
    check(lo is not None and hi is not None and lo <= a < hi,
          f"{w}: region {reg!r} does not contain {a:#x}")
    eq(f"{w}: region.path", sym["path"], reg.get("path"))
    check(str(reg.get("perms", "")).startswith("r"), f"{w}: region.perms {reg.get('perms')!r}")

def check_as(doc, typ, want, w):
    eq(f"{w}: as", typ, doc.get("as"))
    got = doc.get("value")
    if isinstance(want, float):
        check(isinstance(got, (int, float)) and not isinstance(got, bool) and float(got) == want,
              f"{w}: value: expected {want!r}, got {got!r}")
    else:
        eq(f"{w}: value", want, got)
        eq(f"{w}: JSON type of value", type(want).__name__, type(got).__name__)

n = 0
with open(sys.argv[2]) as f:
    for line in f.read().splitlines():
        kind, name, *args, cmd = line.split("\t")
        doc = load_json(f"{T}/{name}.out")
        n += 1
        if kind == "read":
            check_read(doc, args[0], int(args[1]), int(args[2]), cmd)
        elif kind == "as":
            check_as(doc, args[0], json.loads(args[1]), cmd)
        elif kind == "field":
            try:
                got = eval(args[0], {"d": doc})
            except Exception as e:
                got = f"<{e!r}>"
            eq(f"{cmd}: {args[0]}", json.loads(args[1]), got)
        else:
            fail(f"bad expectation {line!r}")
done()
print(f"{n} outputs checked")
PY
	rm -f "$T/expect"
}

for variant in pie nonpie; do
	other=$([[ $variant == pie ]] && echo nonpie || echo pie)
	truth=$T/$variant.truth
	pid=$(truth_get "$truth" pid)
	exe=$(truth_sym "$truth" vg_magic path)
	rt=$(truth_sym "$truth" vg_magic runtime)
	st=$(truth_sym "$truth" vg_magic static)

	# Every ADDR form of the same global.
	vg runtime read "$pid" "$rt" 8 --json; assert_rc 0; expect read runtime vg_magic 0 8
	vg static read "$pid" "@$st" 8 --json; assert_rc 0; expect read static vg_magic 0 8
	vg symbol read "$pid" vg_magic 8 --json; assert_rc 0; expect read symbol vg_magic 0 8
	vg imgsym read "$pid" "tgt_globals_$variant:vg_magic" 8 --json; assert_rc 0
	expect read imgsym vg_magic 0 8
	vg hexlen read "$pid" vg_magic 0x8 --json; assert_rc 0; expect read hexlen vg_magic 0 8
	vg symoff read "$pid" vg_magic+4 4 --json; assert_rc 0; expect read symoff vg_magic 4 4
	vg symoffhex read "$pid" "tgt_globals_$variant:vg_magic+0x4" 4 --json; assert_rc 0
	expect read symoffhex vg_magic 4 4
	vg text read "$pid" vg_text 32 --json; assert_rc 0; expect read text vg_text 0 32
	# Default length is 64; a k suffix is binary.
	vg deflen read "$pid" vg_magic --json; assert_rc 0
	expect field deflen 'd["length"]' 64
	expect field deflen 'd["complete"]' true
	vg klen read "$pid" vg_magic 1k --json; assert_rc 0
	expect field klen '[d["length"], d["bytes_read"], d["complete"]]' '[1024, 1024, true]'

	# --as: the length defaults to the size of the type.
	magic=$((0x1122334455667788))
	ptr=$(truth_sym "$truth" vg_magic runtime)
	while read -r sym typ want; do
		vg "as_${sym}_$typ" read "$pid" "$sym" --as "$typ" --json
		assert_rc 0
		expect as "as_${sym}_$typ" "$typ" "$want"
	done <<EOF2
vg_magic u64 "$magic"
vg_magic i64 "$magic"
vg_magic u32 $((0x55667788))
vg_magic i32 $((0x55667788))
vg_magic u16 $((0x7788))
vg_magic u8 $((0x88))
vg_magic i8 $((0x88 - 256))
vg_u16 u16 $((0xbeef))
vg_u16 i16 $((0xbeef - 65536))
vg_neg i32 -123456
vg_double f64 2.5
vg_float f32 -0.75
vg_ptr ptr "$ptr"
vg_text str "vigil reads this"
EOF2
	vg as_len read "$pid" vg_magic --as u64 --json; assert_rc 0
	expect field as_len 'd["length"]' 8
	vg as_neg64 read "$pid" vg_neg --as i64 --json; assert_rc 0
	expect field as_neg64 'type(d["value"]).__name__' '"str"'

	# --raw: exactly the bytes, nothing else.
	vg raw read "$pid" vg_magic 8 --raw; assert_rc 0
	assert_eq "$LAST_CMD: raw bytes" 8877665544332211 "$(od -An -tx1 -v "$T/raw.out" | tr -d ' \n')"

	# The table is an xxd-style dump of the same bytes.
	vg table read "$pid" vg_magic 16; assert_rc 0
	tr -d ' \n' <"$T/table.out" | grep -q 8877665544332211 ||
		{ show_last; fail "$LAST_CMD: dump does not show 88 77 66 55 44 33 22 11"; }

	# --bin: the target's own file matches; the other build is refused.
	vg bin_same read "$pid" vg_magic 8 --bin "$exe" --json; assert_rc 0
	expect field bin_same 'd["binary_match"]' '"match"'
	expect read bin_same vg_magic 0 8
	vg bin_static read "$pid" "@$st" 8 --bin "$exe" --json; assert_rc 0
	expect read bin_static vg_magic 0 8
	other_exe=$(truth_sym "$T/$other.truth" vg_magic path)
	bid=$(truth_get "$truth" "obj main" | cut -d' ' -f2)
	other_bid=$(truth_get "$T/$other.truth" "obj main" | cut -d' ' -f2)
	vg bin_other read "$pid" "$rt" 8 --bin "$other_exe"
	assert_rc 2
	assert_one_error_line
	grep -q "$bid" "$T/bin_other.err" && grep -q "$other_bid" "$T/bin_other.err" ||
		{ show_last; fail "$LAST_CMD: the mismatch error must name both build-ids ($bid, $other_bid)"; }
	[[ ! -s $T/bin_other.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the error"; }
	vg bin_other_json read "$pid" "$rt" 8 --bin "$other_exe" --json
	assert_rc 2
	expect field bin_other_json 'd["error"]["exit_code"]' 2
	expect field bin_other_json "'$bid' in d['error']['message'] and '$other_bid' in d['error']['message']" true
	vg bin_force read "$pid" "$rt" 8 --bin "$other_exe" --force-bin --json
	assert_rc 0
	expect field bin_force 'd["binary_match"]' '"mismatch"'
	expect field bin_force 'len(d["process"]["warnings"]) > 0' true
	expect read bin_force vg_magic 0 8
	check_expectations
	echo "ok: $variant"
done
