#!/bin/bash
# scan_snapshot: --snapshot FILE, then --from FILE --type u32 --aligned
# --changed/--unchanged against the live memory.  tgt_scan's SIGUSR2 adds
# STEP to g_stats.ticks (g_stats+4) only (a `lock add`).
#   - writable snapshot: --changed includes the field and none of the other
#     three words of g_stats; narrowing that set after a second SIGUSR2 with
#     --increased-by STEP leaves exactly the field;
#   - snapshot of tgt_scan's own image (--regions tgt_scan): --changed is
#     exactly the field, --unchanged every other aligned word of the image
#     mappings (g_stats+0/8/12 and g_counter among them), not the field.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_scan "$truth" 8
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
step=$(truth_get "$truth" field_step)

check_json() {  # check_json NAME MODE PYTHON-EXPECTATIONS (d: doc, t: truth)
	vg_py "$truth" "$T/$1.out" "$2" "$3" "$LAST_CMD" "$pid" <<'PY'
import sys
from scancheck import *
t = ScanTruth(sys.argv[1])
d = load_json(sys.argv[2])
mode, code, w, pid = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
check_scan(d, pid, mode, w, complete="max-list" not in w)
field = t.field
others = [t.sym("g_stats", o) for o in (0, 8, 12)]
exec(code)
done()
PY
}

vg snap scan "$pid" --snapshot "$T/all.snap" --json
assert_rc 0
[[ -s $T/all.snap ]] || fail "$LAST_CMD: no snapshot written"
check_json snap snapshot '
check(str(d["scan"].get("saved_to", "")).endswith("/all.snap"), w + ": scan.saved_to %r" % d["scan"].get("saved_to"))
eq(w + ": scan.regions", "writable", d["scan"].get("regions"))
check(d.get("bytes", 0) >= 8 << 20, w + ": bytes %r: less than the 8 MiB heap block" % d.get("bytes"))
eq(w + ": regions_skipped", 0, d.get("regions_skipped"))'
vg snapimg scan "$pid" --snapshot "$T/img.snap" --regions tgt_scan --json
assert_rc 0
check_json snapimg snapshot 'eq(w + ": scan.regions", "tgt_scan", d["scan"].get("regions"))'
echo "ok: snapshots taken"

kill -USR2 "$pid"
wait_truth "$truth" u0-s1-h0

vg changed scan "$pid" --from "$T/all.snap" --type u32 --aligned --changed --save "$T/changed.set" --max-list 100000 --json
assert_rc 0
check_json changed snapshot_compare '
got = set(matches(d))
check(field in got, w + f": the changed field {field:#x} (g_stats+4) is not among the {len(got)} matches")
for o in others:
    check(o not in got, w + f": {o:#x} (unchanged word of g_stats) is listed as changed")
check(all(a % 4 == 0 for a in got), w + ": an unaligned address with --aligned")
eq(w + ": all listed", d.get("matches_total"), d.get("matches_listed"))
sc = d["scan"]
eq(w + ": scan.type", "u32", sc.get("type"))
eq(w + ": scan.op", "changed", sc.get("op"))
eq(w + ": scan.aligned", True, sc.get("aligned"))
m = by_addr(d).get(field)
if m:
    eq(w + ": field value now", str(0x22220000 + t.field_step), m.get("value"))
    eq(w + ": field symbol", "g_stats+4", m.get("symbol"))
print(f"note: {len(got)} aligned words of writable memory changed after one SIGUSR2")'

vg imgchanged scan "$pid" --from "$T/img.snap" --type u32 --aligned --changed --json
assert_rc 0
check_json imgchanged snapshot_compare 'eq_set(w, [field], d)'
vg imgunchanged scan "$pid" --from "$T/img.snap" --type u32 --aligned --unchanged --max-list 100000 --json
assert_rc 0
check_json imgunchanged snapshot_compare '
got = set(matches(d))
check(field not in got, w + f": the changed field {field:#x} is listed as unchanged")
for a in others + [t.sym("g_counter"), t.sym("g_root")]:
    check(a in got, w + f": {a:#x} did not change and is not listed")
check(len(got) >= 4, w + ": too few")'
echo "ok: after SIGUSR2: --changed has the field, --unchanged does not; exact on the image"

kill -USR2 "$pid"
wait_truth "$truth" u0-s2-h0
vg narrowed scan "$pid" --from "$T/changed.set" --increased-by "$step" --json
assert_rc 0
check_json narrowed narrow 'eq_set(w, [field], d)
m = by_addr(d).get(field)
if m:
    eq(w + ": value now", str(0x22220000 + 2 * t.field_step), m.get("value"))'
vg narrowed2 scan "$pid" --from "$T/changed.set" --changed --json
assert_rc 0
check_json narrowed2 narrow '
got = set(matches(d))
check(field in got, w + ": the field changed again and is not listed")
if len(got) > 1:
    print(f"note: --changed twice keeps {len(got) - 1} more words besides the field (stack noise): {sorted(hex(a) for a in got if a != field)[:8]}")'
echo "ok: the changed set narrowed after a second SIGUSR2: exactly the field"
