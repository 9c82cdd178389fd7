#!/bin/bash
# profile_several: `vigil profile -p A,B -p C` profiles three processes in
# one run, as `perf record -p A,B,C` does.  Three tgt_profile targets, each
# burning CPU in its own functions (A split: hot_a/hot_b; B qsort:
# sort_loop/cmp_slow; C exit: burn_until, and it exits 300 ms after
# SIGUSR1, sent once vigil samples).  One run writes JSON, folded, pprof,
# speedscope and the table (-o for each).  Exact, in every format: each
# stack starts at its process's root frame "tgt_profile-PID"; no stack of
# one process holds another's functions (the attribution); the JSON lists
# the processes in the order given, C's own stop is target_exited and the
# run's is duration.  Statistical: each process has as many samples as
# its CPU time during the run allows (C's own count at its exit, in its
# truth), A's hot_a is 70 +- 15 % of A's samples.  The table says "by
# process:", C "exited",
# and stderr warns that C exited while A and B went on.
source "$(dirname "$0")/lib.sh"

start_target tgt_profile "$T/a.truth" split
start_target tgt_profile "$T/b.truth" qsort
start_target tgt_profile "$T/c.truth" exit 300
for x in a b c; do wait_truth "$T/$x.truth" ready; done
A=$(truth_get "$T/a.truth" pid) B=$(truth_get "$T/b.truth" pid) C=$(truth_get "$T/c.truth" pid)

args=(profile -p "$A,$B" -p "$C" --duration 4s --freq 499 -o "$T/p.json" -o "$T/p.folded"
      -o "$T/p.pb.gz" -o "$T/p.speedscope.json" -o "$T/p.txt")
LAST=run LAST_CMD="vigil ${args[*]}"
for x in A B C; do echo "$(cpu_ticks "${!x}")" >"$T/$x.ticks0"; done
"$VIGIL" "${args[@]}" >"$T/run.out" 2>"$T/run.err" </dev/null &
VGPID=$!
track_pid "$VGPID"
for ((i = 0; i < 3000; i++)); do
	grep -q '^# profiling 3 processes' "$T/run.err" && break
	kill -0 "$VGPID" 2>/dev/null || break
	sleep 0.01
done
grep -q '^# profiling 3 processes' "$T/run.err" || { vg_watch_wait 1; show_last; fail "$LAST_CMD: no '# profiling 3 processes' line within 30 s"; }
kill -USR1 "$C"
vg_watch_wait 20
for x in A B; do echo "$(cpu_ticks "${!x}")" >"$T/$x.ticks1"; done
wait_truth "$T/c.truth" exiting
assert_rc 0
grep -q "warning: pid $C exited during the observation" "$T/run.err" ||
	{ show_last; fail "$LAST_CMD: no warning that pid $C exited"; }
grep -q "^# pid $C (tgt_profile): .*(target_exited)" "$T/run.err" ||
	{ show_last; fail "$LAST_CMD: pid $C's line does not say target_exited"; }
for p in "$A" "$B"; do
	grep -q "^# pid $p (tgt_profile): .*(duration)" "$T/run.err" ||
		{ show_last; fail "$LAST_CMD: pid $p did not go on to the duration"; }
done
grep -Eq "^by process: tgt_profile-$A [0-9]+ \([0-9.]+%\), tgt_profile-$B [0-9]+ \([0-9.]+%\), tgt_profile-$C [0-9]+ \([0-9.]+%, exited\)$" "$T/p.txt" ||
	{ show_last; cat "$T/p.txt" >&2; fail "the table has no 'by process:' line naming A, B and C (exited)"; }

vg_py "$A" "$B" "$C" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import os, subprocess, sys
from profcheck import *
T = os.environ["T"]
A, B, C = (int(x) for x in sys.argv[1:4])
label = {p: f"tgt_profile-{p}" for p in (A, B, C)}
by_label = {v: k for k, v in label.items()}
own = {A: {"hot_a", "hot_b"}, B: {"sort_loop", "cmp_slow"}, C: {"burn_until"}}
foreign = {p: set().union(*(own[q] for q in own if q != p)) for p in own}

def attribute(what, frames, n, counts, tid=None):
    """frames root first: the root names the process; nothing of another."""
    p = by_label.get(frames[0])
    if not check(p, f"{what}: a stack does not start at a process root frame: {frames[:3]!r}"):
        return
    names = {strip_name(f) for f in frames[1:]}
    bad = names & foreign[p]
    check(not bad, f"{what}: a stack of pid {p} holds {sorted(bad)} of another process")
    check(not any(f in by_label for f in frames[1:]), f"{what}: a process frame below the root: {frames!r}")
    if tid is not None:
        eq(f"{what}: tid of a stack of pid {p}", p, tid)   # one thread each: tid == pid
    counts[p] = counts.get(p, 0) + n

# JSON: processes in the order given, C exited, exact attribution.
doc = load_json(f"{T}/p.json")
eq("json: operation", "live_profile", doc.get("operation"))
eq("json: header pid (the first process)", A, (doc.get("process") or {}).get("pid"))
procs = doc.get("processes") or []
eq("json: processes[].pid", [A, B, C], [p.get("pid") for p in procs])
stops = {p["pid"]: p["observation"]["stop_reason"] for p in procs}
eq("json: stop reasons", {A: "duration", B: "duration", C: "target_exited"}, stops)
eq("json: C pid_alive_after", False, procs[2].get("pid_alive_after"))
eq("json: the run's stop_reason", "duration", doc["observation"]["stop_reason"])
total = doc["observation"]["samples"]
eq("json: samples = sum of the processes'", total, sum(p["samples"] for p in procs))
check(procs[2]["observation"]["duration_ms"] < doc["observation"]["duration_ms"],
      f"json: C's duration {procs[2]['observation']['duration_ms']} is not shorter than the run's")
