#!/bin/bash
# stack_several: `vigil stack -p A,B` (and -p A -p B) shows each process's
# snapshot in turn, as `vigil stack A` then `vigil stack B` would.  Two
# tgt_profile targets burn CPU in their own functions (A split: hot_a /
# hot_b under main; B qsort: sort_loop -> qsort -> cmp_slow).  Exact: the
# output has one section per process, in the order given, headed "pid N
# (tgt_profile): 1 thread"; A's section names main and hot_a or hot_b and
# nothing of B's, B's names sort_loop and nothing of A's; -o FILE holds the
# same sections.  --json, --tid and --every take one process (exit 2);
# a list with a process that does not exist ends with exit 4.
source "$(dirname "$0")/lib.sh"

start_target tgt_profile "$T/a.truth" split
start_target tgt_profile "$T/b.truth" qsort
for x in a b; do wait_truth "$T/$x.truth" ready; done
A=$(truth_get "$T/a.truth" pid) B=$(truth_get "$T/b.truth" pid)

check_sections() {   # FILE
	vg_py "$1" "$A" "$B" <<'PY'
import re, sys
from vgcheck import *
text, A, B = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3])
heads = [(m.start(), int(m.group(1))) for m in re.finditer(r"^pid (\d+) \(tgt_profile\): 1 thread", text, re.M)]
eq("sections (pid order)", [A, B], [p for _, p in heads])
if len(heads) == 2:
    sec = {A: text[heads[0][0]:heads[1][0]], B: text[heads[1][0]:]}
    fn = lambda s: set(re.findall(r"^\s+#\d+\s+0x[0-9a-f]+\s+(\S+)", s, re.M))
    a, b = fn(sec[A]), fn(sec[B])
    # On a miss, the whole section: how the stack was obtained and
    # whether vigil flagged it (a rare CI failure showed main alone).
    check("main" in a and a & {"hot_a", "hot_b"}, f"pid {A}'s section: {sorted(a)}\n{sec[A]}")
    check("sort_loop" in b, f"pid {B}'s section: {sorted(b)}\n{sec[B]}")
    check(not a & {"sort_loop", "cmp_slow", "qsort_r"}, f"pid {A}'s section holds B's frames: {sorted(a)}")
    check(not b & {"hot_a", "hot_b"}, f"pid {B}'s section holds A's frames: {sorted(b)}")
done()
PY
}

vg list stack -p "$A,$B"
assert_rc 0
check_sections "$T/list.out" || { show_last; fail "$LAST_CMD: see above"; }
vg repeated stack -p "$A" -p "$B" -o "$T/st.txt"
assert_rc 0
[[ ! -s $T/repeated.out ]] || { show_last; fail "$LAST_CMD: output on stdout with -o"; }
check_sections "$T/st.txt" || { show_last; fail "$LAST_CMD: the -o file, see above"; }
echo "ok: stack -p A,B and -p A -p B -o FILE: one section per process, in order, each with its own frames"

vg json stack -p "$A,$B" --json
assert_rc 2
vg_py "$T/json.out" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
check_error_doc(doc, 2, "stack --json with a list")
check("--json describes one process" in doc["error"]["message"], f"message: {doc['error']['message']!r}")
done()
PY
refuse_cmd stack 2000 tid 2 "--tid describes one process" -p "$A,$B" --tid "$A"
refuse_cmd stack 2000 every 2 "--every describes one process" -p "$A,$B" --every 10ms --duration 1s
dead=$(bash -c 'echo $$')
vg gone stack -p "$A,$dead"
assert_rc 4
grep -q "^pid $A (tgt_profile)" "$T/gone.out" || { show_last; fail "$LAST_CMD: pid $A's section missing before the error"; }
echo "ok: --json, --tid, --every refuse a list; a dead pid in it exits 4"
