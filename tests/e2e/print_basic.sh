#!/bin/bash
# print_basic: `vigil print` of every kind of global tgt_print holds
# (nested structs, arrays of structs, a union, plain and flag enums,
# bit-fields, char arrays and char *, a pointer chain, floats, bool, a
# function pointer, a typedef, a static in two files, an object half on an
# unmapped page): the text equals what the target itself writes down as
# gdb's layout of its own values, --json gives the types, sizes, offsets,
# hops and unreadable bytes the target knows, and where gdb can attach its
# `print` agrees with vigil's.
source "$(dirname "$0")/lib.sh"

truth=$T/print.truth
start_target tgt_print "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

# Every expression the target wrote down: exactly its text.
n=0
while IFS=$'\t' read -r _ expr want; do
	n=$((n + 1))
	vg "e$n" print "$pid" -- "$expr"
	assert_rc 0
	assert_eq "$LAST_CMD" "$expr = $want" "$(cat "$T/e$n.out")"
	[[ ! -s $T/e$n.err ]] || { show_last; fail "$LAST_CMD: unexpected stderr"; }
done < <(grep -P '^expect\t' "$truth")
((n >= 30)) || harness_error "only $n expectations in $truth"

# Several expressions in one run, in order.
vg multi print "$pid" g_color g_flag 'g_table[0].key'
assert_rc 0
assert_eq "$LAST_CMD" $'g_color = GREEN\ng_flag = true\ng_table[0].key = 1' "$(cat "$T/multi.out")"

# A library's alias (program_invocation_short_name is __progname in
# glibc's DWARF), where libc's debug info is installed (libc6-dbg).
read -r sn_addr sn_text <<<"$(truth_get "$truth" libc_short_name)"
vg libc print "$pid" libc.so.6:program_invocation_short_name
if [[ $RC == 0 ]]; then
	assert_eq "$LAST_CMD" "libc.so.6:program_invocation_short_name = $sn_addr \"$sn_text\"" "$(cat "$T/libc.out")"
else
	assert_rc 2
	grep -q "no debug info" "$T/libc.err" || { show_last; fail "$LAST_CMD: only a missing libc debug info may refuse it"; }
	echo "note: libc has no debug info here (libc6-dbg): its alias is not checked"
fi

# Thread-local variables of each thread (libthread_db, from memory), the
# main thread's by default; errno is libc's thread-local.
tls_n=0
while read -r tid val err; do
	tls_n=$((tls_n + 1))
	vg "tls$tls_n" print "$pid" g_tls --tid "$tid"
	assert_rc 0
	assert_eq "$LAST_CMD" "g_tls = $val" "$(cat "$T/tls$tls_n.out")"
	if [[ $err != - ]]; then
		vg "errno$tls_n" print "$pid" errno --tid "$tid"
		assert_rc 0
		assert_eq "$LAST_CMD" "errno = $err" "$(cat "$T/errno$tls_n.out")"
	fi
done < <(grep '^tls ' "$truth" | cut -d' ' -f2-)
((tls_n == 3)) || harness_error "expected 3 tls lines in $truth"
vg tls_main print "$pid" g_tls
assert_rc 0
assert_eq "$LAST_CMD" "g_tls = $(grep '^tls ' "$truth" | head -1 | cut -d' ' -f3)" "$(cat "$T/tls_main.out")"
vg tls_json print "$pid" '&g_tls' --tid "$(grep '^tls ' "$truth" | sed -n 2p | cut -d' ' -f2)" --json
assert_rc 0

# Objects larger than the 1 MiB vigil reads of one value: the first
# --max-elements are shown, the rest said, never bytes past the buffer.
vg huge print "$pid" g_huge_text g_huge_ints
assert_rc 0
assert_eq "$LAST_CMD" 'g_huge_text = "start", '"'"'\000'"'"' <repeats 195 times>... <only the first 1048576 of 2097152 bytes read>' "$(sed -n 1p "$T/huge.out")"
assert_eq "$LAST_CMD" 'g_huge_ints = {0 <repeats 262144 times>...} <only the first 1048576 of 1200000 bytes read>' "$(sed -n 2p "$T/huge.out")"
vg huge_json print "$pid" g_huge_text g_huge_ints --json
assert_rc 0
vg_py "$T/huge_json.out" <<'PY'
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
t, i = get(doc, "results")
eq("text truncated", [True, 1048576, 0], [t["truncated"], t["bytes_read"], t["bytes_unreadable"]])
eq("text unreadable", [{"offset": 1048576, "length": 1048576}], t["value"].get("unreadable"))
eq("ints elements", 200, len(i["value"]["elements"]))
eq("ints truncated", True, i["value"]["elements_truncated"])
done()
PY

# The target named by -p, as every command names it.
vg byp print g_color -p "$pid"
assert_rc 0
assert_eq "$LAST_CMD" 'g_color = GREEN' "$(cat "$T/byp.out")"

# --depth, --max-elements, --hex.
vg depth print "$pid" g_config.limits --depth 0
assert_rc 0
assert_eq "$LAST_CMD" 'g_config.limits = {...}' "$(cat "$T/depth.out")"
vg depth1 print "$pid" '*g_head' --depth 1
assert_rc 0
grep -q '^\*g_head = {id = 0, next = 0x' "$T/depth1.out" || { show_last; fail "$LAST_CMD: depth 1 shows the members"; }
vg maxel print "$pid" g_table --max-elements 2
assert_rc 0
assert_eq "$LAST_CMD" 'g_table = {{key = 1, value = 10}, {key = 2, value = -20}...}' "$(cat "$T/maxel.out")"
vg hex print "$pid" g_big g_config.flags_b g_letter --hex
assert_rc 0
assert_eq "$LAST_CMD" $'g_big = 0xffffffffffffffff\ng_config.flags_b = 0x1d\ng_letter = 0x41' "$(cat "$T/hex.out")"

