#!/bin/bash
# stack_basic: vigil stack on tgt_stack_basic (threads parked at known
# lines, -O2 without frame pointers).  For every thread the target names,
# --json must give: its name, how the stack was obtained (task_iter for
# the blocked threads; task_iter or perf_sample for the spinner, which is
# either preempted or on a CPU), a complete walk, and the innermost frames
# of the target's own code as the truth says (function, line, inlined;
# the spinner's spin() at a line of its loop); each of those frames must
# equal what `vigil sym` gives for the same address (ip - 1 unless
# exact).  The target must run on meanwhile: its spin counter, read from
# /proc/PID/mem around each run, advances.  The table groups the two
# nappers ("2 threads:"), -o FILE writes the same document; with
# VIGIL_STACK_METHODS=proc_syscall the blocked threads come from
# /proc/TID/syscall, and with perf_sample alone the spinner (--tid) is
# caught by a perf sample; bad input: a dead PID exits 4, a --tid of another
# process, a --tid not a number and 1025 --tid exit 2.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_stack_basic "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
count_addr=$(truth_sym "$truth" spin_count runtime)

read_count() {
	"$PYTHON" -S -c 'import sys
f = open(f"/proc/{sys.argv[1]}/mem", "rb"); f.seek(int(sys.argv[2], 16))
print(int.from_bytes(f.read(8), "little"))' "$pid" "$count_addr"
}

c0=$(read_count)
vg json stack "$pid" --json
assert_rc 0
c1=$(read_count)
vg table stack "$pid"
assert_rc 0
vg file stack "$pid" --json -o "$T/stack.json"
assert_rc 0
[[ ! -s $T/file.out ]] || { show_last; fail "-o FILE: output on stdout"; }
VIGIL_STACK_METHODS=proc_syscall vg proc stack "$pid" --json
assert_rc 0
# the perf path on its own: the spinner is runnable, so it is sampled --
# unless the machine is so busy that it gets no 100 us of CPU in vigil's
# 250 ms (vigil then says so: "queued behind other work"); only that
# answer is run again, at most three times in all
spinner=$(awk '$1 == "thread" && $3 == "spinner" { print $2 }' "$truth")
for attempt in 1 2 3; do
	VIGIL_STACK_METHODS=perf_sample vg perf stack "$pid" --tid "$spinner" --json
	assert_rc 0
	grep -q '"why":[[:space:]]*"running, and no perf sample came in [0-9]* ms (it had [0-9]* us of CPU meanwhile: queued behind other work)"' "$T/perf.out" || break
	echo "note: attempt $attempt: the spinner was queued behind other work for vigil's whole wait"
done
((c1 > c0)) || fail "the spin counter did not advance across vigil stack ($c0 -> $c1): the target was stopped?"
echo "ok: the target ran on: spin_count $c0 -> $c1"

# the addresses of the target's own frames, for vigil sym
vg_py "$T/json.out" > "$T/addrs" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
seen = set()
for t in doc["threads"]:
    for f in t["frames"]:
        if str(f.get("image", "")).endswith("tgt_stack_basic"):
            a = int(f["pc"], 16) - (0 if f["exact"] else 1)
            if a not in seen:
                seen.add(a)
                print(hex(a))
PY
[[ -s $T/addrs ]] || { show_last; fail "no frame of tgt_stack_basic in the JSON"; }
# shellcheck disable=SC2046
vg sym sym "$pid" --json $(cat "$T/addrs")
assert_rc 0

vg_py "$T" "$pid" "$truth" <<'PY' || fail "vigil stack on tgt_stack_basic: see above"
import os, sys
from vgcheck import *
T, pid, truth = sys.argv[1], int(sys.argv[2]), sys.argv[3]
threads, expect, spin = {}, {}, None
for line in open(truth):
    w = line.split()
    if w[0] == "thread":
        threads[int(w[1])] = w[2]
    elif w[0] == "expect":
        expect.setdefault(w[1], {})[int(w[2])] = (w[3], int(w[4]), w[5] == "1")
    elif w[0] == "spin_lines":
        spin = (int(w[1]), int(w[2]))
sym = {}
for r in load_json(f"{T}/sym.out")["results"]:
    sym[int(r["address"], 16)] = [(f["function"], f["file"], f["line"], f["column"], f["inlined"])
                                  for f in r["frames"]]

def own(frames):
    return [f for f in frames if str(f.get("image", "")).endswith("tgt_stack_basic")]

