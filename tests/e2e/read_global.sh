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

# check_read NAME WHAT - the JSON read in $T/NAME.out reads symbol WHAT of
# the truth in $truth at +OFF ($off) for LEN ($len) bytes.
check_read() {
	vg_py "$truth" "$T/$1.out" "$2" "$off" "$len" "$LAST_CMD" <<'PY'
import sys
from vgcheck import *
truth, doc = Truth(sys.argv[1]), load_json(sys.argv[2])
name, off, length, cmd = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
sym = truth.syms[name]
w = cmd
check_header(doc, "read", truth.pid, w)
a = sym["runtime"] + off
eq(f"{w}: address", a, addr(w + " address", doc.get("address")))
eq(f"{w}: length", length, doc.get("length"))
eq(f"{w}: bytes_read", length, doc.get("bytes_read"))
eq(f"{w}: complete", True, doc.get("complete"))
check(doc.get("source") in ("process_vm_readv", "proc_pid_mem", "image_file"),
      f"{w}: source {doc.get('source')!r}")
hx = get(doc, "hex")
eq(f"{w}: hex length", 2 * length, len(hx))
check(hx == hx.lower() and " " not in hx, f"{w}: hex must be lower-case without spaces")
want = sym["hex"][2 * off: 2 * (off + length)]
eq(f"{w}: hex (what the target holds)", want, hx[: len(want)])
segs = get(doc, "segments")
check(len(segs) >= 1, f"{w}: no segments")
if segs:
    eq(f"{w}: segments[0].address", a, addr(w + " segment", segs[0].get("address")))
    eq(f"{w}: sum of segment lengths", length, sum(s.get("length", 0) for s in segs))
    for s in segs:
        check(s.get("source") in ("process_vm_readv", "proc_pid_mem", "image_file"),
              f"{w}: segment source {s.get('source')!r}")
reg = get(doc, "region")
lo, hi = addr(w + " region.start", reg.get("start")), addr(w + " region.end", reg.get("end"))
check(lo is not None and hi is not None and lo <= a < hi, f"{w}: region {reg!r} does not contain {a:#x}")
eq(f"{w}: region.path", sym["path"], reg.get("path"))
check(str(reg.get("perms", "")).startswith("r"), f"{w}: region.perms {reg.get('perms')!r}")
done()
PY
}

# check_as NAME TYPE EXPECTED_JSON  - --as decoding in $T/NAME.out.
check_as() {
	vg_py "$T/$1.out" "$2" "$3" "$LAST_CMD" <<'PY'
import json, sys
from vgcheck import *
doc, typ, want, cmd = load_json(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
eq(f"{cmd}: as", typ, doc.get("as"))
got = doc.get("value")
if isinstance(want, float):
    check(isinstance(got, (int, float)) and not isinstance(got, bool) and float(got) == want,
          f"{cmd}: value: expected {want!r}, got {got!r}")
else:
    eq(f"{cmd}: value", want, got)
    eq(f"{cmd}: type of value", type(want).__name__, type(got).__name__)
done()
PY
}

for variant in pie nonpie; do
	other=$([[ $variant == pie ]] && echo nonpie || echo pie)
	truth=$T/$variant.truth
	pid=$(truth_get "$truth" pid)
	exe=$(truth_sym "$truth" vg_magic path)
	rt=$(truth_sym "$truth" vg_magic runtime)
	st=$(truth_sym "$truth" vg_magic static)
	off=0 len=8

	vg runtime read "$pid" "$rt" 8 --json; assert_rc 0; check_read runtime vg_magic
	vg static read "$pid" "@$st" 8 --json; assert_rc 0; check_read static vg_magic
	vg symbol read "$pid" vg_magic 8 --json; assert_rc 0; check_read symbol vg_magic
	vg imgsym read "$pid" "tgt_globals_$variant:vg_magic" 8 --json; assert_rc 0; check_read imgsym vg_magic
	vg hexlen read "$pid" vg_magic 0x8 --json; assert_rc 0; check_read hexlen vg_magic
	off=4 len=4
	vg symoff read "$pid" vg_magic+4 4 --json; assert_rc 0; check_read symoff vg_magic
	vg symoffhex read "$pid" "tgt_globals_$variant:vg_magic+0x4" 4 --json; assert_rc 0; check_read symoffhex vg_magic
	off=0 len=32
	vg text read "$pid" vg_text 32 --json; assert_rc 0; check_read text vg_text
	# Default length is 64; a k suffix is binary.
	vg deflen read "$pid" vg_magic --json; assert_rc 0
	assert_eq "$LAST_CMD: length" 64 "$(jget "$T/deflen.out" 'd["length"]')"
	assert_eq "$LAST_CMD: complete" true "$(jget "$T/deflen.out" 'd["complete"]')"
	vg klen read "$pid" vg_magic 1k --json; assert_rc 0
	assert_eq "$LAST_CMD: length" 1024 "$(jget "$T/klen.out" 'd["length"]')"
	assert_eq "$LAST_CMD: bytes_read" 1024 "$(jget "$T/klen.out" 'd["bytes_read"]')"

	# --as: the length defaults to the size of the type.
	magic=$((0x1122334455667788))
	ptr=$(truth_sym "$truth" vg_magic runtime)
	while read -r sym typ want; do
		vg "as_$typ" read "$pid" "$sym" --as "$typ" --json
		assert_rc 0
		check_as "as_$typ" "$typ" "$want"
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
	assert_eq "$LAST_CMD: length" 8 "$(jget "$T/as_len.out" 'd["length"]')"

	# --raw: exactly the bytes, nothing else.
	vg raw read "$pid" vg_magic 8 --raw; assert_rc 0
	assert_eq "$LAST_CMD: raw bytes" 8877665544332211 "$(od -An -tx1 -v "$T/raw.out" | tr -d ' \n')"

	# The table is an xxd-style dump of the same bytes.
	vg table read "$pid" vg_magic 16; assert_rc 0
	tr -d ' \n' <"$T/table.out" | grep -q 8877665544332211 ||
		{ show_last; fail "$LAST_CMD: dump does not show 88 77 66 55 44 33 22 11"; }

	# --bin: the target's own file matches; the other build is refused.
	vg bin_same read "$pid" vg_magic 8 --bin "$exe" --json; assert_rc 0
	assert_eq "$LAST_CMD: binary_match" match "$(jget "$T/bin_same.out" 'd["binary_match"]')"
	off=0 len=8
	check_read bin_same vg_magic
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
	vg_py "$T/bin_other_json.out" "$bid" "$other_bid" <<'PY'
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
check_error_doc(doc, 2)
msg = str(doc.get("error", {}).get("message"))
check(sys.argv[2] in msg and sys.argv[3] in msg, f"error message must name both build-ids: {msg!r}")
done()
PY
	vg bin_force read "$pid" "$rt" 8 --bin "$other_exe" --force-bin --json
	assert_rc 0
	assert_eq "$LAST_CMD: binary_match" mismatch "$(jget "$T/bin_force.out" 'd["binary_match"]')"
	assert_eq "$LAST_CMD: a warning" true "$(jget "$T/bin_force.out" 'len(d["process"]["warnings"]) > 0')"
	check_read bin_force vg_magic
	echo "ok: $variant"
done
