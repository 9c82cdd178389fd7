#!/bin/bash
# scan_first: `vigil scan PID VALUE --type i32` on tgt_scan (256 MiB heap
# block of zeros with 0x5eed1234 planted at 8 places, 4 of them unaligned,
# one across a page and the 4 MiB boundary of its mapping, one in the last
# 4 bytes; one copy on main's stack) finds exactly those 9 addresses, no
# more, no fewer; --aligned exactly the aligned ones; --regions stack/heap
# exactly their part; hex VALUE and u32 the same; --max-list cuts the list
# but not the count; --save then --from --eq finds them again; the table
# lists them and, for one match, prints the `vigil watch` line.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_scan "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
v=$(truth_get "$truth" value_dec)

check_json() {  # check_json NAME MODE PYTHON-EXPECTATIONS (d: doc, t: truth)
	vg_py "$truth" "$T/$1.out" "$2" "$3" "$LAST_CMD" "$pid" <<'PY'
import sys
from scancheck import *
t = ScanTruth(sys.argv[1])
d = load_json(sys.argv[2])
mode, code, w, pid = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
check_scan(d, pid, mode, w, complete="max-list" not in w)
exec(code)
done()
PY
}

vg first scan "$pid" "$v" --type i32 --regions writable --json
assert_rc 0
check_json first first '
heap = [a for a, _ in t.plants]
eq_set(w, heap + [t.stack], d)
eq(w + ": matches_total", 9, d.get("matches_total"))
sc = d["scan"]
eq(w + ": scan.type", "i32", sc.get("type"))
eq(w + ": scan.value", "1592594996", sc.get("value"))
eq(w + ": scan.aligned", False, sc.get("aligned"))
eq(w + ": scan.regions", "writable", sc.get("regions"))
check(d["bytes_scanned"] >= 256 << 20, w + ": bytes_scanned %r < the 256 MiB block" % d.get("bytes_scanned"))
eq(w + ": regions_skipped", 0, d.get("regions_skipped"))
bm = by_addr(d)
for a in heap + [t.stack]:
    m = bm.get(a)
    if not m:
        continue
    eq(f"{w}: {a:#x} value", "1592594996", m.get("value"))
    eq(f"{w}: {a:#x} perms", "rw-p", m.get("perms"))
    eq(f"{w}: {a:#x} image", None, m.get("image"))
    eq(f"{w}: {a:#x} static_offset", None, m.get("static_offset"))
    eq(f"{w}: {a:#x} symbol", None, m.get("symbol"))
    eq(f"{w}: {a:#x} watch", hex(a), m.get("watch"))
m = bm.get(t.stack)
if m:
    eq(w + ": stack match region.path", "[stack]", m["region"].get("path"))
'
echo "ok: writable: the 8 heap places and the stack copy, nothing else"

# The default region set is writable; VALUE in hex; u32 reads the same bytes.
vg default scan "$pid" 0x5eed1234 --type i32 --json
assert_rc 0
check_json default first 'eq_set(w, [a for a, _ in t.plants] + [t.stack], d)
eq(w + ": scan.regions", "writable", d["scan"].get("regions"))'
vg u32 scan "$pid" "$v" --type u32 --json
assert_rc 0
check_json u32 first 'eq_set(w, [a for a, _ in t.plants] + [t.stack], d)
eq(w + ": scan.type", "u32", d["scan"].get("type"))'
echo "ok: default regions, hex VALUE, u32"

vg aligned scan "$pid" "$v" --type i32 --aligned --json
assert_rc 0
check_json aligned first '
al = [a for a, k in t.plants if k == "aligned"]
eq(w + ": truth has 4 aligned places", 4, len(al))
eq_set(w, al + [t.stack], d)
eq(w + ": scan.aligned", True, d["scan"].get("aligned"))'
echo "ok: --aligned: exactly the 4 aligned heap places and the stack copy"

vg stack scan "$pid" "$v" --type i32 --regions stack --json
assert_rc 0
check_json stack first 'eq_set(w, [t.stack], d)'
vg heap scan "$pid" "$v" --type i32 --regions heap --json
assert_rc 0
check_json heap first 'eq_set(w, [a for a, _ in t.plants], d)'
echo "ok: --regions stack, --regions heap"

# Nothing holds 0x5eed1235: exit 0, no matches.
vg none scan "$pid" $((v + 1)) --type i32 --json
assert_rc 0
check_json none first 'eq_set(w, [], d)
eq(w + ": matches_total", 0, d.get("matches_total"))'

vg maxlist scan "$pid" "$v" --type i32 --max-list 3 --json
assert_rc 0
check_json maxlist first '
eq(w + ": matches_total", 9, d.get("matches_total"))
eq(w + ": matches_listed", 3, d.get("matches_listed"))
eq_list(w + ": the first 3", sorted([a for a, _ in t.plants] + [t.stack])[:3], matches(d))'
echo "ok: no match; --max-list 3 lists 3 of 9"

# --save, then --from --eq finds the same 9 (narrow mode).
vg save scan "$pid" "$v" --type i32 --save "$T/first.set" --json
assert_rc 0
[[ -s $T/first.set ]] || fail "$LAST_CMD: no scan set written to $T/first.set"
check_json save first 'eq(w + ": scan.saved_to", sys.argv[2].rsplit("/", 1)[0] + "/first.set", d["scan"].get("saved_to"))'
vg again scan "$pid" --from "$T/first.set" --eq "$v" --json
assert_rc 0
check_json again narrow 'eq_set(w, [a for a, _ in t.plants] + [t.stack], d)
eq(w + ": scan.op", "eq", d["scan"].get("op"))
eq(w + ": scan.type", "i32", d["scan"].get("type"))'
echo "ok: --save and --from FILE --eq"

# Table view: every address listed (lower-case 0x..., maybe zero-padded).
vg table scan "$pid" "$v" --type i32
assert_rc 0
for a in $(grep '^plant ' "$truth" | cut -d' ' -f2) $(truth_get "$truth" stack); do
	grep -qE -- "(^|[^0-9a-fx])0x0*${a#0x}([^0-9a-f]|\$)" "$T/table.out" ||
		{ show_last; fail "$LAST_CMD: table does not list $a"; }
done
grep -q '^9 matches' "$T/table.out" || { show_last; fail "$LAST_CMD: no line '9 matches'"; }
# One match: the line to watch it.
stack=$(truth_get "$truth" stack)
vg table1 scan "$pid" "$v" --type i32 --regions stack
assert_rc 0
grep -qE "watch it: vigil watch $pid $stack --len 4\$" "$T/table1.out" ||
	{ show_last; fail "$LAST_CMD: no line 'watch it: vigil watch $pid $stack --len 4'"; }
echo "ok: table view"