def check_doc(path, w, methods):
    doc = load_json(path)
    check_header(doc, "live_stack", pid, w)
    eq(f"{w}: observation.stopped_target", False, doc["observation"]["stopped_target"])
    by = {t["tid"]: t for t in doc["threads"]}
    eq(f"{w}: threads", sorted(set(threads) | {pid}), sorted(by))
    for tid, name in threads.items():
        t = by.get(tid) or {}
        tw = f"{w}: thread {tid} ({name})"
        eq(f"{tw}: name", name, t.get("name"))
        if name == "spinner" and methods == "proc":
            eq(f"{tw}: obtained", "none", t.get("obtained"))
            continue
        ok = ("task_iter", "perf_sample") if name == "spinner" and methods == "all" else \
             ("task_iter",) if methods == "all" else ("proc_syscall",)
        check(t.get("obtained") in ok, f"{tw}: obtained {t.get('obtained')!r}, expected one of {ok}")
        eq(f"{tw}: complete", True, t.get("complete"))
        eq(f"{tw}: unwind_stop", "outermost", t.get("unwind_stop"))
        fr = own(t.get("frames") or [])
        for idx, (fn, line, inl) in sorted(expect.get(name, {}).items()):
            f = fr[idx] if idx < len(fr) else {}
            eq(f"{tw}: own frame {idx} function", fn, f.get("function"))
            eq(f"{tw}: own frame {idx} ({fn}) line", line, f.get("line"))
            eq(f"{tw}: own frame {idx} ({fn}) inlined", inl, f.get("inlined"))
            eq(f"{tw}: own frame {idx} file", "tgt_stack_basic.c", os.path.basename(str(f.get("file"))))
        if name == "spinner":
            f = fr[0] if fr else {}
            eq(f"{tw}: own frame 0 function", "spin", f.get("function"))
            check(spin[0] <= (f.get("line") or 0) <= spin[1],
                  f"{tw}: spin() at line {f.get('line')!r}, not in its loop {spin}")
        # the frames of each address are exactly vigil sym's
        i = 0
        while i < len(fr):
            a = int(fr[i]["pc"], 16) - (0 if fr[i]["exact"] else 1)
            group = [f for f in fr if f["pc"] == fr[i]["pc"] and f["index"] == fr[i]["index"]]
            got = [(f["function"], f["file"], f["line"], f["column"], f["inlined"]) for f in group]
            if a in sym:
                eq(f"{tw}: frames at {a:#x} against vigil sym", sym[a], got)
            i += len(group)

check_doc(f"{T}/json.out", "json", "all")
check_doc(f"{T}/stack.json", "-o FILE", "all")
check_doc(f"{T}/proc.out", "proc_syscall", "proc")
pd = load_json(f"{T}/perf.out")
check_header(pd, "live_stack", pid, "perf_sample")
t = pd["threads"][0] if len(pd["threads"]) == 1 else {}
check(t.get("obtained") == "perf_sample",
      f"perf_sample: the spinner's obtained {t.get('obtained')!r}, not 'perf_sample': {t.get('why')!r}")
eq("perf_sample: complete", True, t.get("complete"))
eq("perf_sample: own frames", ["spin", "spinner_main"],
   [f.get("function") for f in own(t.get("frames") or [])][:2])
table = open(f"{T}/table.out").read()
nappers = sorted(t for t, n in threads.items() if n == "napper")
check(f"2 threads: {nappers[0]} (napper) S" in table, f"table: the nappers are not grouped:\n{table}")
check("  stack: task_iter, complete" in table, "table: no 'stack: task_iter, complete' line")
check("nap  " in table and "(inlined)" in table, "table: no inlined nap frame")
done()
PY
echo "ok: every thread's frames, how obtained, vigil sym agreement"

sleep 0 &
dead=$!
wait "$dead" || true
refuse() { refuse_cmd stack 2000 "$@"; }
refuse dead 4 "$dead" "$dead"
refuse bad_tid 2 "not a thread of pid" "$pid" --tid 1
refuse tid_text 2 "invalid --tid" "$pid" --tid abc
# --tid's limit is stack's own (cli/stack_opts.c takes it from the caller).
tids=()
for _ in $(seq 1025); do tids+=(--tid "$pid"); done
refuse tid_many 2 "^vigil: error: at most 1024 --tid$" "$pid" "${tids[@]}"
echo "ok"
