#!/bin/bash
# scan_narrow: narrowing a saved scan set with --from.  tgt_scan's g_counter
# and the three words of g_decoy hold the same value; SIGUSR1 adds 1 to
# g_counter only (a `lock add`: the new value is nowhere else).  The first
# scan finds exactly those 4 (with image, static offset, symbol g_decoy+4,
# and a watch spec that `vigil read` resolves to the same address); after
# the signal --increased, --changed, --eq NEW, --increased-by 1 and --range
# keep exactly g_counter, --unchanged exactly the decoys, --decreased and
# --increased-by 2 nothing; a narrowed set narrows again; the table view of
# the one match prints the `vigil watch` line with the symbol.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_scan "$truth" 8
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
base=$(truth_get "$truth" counter_base)

check_json() {  # check_json NAME MODE PYTHON-EXPECTATIONS (d: doc, t: truth)
	vg_py "$truth" "$T/$1.out" "$2" "$3" "$LAST_CMD" "$pid" <<'PY'
import sys
from scancheck import *
t = ScanTruth(sys.argv[1])
d = load_json(sys.argv[2])
mode, code, w, pid = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
check_scan(d, pid, mode, w)
counter = t.sym("g_counter")
decoys = [t.sym("g_decoy", 4 * i) for i in range(3)]
exec(code)
done()
PY
}

vg first scan "$pid" "$base" --type i32 --save "$T/s0.set" --json
assert_rc 0
check_json first first '
eq_set(w, [counter] + decoys, d)
bm = by_addr(d)
for a, sym, name in [(counter, "g_counter", "g_counter"), (decoys[0], "g_decoy", "g_decoy"),
                     (decoys[1], "g_decoy+4", "g_decoy"), (decoys[2], "g_decoy+8", "g_decoy")]:
    m = bm.get(a)
    if not m:
        continue
    off = a - t.syms[name]["runtime"]
    eq(f"{w}: {a:#x} symbol", sym, m.get("symbol"))
    eq(f"{w}: {a:#x} image", t.exe, m.get("image"))
    eq(f"{w}: {a:#x} static_offset", hex(t.syms[name]["static"] + off), m.get("static_offset"))
    eq(f"{w}: {a:#x} value", str(t.counter_base), m.get("value"))
    eq(f"{w}: {a:#x} region.path", t.exe, m["region"].get("path"))
    check(m.get("perms", "").startswith("rw"), "%s: %#x perms %r" % (w, a, m.get("perms")))
eq(w + ": scan.generation", 0, d["scan"].get("generation"))
with open(sys.argv[2] + ".watch", "w") as f:
    for a in [counter] + decoys:
        if a in bm:
            f.write("%#x %s\n" % (a, bm[a]["watch"]))
'
# Every watch spec is an ADDR form that resolves to its match.
while read -r a spec; do
	vg "resolve" read "$pid" "$spec" 4 --json
	assert_rc 0
	got=$(jget "$T/resolve.out" 'd["address"]')
	assert_eq "vigil read $pid $spec: address (the watch spec of match $a)" "$a" "$got"
done <"$T/first.out.watch"
echo "ok: first scan: g_counter and g_decoy+0/4/8, symbols, static offsets, watch specs"

kill -USR1 "$pid"
wait_truth "$truth" u1-s0-h0
new=$((base + 1))

vg inc scan "$pid" --from "$T/s0.set" --increased --save "$T/s1.set" --json
assert_rc 0
check_json inc narrow '
eq_set(w, [counter], d)
sc = d["scan"]
eq(w + ": scan.op", "increased", sc.get("op"))
eq(w + ": scan.type", "i32", sc.get("type"))
eq(w + ": scan.value (the first scan VALUE)", str(t.counter_base), sc.get("value"))
check(str(sc.get("from", "")).endswith("/s0.set"), w + ": scan.from %r" % sc.get("from"))
check(str(sc.get("saved_to", "")).endswith("/s1.set"), w + ": scan.saved_to %r" % sc.get("saved_to"))
eq(w + ": scan.generation", 1, sc.get("generation"))
eq(w + ": matches_unreadable", 0, d.get("matches_unreadable"))
m = by_addr(d).get(counter)
if m:
    eq(w + ": value now", str(t.counter_base + 1), m.get("value"))
    eq(w + ": symbol", "g_counter", m.get("symbol"))
'
for test in "--changed" "--eq $new" "--increased-by 1" "--range $new..$((base + 5))" "--range $new..$new"; do
	# shellcheck disable=SC2086
	vg op scan "$pid" --from "$T/s0.set" $test --json
	assert_rc 0
	check_json op narrow 'eq_set(w, [counter], d)'
done
vg unch scan "$pid" --from "$T/s0.set" --unchanged --json
assert_rc 0
check_json unch narrow 'eq_set(w, decoys, d)
eq(w + ": scan.op", "unchanged", d["scan"].get("op"))'
for test in "--decreased" "--increased-by 2" "--decreased-by 1" "--eq $((base + 2))" "--range 0..$((base - 1))"; do
	# shellcheck disable=SC2086
	vg op scan "$pid" --from "$T/s0.set" $test --json
	assert_rc 0
	check_json op narrow 'eq_set(w, [], d)
eq(w + ": matches_total", 0, d.get("matches_total"))'
done
echo "ok: after SIGUSR1: increased/changed/eq/increased-by/range keep g_counter, unchanged the decoys, the rest nothing"

# The narrowed set narrows again after a second signal.
kill -USR1 "$pid"
wait_truth "$truth" u2-s0-h0
vg inc2 scan "$pid" --from "$T/s1.set" --increased-by 1 --json
assert_rc 0
check_json inc2 narrow 'eq_set(w, [counter], d)
eq(w + ": scan.generation", 2, d["scan"].get("generation"))
m = by_addr(d).get(counter)
if m:
    eq(w + ": value now", str(t.counter_base + 2), m.get("value"))'
vg eq2 scan "$pid" --from "$T/s1.set" --eq "$((base + 2))" --json
assert_rc 0
check_json eq2 narrow 'eq_set(w, [counter], d)'
echo "ok: a narrowed set narrows again"

# Table view of one match: the line to watch it, by symbol.
vg table scan "$pid" --from "$T/s1.set" --changed
assert_rc 0
spec=$(cut -d' ' -f2 <(grep "^$(truth_sym "$truth" g_counter runtime) " "$T/first.out.watch"))
[[ -n $spec ]] || harness_error "no watch spec of g_counter recorded"
grep -qE "watch it: vigil watch $pid $spec --len 4\$" "$T/table.out" ||
	{ show_last; fail "$LAST_CMD: no line 'watch it: vigil watch $pid $spec --len 4'"; }
grep -qw g_counter "$T/table.out" || { show_last; fail "$LAST_CMD: table does not name g_counter"; }
echo "ok: table view"
