#!/bin/bash
# read_expression: `vigil read` names the bytes it shows by the C
# expression that reaches them where DWARF allows: a struct member
# (g_config.port), a byte inside a scalar (g_config.port+2), an element of
# a char array inside a struct (g_config.name[3]), a nested member
# (g_config.limits.max), padding (g_config+28 (padding)), a member of an
# array element (g_table[1].value), a pointer member, an element of a
# scalar array, through a typedef (g_lim.min).  The target writes each
# byte's address, its offset into the symbol and its expression, from
# its own pointers; the header and "expression" in --json must equal it.
# A read of several bytes is named by the innermost object holding them
# all (g_config.limits, g_table[1], g_config.name+2).
# A 0xHEX read loads no images and has "expression": null.
source "$(dirname "$0")/lib.sh"

truth=$T/print.truth
start_target tgt_print "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

n=0
while IFS=$'\t' read -r _ sym off len addr expr; do
	n=$((n + 1))
	vg "t$n" read "$pid" "$sym+$off" "$len"
	assert_rc 0
	header=$(head -n1 "$T/t$n.out")
	bytes="$len bytes"
	((len > 1)) || bytes="1 byte"
	want="# pid $pid: $bytes at $addr ($expr) in "
	assert_eq "$LAST_CMD: header" "$want" "${header:0:${#want}}"
	vg "j$n" read "$pid" "$sym+$off" "$len" --json
	assert_rc 0
	assert_eq "$LAST_CMD: expression" "$expr" "$(jq -r .expression "$T/j$n.out")"
	assert_eq "$LAST_CMD: symbol (kept)" "$sym" "$(jq -r .symbol "$T/j$n.out")"
	assert_eq "$LAST_CMD: symbol_offset (kept)" "$off" "$(jq -r .symbol_offset "$T/j$n.out")"
done < <(grep -P '^named\t' "$truth")
((n >= 19)) || harness_error "only $n named lines in $truth"
echo "ok: $n addresses named by expression (table header and JSON)"

# C++: a namespace variable is named as print takes it (demangled), and
# the base Mid that lies in Base's tail padding by its own member.
cxx=$T/cxx.truth
start_target tgt_print_cxx "$cxx"
wait_truth "$cxx" ready
cpid=$(truth_get "$cxx" pid)
mid=$(grep '^offset Mid ' "$cxx" | cut -d' ' -f3)
[[ -n $mid ]] || harness_error "no Mid offset in $cxx"
vg cxx read "$cpid" "_ZN3app5g_objE+$mid" 2 --json
assert_rc 0
assert_eq "$LAST_CMD: expression" "app::g_obj.tag" "$(jq -r .expression "$T/cxx.out")"
echo "ok: C++ names demangled, a base in tail padding named by its member"

# 0xHEX: no image was loaded to name it.
addr=$(grep -P '^named\t' "$truth" | head -n1 | cut -f5)
vg hex read "$pid" "$addr" 1 --json
assert_rc 0
assert_eq "$LAST_CMD: expression" "null" "$(jq -r .expression "$T/hex.out")"
echo "ok: a 0xHEX read is not named"
