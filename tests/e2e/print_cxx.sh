#!/bin/bash
# print_cxx: `vigil print` of C++ data: a namespace variable (declared in
# its DW_TAG_namespace, defined at the CU's top level), a class with two
# base classes shown as data (<Base> = {...}, the vtable pointer with its
# demangled symbol), a class name in sizeof, a class's static data member
# (app::Derived::s_instances, declared inside the class; shown in the
# class's value as gdb does: static s_instances = 2), a nested
# namespace's variables, a variable of an anonymous namespace by its bare
# name, C++ type names and enumerators qualified as gdb
# does (struct app::inner::Point *, app::inner::Color::green), casts to a namespace-qualified type; text
# against what the target writes down, JSON base classes and offsets
# against the target's own.
source "$(dirname "$0")/lib.sh"

truth=$T/cxx.truth
start_target tgt_print_cxx "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

n=0
while IFS=$'\t' read -r _ expr want; do
	n=$((n + 1))
	vg "e$n" print "$pid" -- "$expr"
	assert_rc 0
	assert_eq "$LAST_CMD" "$expr = $want" "$(cat "$T/e$n.out")"
done < <(grep -P '^expect\t' "$truth")
((n >= 14)) || harness_error "only $n expectations in $truth"

vg plain print "$pid" g_obj
assert_rc 2
grep -q "no global or static variable 'g_obj'" "$T/plain.err" ||
	{ show_last; fail "$LAST_CMD: a namespace variable needs its namespace"; }

vg nostatic print "$pid" app::Derived::s_nope
assert_rc 2
grep -q "no global or static variable 'app::Derived::s_nope'" "$T/nostatic.err" ||
	{ show_last; fail "$LAST_CMD: an unknown static member is an unknown variable"; }

vg json print "$pid" app::g_obj --json
assert_rc 0
vg_py "$truth" "$T/json.out" <<'PY'
import sys
from vgcheck import *
kv, statics = {}, {}
for line in open(sys.argv[1]).read().splitlines():
    if line.startswith("offset "):
        _, k, v = line.split(" ")
        kv[k] = int(v)
    if line.startswith("static "):
        _, k, v = line.split(" ")
        statics[k] = int(v, 16)
doc = load_json(sys.argv[2])
r = get(doc, "results")[0]
# Class names qualified by their namespace, as gdb writes them.
eq("type", "class app::Derived", r["type"])
ms = r["value"]["members"]
eq("members", ["app::Base", "app::Mid", "ratio", "name"], [m["name"] for m in ms])
eq("base_class", [True, True, False, False], [m.get("base_class", False) for m in ms])
eq("Mid offset", kv["Mid"], ms[1]["offset"])
eq("ratio offset", kv["ratio"], ms[2]["offset"])
eq("Base.id", 7, {m["name"]: m for m in ms[0]["members"]}["id"]["value"])
vp = ms[0]["members"][0]
eq("vptr symbol", "vtable for app::Derived+16", vp.get("symbol"))
eq("name string", "derived", ms[3]["string"])
# A static data member: its own variable, with its address.
st = r["value"].get("static_members") or []
eq("static_members", ["s_instances"], [s.get("name") for s in st])
if st:
    eq("s_instances value", 2, st[0].get("value"))
    eq("s_instances address", statics["s_instances"], int(st[0].get("address", "0"), 16))
done()
PY
echo "ok: $n expressions"
