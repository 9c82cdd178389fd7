#!/bin/bash
# stack_wall: vigil stack --every (the wall-clock profile) on
# tgt_stack_basic.  Every snapshot adds one sample per thread, each stack
# ending in a leaf that names what the thread waits for: in --format
# folded the two nappers give "...;napper_main;nap_[i];...;[sleep]" twice
# per snapshot, the reader "...;reader_main;wait_pipe;...;[read pipe:[N]
# read end, ...]" once, the spinner "...;spinner_main;spin;[running]"
# once, the main thread "...;[signal pause]" once: 5 samples per
# snapshot, the snapshot count as stderr says, and stderr's totals by
# state and by wait agree (the table carries the same line).  At least 5
# snapshots in the 600 ms, unless stderr counts late ticks (snapshots that
# outlasted the 20 ms period: an ASan build on a loaded machine takes
# 200 ms for one); then at least one.  The
# table goes to -o FILE; bad input: --every without --duration, --duration
# or --format without --every, --every 0, --every with --json (exit 2).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_stack_basic "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg folded stack "$pid" --every 20 --duration 600 --format folded
assert_rc 0
snaps=$(sed -n 's/^# \([0-9]*\) snapshots.*/\1/p' "$T/folded.err")
late=$(sed -n 's/^# [0-9]* snapshots, .*; \([0-9]*\) late ticks, .*/\1/p' "$T/folded.err")
[[ -n $snaps && -n $late ]] || { show_last; fail "no '# N snapshots, ...; N late ticks, ...' line on stderr"; }
vg_py "$T/folded.out" "$snaps" "$late" <<'PY' || { show_last; fail "vigil stack --every --format folded: see above"; }
import sys
from vgcheck import *
lines, snaps, late = open(sys.argv[1]).read().splitlines(), int(sys.argv[2]), int(sys.argv[3])
# A snapshot that outlasts the period delays the next, and stderr counts
# it: fewer snapshots are then what the machine allowed, not a fault.
check(snaps >= 5 or (late > 0 and snaps >= 1),
      f"only {snaps} snapshots in 600 ms at 20 ms, and {late} late ticks to explain it")
if late:
    print(f"note: {snaps} snapshots, {late} late ticks (snapshots that outlasted the 20 ms period)")

by = {}
for l in lines:
    stack, _, c = l.rpartition(" ")
    by[stack] = by.get(stack, 0) + int(c)
def count(pred):
    return sum(c for s, c in by.items() if pred(s.split(";")))
eq("total samples (5 threads per snapshot)", 5 * snaps, sum(by.values()))
eq("nappers: napper_main;nap_[i] ... [sleep]", 2 * snaps,
   count(lambda f: "napper_main" in f and f[f.index("napper_main") + 1] == "nap_[i]" and f[-1] == "[sleep]"))
eq("reader: reader_main;wait_pipe ... [read pipe:[N] read end, ...]", snaps,
   count(lambda f: "reader_main" in f and f[f.index("reader_main") + 1] == "wait_pipe" and
         f[-1].startswith("[read pipe:[") and " read end" in f[-1]))
eq("spinner: spinner_main;spin;[running]", snaps, count(lambda f: f[-3:] == ["spinner_main", "spin", "[running]"]))
eq("main thread: main ... [signal pause]", snaps, count(lambda f: "main" in f and f[-1] == "[signal pause]"))
done()
PY
# stderr's totals: the spinner is running, or preempted in its own code
# (wait "user"); the others as above
vg_py "$T/folded.err" "$snaps" <<'PY' || { show_last; fail "stderr's totals by state and by wait"; }
import sys
from vgcheck import *
text, snaps = open(sys.argv[1]).read().splitlines(), int(sys.argv[2])
line = next((l for l in text if l.startswith("# by state: ")), "")
check("; by wait: " in line, f"no '# by state: ...; by wait: ...' line: {line!r}")
st, _, wt = line[len("# by state: "):].partition("; by wait: ")
def totals(part):
    return {k: int(v) for k, v in (p.rsplit(" ", 1) for p in part.split(", "))} if part else {}
eq("by state", {"running": snaps, "sleeping": 4 * snaps}, totals(st))
w = totals(wt)
eq("by wait: running + user", snaps, w.pop("running", 0) + w.pop("user", 0))
eq("by wait", {"io": snaps, "sleep": 2 * snaps, "signal": snaps}, w)
done()
PY
echo "ok: folded: $snaps snapshots, every thread's stack and wait"

vg table stack "$pid" --every 20 --duration 300 -o "$T/wall.txt"
assert_rc 0
[[ ! -s $T/table.out ]] || { show_last; fail "-o FILE: output on stdout"; }
grep -q '\[sleep\]' "$T/wall.txt" && grep -q '\[running\]' "$T/wall.txt" ||
	{ cat "$T/wall.txt" >&2; fail "the table has no [sleep] or [running] leaf"; }
grep -q '^by state: running [0-9]*, sleeping [0-9]*; by wait: ' "$T/wall.txt" ||
	{ cat "$T/wall.txt" >&2; fail "the table has no 'by state: ...; by wait: ...' line"; }
echo "ok: table to -o FILE"

refuse() { refuse_cmd stack 2000 "$@"; }
refuse no_duration 2 "needs --duration" "$pid" --every 20
refuse no_every 2 "give --every" "$pid" --duration 500
refuse format_alone 2 "give --every" "$pid" --format folded
refuse every_zero 2 "invalid --every" "$pid" --every 0 --duration 500
vg every_json stack "$pid" --every 20 --duration 500 --json
assert_rc 2
grep -q 'use --format' "$T/every_json.out" || { show_last; fail "--every --json: the error document does not say to use --format"; }
echo "ok"
