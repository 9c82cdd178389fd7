#!/bin/bash
# stack_starved: a runnable thread that gets no CPU.  tgt_stack_basic's
# threads are pinned to one CPU at nice 19, beside a busy loop at nice 0
# on the same CPU, so the spinner is runnable but queued for long spells
# (hundreds of ms here).  With every way allowed, the spinner is still
# read (the task iterator takes a queued thread at rest; a sample if it
# is on the CPU), complete, in spin() under spinner_main.  With perf
# samples alone each run must either give the sample (same frames) or
# say honestly that the thread was queued: "no perf sample came in N ms
# (it had U us of CPU meanwhile: queued behind other work)", N >= 250
# and U under one period (100) or a tenth of the wait -- never a bare
# "none" or a reason that blames the methods.  The target must run on
# meanwhile.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_stack_basic "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
spinner=$(awk '$1 == "thread" && $3 == "spinner" { print $2 }' "$truth")
# the first CPU this test may use
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//')
taskset -apc "$cpu" "$pid" >/dev/null || harness_error "taskset of the target failed"
for task in /proc/"$pid"/task/*; do
	renice -n 19 -p "${task##*/}" >/dev/null || harness_error "renice of ${task##*/} failed"
done
taskset -c "$cpu" sh -c 'while :; do :; done' &
track_pid $!
sleep 0.2

vg all stack "$pid" --tid "$spinner" --json
assert_rc 0
for attempt in 1 2 3; do
	VIGIL_STACK_METHODS=perf_sample vg "perf$attempt" stack "$pid" --tid "$spinner" --json
	assert_rc 0
done

vg_py "$T" <<'PY' || fail "vigil stack of a queued thread: see above"
import re, sys
from vgcheck import *
T = sys.argv[1]

def spinner(path):
    doc = load_json(path)
    check(len(doc["threads"]) == 1, f"{path}: {len(doc['threads'])} threads, expected the spinner alone")
    return doc, doc["threads"][0] if doc["threads"] else {}

def frames_ok(w, t):
    eq(f"{w}: complete", True, t.get("complete"))
    own = [f.get("function") for f in t.get("frames") or []
           if str(f.get("image", "")).endswith("tgt_stack_basic")]
    eq(f"{w}: own frames", ["spin", "spinner_main"], own[:2])

doc, t = spinner(f"{T}/all.out")
check(t.get("obtained") in ("task_iter", "perf_sample"),
      f"all ways: obtained {t.get('obtained')!r}: {t.get('why')!r}")
frames_ok("all ways", t)
queued = 0
for a in (1, 2, 3):
    w = f"perf_sample, run {a}"
    doc, t = spinner(f"{T}/perf{a}.out")
    if t.get("obtained") == "perf_sample":
        frames_ok(w, t)
        eq(f"{w}: why", None, t.get("why"))
        continue
    queued += 1
    eq(f"{w}: obtained", "none", t.get("obtained"))
    m = re.fullmatch(r"running, and no perf sample came in (\d+) ms \(it had (\d+) us of CPU "
                     r"meanwhile: queued behind other work\)", str(t.get("why")))
    check(m is not None, f"{w}: why {t.get('why')!r} is not the queued-thread reason")
    if m:
        check(int(m[1]) >= 250, f"{w}: gave up after {m[1]} ms, before 250 ms")
        check(int(m[2]) < 100 or int(m[2]) * 10 < int(m[1]) * 1000,
              f"{w}: {m[2]} us of CPU in {m[1]} ms is neither under a sample period nor a tenth of the wait")
        check(doc["observation"]["elapsed_ns"] >= 250e6,
              f"{w}: the run took {doc['observation']['elapsed_ns']} ns, less than its stated wait")
print(f"perf_sample alone: {3 - queued} of 3 runs sampled, {queued} queued for the whole wait")
done()
PY
echo "ok: a queued thread is read, or said to be queued"
