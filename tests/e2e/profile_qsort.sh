#!/bin/bash
# profile_qsort: tgt_profile qsort spends nearly all its time in cmp_slow,
# a comparator called by libc's qsort (qsort -> qsort_r -> msort_with_tmp
# in glibc 2.36), which is built without frame pointers.  With --unwind
# dwarf (CFI from the sampled registers and stack copy) the stacks of at
# least 80 % of cmp_slow's samples must read, root first,
#   ... main, sort_loop, <one or more libc.so.6 frames, one of them qsort,
#   qsort_r or msort_with_tmp>, cmp_slow
# with nothing else between main and sort_loop.  With --unwind fp the
# kernel's frame-pointer walk cannot pass libc: the test prints what fp
# gives (share of cmp_slow samples reaching sort_loop and main) and
# asserts only what fp must still get right (the leaf, the report).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_profile "$truth" qsort
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg dwarf profile "$pid" --duration 2000 --freq 999 --unwind dwarf --json
assert_rc 0
vg fp profile "$pid" --duration 2000 --freq 999 --unwind fp --json
assert_rc 0

vg_py "$pid" <<'PY' || { show_last; fail "vigil profile --unwind dwarf|fp on tgt_profile qsort: see above"; }
import os, sys
from profcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
SORTERS = {"qsort", "qsort_r", "__qsort_r", "msort_with_tmp", "_quicksort", "__GI___qsort_r"}

def libc(f):
    return os.path.basename(str(f.get("image"))).startswith("libc.so")

def shapes(doc, what):
    by, stacks = check_profile_body(doc, what)
    n = (doc.get("observation") or {}).get("samples") or 0
    cmp_n = good = reach_sort = reach_main = 0
    bad = {}
    for s in stacks:
        fr, c = s.get("frames") or [], s.get("count") or 0
        if not fr or fr[-1].get("function") != "cmp_slow":
            continue
        cmp_n += c
        names = [f.get("function") for f in fr]
        reach_sort += c if "sort_loop" in names else 0
        reach_main += c if "main" in names else 0
        ok = False
        if "sort_loop" in names:
            i = len(names) - 1 - names[::-1].index("sort_loop")
            mid = fr[i + 1:-1]
            ok = (i > 0 and names[i - 1] == "main" and mid and all(libc(f) for f in mid)
                  and any(f.get("function") in SORTERS for f in mid))
        if ok:
            good += c
        else:
            k = " <- ".join(str(x) for x in names[::-1][:8])
            bad[k] = bad.get(k, 0) + c
    return by, n, cmp_n, good, reach_sort, reach_main, bad

d = load_json(f"{T}/dwarf.out")
check_profile_doc(d, pid, "dwarf", stop_reason="duration", unwind="dwarf")
by, n, cmp_n, good, rs, rm, bad = shapes(d, "dwarf")
check(cmp_n >= 0.5 * n, f"dwarf: cmp_slow is the leaf of {cmp_n} of {n} samples (expected most)")
check(cmp_n and good >= 0.8 * cmp_n,
      f"dwarf: only {good} of {cmp_n} cmp_slow samples unwind to main <- sort_loop <- libc qsort "
      f"<- cmp_slow; other stacks (leaf first): {sorted(bad.items(), key=lambda kv: -kv[1])[:4]!r}")
print(f"dwarf: {good} of {cmp_n} cmp_slow samples ({100.0 * good / max(cmp_n, 1):.1f} %) read "
      f"main <- sort_loop <- libc <- cmp_slow ({n} samples in all)")

f = load_json(f"{T}/fp.out")
check_profile_doc(f, pid, "fp", stop_reason="duration", unwind="fp")
by, n, cmp_n, good, rs, rm, bad = shapes(f, "fp")
check(cmp_n >= 0.5 * n, f"fp: cmp_slow is the leaf of {cmp_n} of {n} samples (expected most)")
print(f"fp (reported, not asserted): of {cmp_n} cmp_slow samples {rs} reach sort_loop, {rm} main, "
      f"{good} the whole dwarf shape; commonest: {sorted(bad.items(), key=lambda kv: -kv[1])[:3]!r}")
done()
PY
echo "ok"
