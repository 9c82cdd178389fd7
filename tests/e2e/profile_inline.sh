#!/bin/bash
# profile_inline: tgt_profile inline spends its time in hot_inline, an
# always_inline loop inside the noinline inline_caller: the machine code
# is inline_caller's, the lines hot_inline's.  vigil profile must show
# hot_inline as an inlined frame directly under inline_caller (--json:
# frames root first, the leaf hot_inline with inlined true at a line of
# hot_inline's body, then inline_caller, not inlined, at the line of the
# call, the same image), for >= 80 % of the samples; in --format folded the
# same pair, "inline_caller;hot_inline_[i]" (FlameGraph's inline mark),
# and the table says "hot_inline (inlined)".
source "$(dirname "$0")/lib.sh"

src=$E2E_DIR/../targets/tgt_profile.c
[[ -f $src ]] || harness_error "no $src"
body=$(grep -n 'void hot_inline(unsigned units)$' "$src" | cut -d: -f1)
call=$(grep -n '^	hot_inline(10);$' "$src" | cut -d: -f1)
[[ -n $body && -n $call ]] || harness_error "hot_inline's definition or call not found in $src"

truth=$T/truth
start_target tgt_profile "$truth" inline
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg_cpu "$pid" json profile "$pid" --duration 2000 --freq 999 --json
assert_rc 0
vg folded profile "$pid" --duration 2000 --freq 999 --format folded
assert_rc 0
vg table profile "$pid" --duration 2000 --freq 999
assert_rc 0

vg_py "$pid" "$body" "$call" <<'PY' || { show_last; fail "vigil profile on tgt_profile inline: see above"; }
import os, sys
from profcheck import *
T, pid, body, call = os.environ["T"], int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

doc = load_json(f"{T}/json.out")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check_sample_count(n, run_cpu_s("json"), 999, "json: observation.samples")

good, shapes = 0, {}
for s in stacks:
    fr = s.get("frames") or []
    names = tuple((f.get("function"), f.get("inlined")) for f in fr[-3:])
    shapes[names] = shapes.get(names, 0) + (s.get("count") or 0)
    if len(fr) < 2:
        continue
    leaf, caller = fr[-1], fr[-2]
    if leaf.get("function") != "hot_inline":
        continue
    w = f"json: stack {[f.get('function') for f in fr]}"
    eq(f"{w}: hot_inline inlined", True, leaf.get("inlined"))
    eq(f"{w}: the frame above hot_inline", "inline_caller", caller.get("function"))
    eq(f"{w}: inline_caller inlined", False, caller.get("inlined"))
    eq(f"{w}: hot_inline kernel", False, leaf.get("kernel"))
    check(str(leaf.get("image", "")).endswith("tgt_profile") and leaf.get("image") == caller.get("image"),
          f"{w}: images {leaf.get('image')!r} / {caller.get('image')!r}, both tgt_profile expected")
    eq(f"{w}: hot_inline and inline_caller share one address (one machine frame)",
       caller.get("address"), leaf.get("address"))
    eq(f"{w}: hot_inline's file", "tgt_profile.c", os.path.basename(str(leaf.get("file"))))
    check(isinstance(leaf.get("line"), int) and body < leaf["line"] <= body + 4,
          f"{w}: hot_inline's line {leaf.get('line')!r} is not in its body (lines {body + 1}-{body + 4})")
    eq(f"{w}: inline_caller's line (the call of hot_inline)", call, caller.get("line"))
    if caller.get("function") == "inline_caller" and leaf.get("inlined") is True:
        good += s.get("count") or 0
top = sorted(shapes.items(), key=lambda kv: -kv[1])[:4]
check(n and good >= 0.8 * n, f"json: only {good} of {n} samples end in inline_caller -> hot_inline "
      f"(inlined); leaf triples seen: {top!r}")
f = by.get("hot_inline") or {}
check((f.get("self_share") or 0) >= 80, f"json: functions[hot_inline].self_share {f.get('self_share')!r} < 80")
print(f"json: {good} of {n} samples end inline_caller -> hot_inline [inlined]")

st = parse_folded(open(f"{T}/folded.out").read(), "folded")
pair, total, raw = 0, 0, set()
for frames, c in st:
    total += c
    if len(frames) >= 2 and strip_name(frames[-1]) == "hot_inline":
        raw.add((frames[-2], frames[-1]))
        if frames[-2] == "inline_caller" and frames[-1] == "hot_inline_[i]":
            pair += c
check(total and pair >= 0.8 * total,
      f"folded: only {pair} of {total} samples end 'inline_caller;hot_inline_[i]'; pairs seen {sorted(raw)!r}")
print(f"folded: {pair} of {total} samples end 'inline_caller;hot_inline_[i]'")

rows, _ = parse_table(open(f"{T}/table.out").read(), "table")
r = rows.get("hot_inline") or {}
eq("table: hot_inline marked '(inlined)'", True, r.get("inlined"))
check((r.get("self_pct") or 0) >= 80, f"table: hot_inline self {r.get('self_pct')!r} % < 80")
eq("table: inline_caller marked '(inlined)'", False, (rows.get("inline_caller") or {}).get("inlined", False))
done()
PY
echo "ok"
