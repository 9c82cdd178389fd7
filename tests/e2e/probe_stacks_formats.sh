#!/bin/bash
# probe_stacks_formats: `vigil probe PID probe_leaf --stacks --format F -o
# FILE` writes the stacks through profile's stack writers.  tgt_probe
# stacks calls probe_leaf() 60 times from stack_a() and 40 times from
# stack_b(), both under main: every format must give exactly those counts,
# each stack running from an outer frame (main among them) to probe_leaf
# as its leaf, 100 in all.
#   folded  root first "a;b;...;probe_leaf COUNT" lines
#   pprof   go tool pprof -traces: each sample's count and its frames,
#           innermost first (names from the file: -symbolize=none)
#   table   profile's table: probe_leaf has all 100 as self
source "$(dirname "$0")/lib.sh"
source "$E2E_DIR/probelib.bash"

command -v go >/dev/null || skip "go is not installed (go tool pprof reads the pprof output; scripts/install-deps.sh)"

for fmt in folded pprof table; do
	truth=$T/$fmt.truth
	start_target tgt_probe "$truth" stacks
	pid=$TPID
	wait_truth "$truth" ready
	out=$T/stacks.$fmt
	probe_bg "$fmt" int "$truth" "$pid" probe "$pid" probe_leaf --stacks --format "$fmt" -o "$out"
	assert_rc 0 "vigil probe --stacks --format $fmt -o FILE"
	[[ -s $out ]] || { show_last; fail "$LAST_CMD: $out is empty"; }
	[[ ! -s $T/$fmt.out ]] || { show_last; fail "$LAST_CMD: wrote to stdout as well as to -o"; }
	vg_py "$truth" "$out" "$fmt" "$T" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: stacks differ (above)"; }
import os, subprocess, sys
from probecheck import *
from profcheck import parse_folded, parse_table, strip_name
t, path, fmt, tmp, w = ProbeTruth(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
eq(w + ": the target calls (harness)", (60, 40), (t.int("stack_a"), t.int("stack_b")))

def check_stacks(stacks):
    """stacks: [(frames innermost first, count)]."""
    by = {"stack_a": 0, "stack_b": 0}
    for frames, n in stacks:
        sw = "%s: stack %r" % (w, frames)
        if not check(len(frames) >= 3, sw + ": expected at least probe_leaf, its caller and main"):
            continue
        eq(sw + ": the leaf", "probe_leaf", frames[0])
        if check(frames[1] in by, sw + ": the leaf's caller must be stack_a or stack_b"):
            by[frames[1]] += n
        check("main" in frames[2:], sw + ": main must be an outer frame")
    eq(w + ": calls through stack_a / stack_b", {"stack_a": 60, "stack_b": 40}, by)
    eq(w + ": calls in all stacks", 100, sum(n for _, n in stacks))

if fmt == "folded":
    text = open(path).read()
    check_stacks([([strip_name(f) for f in reversed(fr)], n) for fr, n in parse_folded(text, w)])
elif fmt == "pprof":
    env = dict(os.environ, HOME=tmp, GOCACHE=tmp + "/gocache", GOPATH=tmp + "/gopath",
               GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=tmp)
    p = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-traces", path],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, w + ": go tool pprof -traces exit %d: %s" % (p.returncode, p.stderr[:600]))
    stacks, cur = [], None
    for ln in p.stdout.splitlines():
        if ln.startswith("-----------+"):
            cur = None
            continue
        parts = ln.split()
        if not parts or "|" in ln:
            continue
        if cur is None and parts[0].isdigit() and len(parts) >= 2:
            cur = ([parts[1]], int(parts[0]))
            stacks.append(cur)
        elif cur is not None and not ln[:1].strip():
            cur[0].append(parts[0])
    check(stacks, w + ": no samples in go tool pprof -traces:\n" + p.stdout[:1500])
    check_stacks(stacks)
else:
    rows, samples = parse_table(open(path).read(), w)
    eq(w + ": the header's count", 100, samples)
    eq(w + ": probe_leaf's self count", 100, rows.get("probe_leaf", {}).get("self"))
done()
PY
	kill "$pid"
done
echo "ok: --stacks --format folded, pprof, table: 60 through stack_a, 40 through stack_b"

# Several outputs of one run, each in the format its extension names (as
# profile's): the stacks folded and pprof, the JSON report, and the table
# report on standard output (-o -).  Every one must say the same 100 calls.
truth=$T/several.truth
start_target tgt_probe "$truth" stacks
pid=$TPID
wait_truth "$truth" ready
probe_bg several int "$truth" "$pid" probe "$pid" probe_leaf --stacks -o "$T/s.folded" \
	-o "$T/s.pb.gz" -o "$T/s.json" -o -
assert_rc 0 "vigil probe --stacks -o F.folded -o F.pb.gz -o F.json -o -"
vg_py "$T" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: the outputs differ (above)"; }
import json, os, re, subprocess, sys
from vgcheck import *
from profcheck import parse_folded, strip_name
T, w = sys.argv[1], sys.argv[2]
by = {}
for fr, n in parse_folded(open(T + "/s.folded").read(), w + ": folded"):
    eq(w + ": folded leaf", "probe_leaf", strip_name(fr[-1]))
    by[strip_name(fr[-2])] = by.get(strip_name(fr[-2]), 0) + n
eq(w + ": folded calls by caller", {"stack_a": 60, "stack_b": 40}, by)
env = dict(os.environ, HOME=T, GOCACHE=T + "/gocache", GOPATH=T + "/gopath",
           GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=T)
p = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-top", T + "/s.pb.gz"],
                   capture_output=True, text=True, env=env)
eq(w + ": go tool pprof exit", 0, p.returncode)
check(re.search(r"^\s*100\s.*probe_leaf$", p.stdout, re.M), w + ": pprof: probe_leaf not 100 flat:\n" + p.stdout[:800])
doc = load_json(T + "/s.json")
eq(w + ": json operation", "live_probe", doc.get("operation"))
eq(w + ": json calls", 100, doc["locations"][0]["calls"])
table = open(T + "/several.out").read()
check(re.search(r"^probe_leaf\s+1\s+100\b", table, re.M), w + ": the table on stdout lacks 'probe_leaf 1 100':\n" + table[:800])
done()
PY
kill "$pid"
echo "ok: --stacks -o F.folded -o F.pb.gz -o F.json -o -: 100 calls in each"
