#!/bin/bash
# scan_expression: each scan match inside a global is named by the C
# expression that reaches it where DWARF allows: a member of an array
# element of a struct (g_table[1].value) and a nested member
# (g_config.limits.max), in --json ("expression", beside the kept
# "symbol") and in the table's GLOBAL column.  tgt_print writes each
# value (its expect lines) and the address of each expression (its named
# lines, from its own pointers); the match at that address must carry
# exactly that expression.
source "$(dirname "$0")/lib.sh"

truth=$T/print.truth
start_target tgt_print "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

value_of() { grep -P "^expect\t\Q$1\E\t" "$truth" | cut -f3; }
addr_of() { grep -P "^named\t[^\t]*\t[^\t]*\t1\t[^\t]*\t\Q$1\E$" "$truth" | cut -f5; }

n=0
for case in "i64 g_table[1].value g_table+24" "i32 g_config.limits.max g_config+20"; do
	read -r type expr sym <<<"$case"
	n=$((n + 1))
	value=$(value_of "$expr")
	addr=$(addr_of "$expr")
	[[ -n $value && -n $addr ]] || harness_error "no value or address of $expr in $truth"
	vg "j$n" scan "$pid" --type "$type" --aligned --max-list 100000 --json -- "$value"
	assert_rc 0
	got=$(jq -r --arg a "$addr" '.matches[] | select(.address == $a) | .expression' "$T/j$n.out")
	assert_eq "$LAST_CMD: expression of the match at $addr" "$expr" "$got"
	got=$(jq -r --arg a "$addr" '.matches[] | select(.address == $a) | .symbol' "$T/j$n.out")
	assert_eq "$LAST_CMD: symbol (kept) of the match at $addr" "$sym" "$got"
	vg "t$n" scan "$pid" --type "$type" --aligned --max-list 100000 -- "$value"
	assert_rc 0
	line=$(grep "^0x0*${addr#0x} " "$T/t$n.out") || { show_last; fail "$LAST_CMD: no line for $addr"; }
	assert_eq "$LAST_CMD: GLOBAL column at $addr" "$expr" "$(awk '{print $NF}' <<<"$line")"
done
echo "ok: $n matches named by expression (JSON and table)"