# JSON: checked against the target's own addresses and layout.
vg json print "$pid" g_config 'g_head->next->next->id' '*g_edge' g_perm_odd g_config.flags_b --json
assert_rc 0
vg_py "$truth" "$T/json.out" <<'PY'
import sys
from vgcheck import *
truth = Truth(sys.argv[1])
doc = load_json(sys.argv[2])
kv = {}
for line in open(sys.argv[1]).read().splitlines():
    if line.startswith(("addr ", "size ", "offset ")):
        k, name, v = line.split(" ", 2)
        kv[f"{k} {name}"] = int(v, 0)
check_header(doc, "print", truth.pid)
rs = get(doc, "results")
eq("results", 5, len(rs))
cfg, chain, edge, odd, bits = rs

eq("g_config.expression", "g_config", cfg["expression"])
eq("g_config.type", "struct config", cfg["type"])
eq("g_config.size", kv["size struct_config"], cfg["size"])
eq_addr("g_config.address", truth.syms["g_config"]["runtime"], addr("address", cfg["address"]))
eq("g_config.symbol", "g_config", cfg.get("symbol"))
eq("g_config.bytes_unreadable", 0, cfg["bytes_unreadable"])
eq("g_config.hops", [], cfg["hops"])
v = cfg["value"]
eq("g_config kind", "struct", v["kind"])
m = {x["name"]: x for x in v["members"]}
eq("port", 8080, m["port"]["value"])
eq("port type", "int", m["port"]["type"])
eq("name.string", "demo", m["name"]["string"])
eq("name.type", "char [16]", m["name"]["type"])
eq("limits.offset", kv["offset config.limits"], m["limits"]["offset"])
eq("limits.max", 100, {x["name"]: x for x in m["limits"]["members"]}["max"]["value"])
eq("ratio", 2.5, m["ratio"]["value"])
eq("scale", 0.75, m["scale"]["value"])
eq("enabled", True, m["enabled"]["value"])
eq("color", "BLUE", m["color"].get("enumerator"))
eq("color value", 2, m["color"]["value"])
eq("perms flags", ["PERM_READ", "PERM_EXEC"], m["perms"].get("flags"))
eq("flags_b", [-3, 5], [m["flags_b"]["value"], m["flags_b"]["bit_size"]])
eq("greeting.string", "hello", m["greeting"]["string"])
eq("greeting.offset", kv["offset config.greeting"], m["greeting"]["offset"])
eq("greeting.type", "const char *", m["greeting"]["type"])
eq("handler.symbol", "handler", m["handler"].get("symbol"))
eq_addr("handler.value", kv["addr g_config.handler"], addr("handler", m["handler"]["value"]))
eq("handler.type", "int (*)(int)", m["handler"]["type"])

nodes, head = kv["addr g_nodes"], kv["addr g_head"]
nxt = kv["offset node.next"]
eq("chain.type", "int", chain["type"])
eq("chain hops", [
    {"expression": "g_head", "address": hex(head), "value": hex(nodes)},
    {"expression": "g_head->next", "address": hex(nodes + nxt), "value": hex(nodes + 16)},
    {"expression": "g_head->next->next", "address": hex(nodes + 16 + nxt), "value": hex(nodes + 32)},
], chain["hops"])
eq_addr("chain.address", nodes + 32, addr("chain address", chain["address"]))
eq("chain.value", 2, chain["value"]["value"])

eq_addr("edge.address", kv["addr g_edge"], addr("edge", edge["address"]))
eq("edge bytes", [8, 8], [edge["bytes_read"], edge["bytes_unreadable"]])
em = {x["name"]: x for x in edge["value"]["members"]}
eq("edge.a", "7", em["a"]["value"])
eq("edge.b", None, em["b"]["value"])
eq("edge.b unreadable", [{"offset": 8, "length": 8}], em["b"].get("unreadable"))
check("unreadable" not in em["a"], "edge.a is readable")

eq("odd flags", ["PERM_READ"], odd["value"].get("flags"))
eq("odd unknown", "0x8", odd["value"].get("unknown_bits"))
eq("bits", [3, 5, -3], [bits.get("bit_offset"), bits.get("bit_size"), bits["value"]["value"]])
done()
PY

# gdb's own print, where gdb can attach (it stops the target meanwhile).
if command -v gdb >/dev/null; then
	exprs=(g_config g_table g_num g_head '*g_head' g_zeros g_perm_odd g_color g_pi_f g_pi
	       g_letter g_big g_lim 'g_config.handler' '&g_table[2]' 'g_head->next->next->id')
	args=()
	for e in "${exprs[@]}"; do args+=(-ex "print $e"); done
	gdb -nx -batch -p "$pid" "${args[@]}" >"$T/gdb.out" 2>"$T/gdb.err" || true
	if grep -q '^\$1 = ' "$T/gdb.out"; then
		vg vsg print "$pid" "${exprs[@]}"
		assert_rc 0
		grep -E '^\$[0-9]+ = ' "$T/gdb.out" | sed -E 's/^\$[0-9]+ = //' >"$T/gdb.values"
		i=0
		while IFS= read -r line; do
			e=${exprs[$i]}
			assert_eq "gdb print $e" "$(sed -n "$((i + 1))p" "$T/gdb.values")" "${line#"$e = "}"
			i=$((i + 1))
		done <"$T/vsg.out"
		((i == ${#exprs[@]})) || fail "vigil printed $i of ${#exprs[@]} values"
		echo "gdb agrees on ${#exprs[@]} values"
	else
		echo "note: gdb could not attach; its comparison is left out: $(head -c 300 "$T/gdb.err")"
	fi
fi
echo "ok: $n expressions"