for t in doc.get("threads") or []:
    eq(f"json: thread {t['tid']}'s pid", t["tid"], t.get("pid"))
counts = {}
for st in doc.get("stacks") or []:
    attribute("json", [f["function"] for f in st["frames"]], st["count"], counts, st["tid"])
eq("json: samples per process from stacks[]", {p["pid"]: p["samples"] for p in procs}, counts)
hz = os.sysconf("SC_CLK_TCK")
ticks = {x: int(open(f"{T}/{x}.ticks0").read()) for x in "ABC"}
cpu = {A: (int(open(f"{T}/A.ticks1").read()) - ticks["A"]) / hz,
       B: (int(open(f"{T}/B.ticks1").read()) - ticks["B"]) / hz,
       C: int(next(l for l in open(f"{T}/c.truth") if l.startswith("work ")).split()[3]) / 1e9
          - ticks["C"] / hz}
for p in (A, B, C):
    check_sample_count(counts.get(p, 0), cpu[p], 499, f"json: pid {p}'s samples")

fn = {f["function"]: f for f in doc["functions"]}
for p in (A, B, C):
    eq(f"json: total of root frame {label[p]}", counts[p], fn[label[p]]["total"])
a_hot = sum(st["count"] for st in doc["stacks"]
            if st["frames"][0]["function"] == label[A] and st["frames"][-1]["function"] == "hot_a")
share = 100.0 * a_hot / counts[A]
check(55 <= share <= 85, f"json: hot_a is {share:.1f} % of pid {A}'s samples, expected 70 +- 15")

# folded
counts_f = {}
for frames, n in parse_folded(open(f"{T}/p.folded").read(), "folded"):
    attribute("folded", frames, n, counts_f)
eq("folded: samples per process", counts, counts_f)

# speedscope: each profile's samples, weighted in ns (1e9 / 499 a sample)
sp = load_json(f"{T}/p.speedscope.json")
check(sp.get("name", "").startswith(f"pids {A} (tgt_profile), {B} (tgt_profile), {C} (tgt_profile)"),
      f"speedscope: the name must list the processes: {sp.get('name')!r}")
names = [f["name"] for f in sp["shared"]["frames"]]
counts_s = {}
for prof in sp["profiles"]:
    eq("speedscope: unit", "nanoseconds", prof["unit"])
    for st, w in zip(prof["samples"], prof["weights"]):
        attribute("speedscope", [names[i] for i in st], round(w / (1000000000 // 499)), counts_s)
eq("speedscope: samples per process", counts, counts_s)

# pprof through Go's own reader: traces end at the root, with the tid label.
import shutil
if shutil.which("go"):
    env = dict(os.environ, HOME=T, GOCACHE=f"{T}/gocache", GOPATH=f"{T}/gopath",
               GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=T)
    out = subprocess.run(["go", "tool", "pprof", "-traces", "-symbolize=none", f"{T}/p.pb.gz"],
                         capture_output=True, text=True, env=env)
    eq("go tool pprof -traces exit", 0, out.returncode)
    blocks = out.stdout.split("-----------+-------------------------------------------------------")[1:]
    check(blocks, "pprof: no traces")
    seen = set()
    for b in blocks:
        lines = [l for l in b.splitlines() if l.strip()]
        if not any(l.strip().startswith("tid:") for l in lines):
            check(not any(l.strip().startswith("thread:") for l in lines), f"pprof: a trace without tid: {lines!r}")
            continue
        tid = next(int(l.split()[-1]) for l in lines if l.strip().startswith("tid:"))
        frames = [l.split()[-1] for l in lines if ":" not in l.split()[0]]
        attribute("pprof", frames[::-1], 1, {}, tid)
        seen.add(frames[-1])
    eq("pprof: root frames", sorted(label.values()), sorted(seen))
    print(f"pprof: {len(blocks)} traces, each rooted at its process")
print(f"samples: A {counts[A]}, B {counts[B]}, C {counts[C]} (exited); hot_a {share:.1f} % of A")
done()
PY
echo "ok: three processes in one run, each stack attributed to its process in json, folded, speedscope, pprof"

# Every command that watches one address space refuses a list, one line
# that says which command takes several (exit 2, before attaching).
for c in "maps @" "read @ 0x1000 8" "print @ g_x" "watch @ 0x1000" "scan @ 5 --type i32" \
	"sym @ 0x1000" "probe @ malloc"; do
	read -r -a words <<<"${c//@/-p $A,$B}"
	refuse_cmd "${words[0]}" 2000 "list_${words[0]}" 2 "names several processes: ${words[0]} observes one process: give one PID \(profile and stack take several" "${words[@]:1}"
done
refuse_cmd maps 2000 list_repeated 2 "-p is given twice: maps observes one process: give one PID \(profile and stack take several" -p "$A" -p "$B"
refuse_cmd profile 2000 list_dup 2 "pid $A is given twice" -p "$A,$B,$A" --duration 1s
refuse_cmd profile 2000 list_empty 2 "invalid PID ''" -p "$A,,$B" --duration 1s
refuse_cmd profile 2000 list_every 2 "--every observes one process" -p "$A,$B" --every 2s
echo "ok: maps, read, print, watch, scan, sym and probe refuse a list; profile refuses a bad one"
