#!/bin/bash
# profile_shares: `vigil profile PID --duration 3000 --freq 999` on
# tgt_profile split, which spends 7 units of work in hot_a for every 3 of
# the same work in hot_b: hot_a's self share must be 70 +- 10 % and hot_b's
# 30 +- 10 % in every format (+- 4 standard deviations of a share of N
# samples when that is wider: a starved target may give a run 150
# samples, and 10 points are then 2.7 of them), each read by its own reader:
#   table (default, parsed), --format folded (leaf counts), --format pprof
#   -o F (go tool pprof -symbolize=none -top: the flat% column),
#   --format speedscope -o F (leaf weights), --json (functions[] and the
#   leaves of stacks[]).
# Also: each run exits 0 and stops for "duration"; the JSON's counts agree
# with each other, lost and throttled are reported (integers), and the
# number of samples is bounded by the target's own CPU time during the run
# (at most 999 per CPU second, at least a quarter of that).
source "$(dirname "$0")/lib.sh"

command -v go >/dev/null || skip "go is not installed (go tool pprof reads the pprof output; scripts/install-deps.sh)"
truth=$T/truth
start_target tgt_profile "$truth" split
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

# prof NAME ARGS...  - vigil profile PID --duration 3000 --freq 999 ARGS,
# must exit 0; the target's CPU ticks during the run in $T/NAME.ticks.
prof() {
	local name=$1 t0 t1
	shift
	t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	vg "$name" profile "$pid" --duration 3000 --freq 999 "$@"
	t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	echo $((t1 - t0)) >"$T/$name.ticks"
	assert_rc 0
	[[ -s $T/$name.out || $* == *-o* ]] || { show_last; fail "$LAST_CMD: nothing on stdout"; }
}

prof table
prof folded --format folded
prof pprof --format pprof -o "$T/prof.pb.gz"
prof speedscope --format speedscope -o "$T/prof.speedscope.json"
prof json --json

[[ -s $T/prof.pb.gz ]] || fail "vigil profile --format pprof -o $T/prof.pb.gz wrote nothing"
[[ $(head -c2 "$T/prof.pb.gz" | od -An -tx1 | tr -d ' ') == 1f8b ]] ||
	fail "$T/prof.pb.gz is not gzip (pprof's profile.proto is stored gzipped)"

vg_py "$pid" "$(getconf CLK_TCK)" <<'PY'
import os, sys
from profcheck import *
T, pid, hz = os.environ["T"], int(sys.argv[1]), int(sys.argv[2])
EXPECT = {"hot_a": 70.0, "hot_b": 30.0}

def ticks(name):
    return int(open(f"{T}/{name}.ticks").read()) / hz

def shares_ok(what, pct, n):
    for fn, want in EXPECT.items():
        got = pct.get(fn)
        tol = max(10.0, 4 * 100 * (want / 100 * (1 - want / 100) / max(n, 1)) ** 0.5)
        check(got is not None and abs(got - want) <= tol,
              f"{what}: {fn} self share {got if got is None else round(got, 2)!r} %, expected {want} +- {tol:.1f} "
              f"({n} samples; top: {sorted(pct.items(), key=lambda kv: -kv[1])[:5]!r})")
    if all(fn in pct for fn in EXPECT):
        print(f"{what}: hot_a {pct['hot_a']:.1f} %, hot_b {pct['hot_b']:.1f} %")

# table
rows, n = parse_table(open(f"{T}/table.out").read(), "table")
shares_ok("table", {k: v["self_pct"] for k, v in rows.items()}, n or 0)
if n is not None:
    check_sample_count(n, ticks("table"), 999, "table header")
    eq("table: hot_a's self percent is self / samples",
       round(100.0 * rows.get("hot_a", {}).get("self", 0) / max(n, 1), 2),
       rows.get("hot_a", {}).get("self_pct"))
    # hot_a and hot_b are noipa functions; a helper like account() is
    # really inlined into the loop and may carry a sample marked so.
    for k in EXPECT:
        check(not rows.get(k, {}).get("inlined"), f"table: {k} marked inlined (it is a noipa function)")

# folded
st = parse_folded(open(f"{T}/folded.out").read(), "folded")
fs = folded_self(st)
shares_ok("folded", shares(fs), sum(fs.values()))
check_sample_count(sum(fs.values()), ticks("folded"), 999, "folded (sum of counts)")

# pprof
flat, out = pprof_top(f"{T}/prof.pb.gz", T, "pprof")
if flat:
    pp = pprof_summary(open(f"{T}/prof.pb.gz", "rb").read(), "pprof")
    shares_ok("pprof (go tool pprof -top flat%)", flat, (pp or {}).get("samples", 0))

# speedscope
ss = speedscope_self(load_json(f"{T}/prof.speedscope.json"), "speedscope")
shares_ok("speedscope", shares(ss), round(sum(ss.values()) * 999 / 1e9))

# json
doc = load_json(f"{T}/json.out")
obs = check_profile_doc(doc, pid, "json", stop_reason="duration")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check_sample_count(n, ticks("json"), 999, "json observation.samples")
shares_ok("json functions[].self_share", {k: v.get("self_share") for k, v in by.items()
                                          if isinstance(v.get("self_share"), (int, float))}, n)
shares_ok("json stacks[] leaves", shares(leaf_self(stacks)), n)
exe = os.path.realpath(f"/proc/{pid}/exe")
for fn in ("hot_a", "hot_b"):
    eq(f"json: images of the stacks whose leaf is {fn} (samples per image)",
       [exe], list(leaf_images(stacks, fn)))
ths = doc.get("threads") or []
eq("json: threads[].tid (one thread)", [pid], [t.get("tid") for t in ths])
check(2700 <= (obs.get("duration_ms") or 0) <= 4000,
      f"json: duration_ms {obs.get('duration_ms')!r} for --duration 3000")
print(f"json: {n} samples, lost {obs.get('lost')!r}, throttled {obs.get('throttled')!r}")
done()
PY
echo "ok"
