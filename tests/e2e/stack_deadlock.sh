#!/bin/bash
# stack_deadlock: the table of vigil stack on tgt_stack_waits opens with
# the DEADLOCK block, before any thread's group, and that block is exactly
# the truth's two-thread cycle: its header names dl_a and dl_b, each thread
# the lock it waits for and its holder, the line taking the lock (function
# and file:line) and a stack whose frame in the target is that line.  The
# summary line counts one deadlock; both threads' groups are marked.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_stack_waits "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
vg table stack "$pid" --no-kernel
assert_rc 0

vg_py "$T/table.out" "$truth" <<'PY' || { show_last; fail "the DEADLOCK block: see above"; }
import re, sys
from vgcheck import *
text, truth = open(sys.argv[1]).read(), sys.argv[2]
th = {l.split()[1]: l.split()[2:] for l in open(truth) if l.startswith("thread ")}
a, b = int(th["dl_a"][0]), int(th["dl_b"][0])
la, lb = th["dl_a"][3], th["dl_b"][3]
paras = text.split("\n\n")
check(paras[0].splitlines()[0].endswith("; 1 DEADLOCK"), f"summary line: {paras[0].splitlines()[0]!r}")
check(len(paras) > 1 and paras[1].startswith("DEADLOCK:"),
      "the DEADLOCK block is not the first thing after the summary")
block = paras[1].splitlines() if len(paras) > 1 else []
head = [l for l in block if not l.startswith("    #")]
want = [
    f"DEADLOCK: 2 threads wait for each other: {a} (dl_a), {b} (dl_b)",
    f"  thread {a} (dl_a) waits for g_m2 held by {b} (dl_b)",
    f"    blocked at: dl_a_main  tgt_stack_waits.c:{la}:COL",
    f"  thread {b} (dl_b) waits for g_m1 held by {a} (dl_a)",
    f"    blocked at: dl_b_main  tgt_stack_waits.c:{lb}:COL",
]
eq_list("DEADLOCK block", want, [re.sub(r"(\.c:\d+):\d+$", r"\1:COL", l) for l in head])
# each thread's stack follows its lines, with the target's frame at that line
cur = None
frames = {a: [], b: []}
for l in block:
    m = re.match(r"  thread (\d+) ", l)
    if m:
        cur = int(m.group(1))
    elif l.startswith("    #") and cur in frames:
        frames[cur].append(l)
for tid, fn, line in ((a, "dl_a_main", la), (b, "dl_b_main", lb)):
    check(any(re.search(rf"  {fn}  \S*tgt_stack_waits\.c:{line}:\d+  in tgt_stack_waits$", l)
              for l in frames[tid]), f"thread {tid}: no frame {fn} at line {line}: {frames[tid]}")
    check(any("pthread_mutex_lock" in l for l in frames[tid]), f"thread {tid}: no pthread_mutex_lock frame")
for tid in (a, b):
    check(re.search(rf"^thread {tid} \(\S+\) S cpu \S+  \[DEADLOCK\]$", text, re.M),
          f"thread {tid}'s group is not marked [DEADLOCK]")
done()
PY
echo "ok"
