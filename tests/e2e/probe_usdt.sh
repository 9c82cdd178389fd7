#!/bin/bash
# probe_usdt: `vigil probe PID usdt:vigil:tick usdt:vigil:semtick` on
# tgt_usdt, whose own USDT probes (sys/sdt.h) fire a known number of
# times (its truth: ticks 1000, semtick N): exact counts from the
# .note.stapsdt probes.  Both probes have semaphores: semtick fires only
# while its semaphore is non-zero, which only the kernel raises (uprobe
# ref_ctr_offset), so semtick's count equal to the target's 300 checks
# and "semaphore_at_go 1" prove the kernel handled it, not vigil.  The
# IMAGE form (usdt:tgt_usdt:vigil:tick) finds the same probe.  An unknown
# probe: exit 2, one line listing the probes there are.
source "$(dirname "$0")/lib.sh"

for c in both image; do
	start_target tgt_usdt "$T/$c.truth"
	eval "pid_$c=$TPID"
done
for c in both image; do
	wait_truth "$T/$c.truth" ready
done

source "$E2E_DIR/probelib.bash"

probe_bg both int "$T/both.truth" "$pid_both" probe "$pid_both" usdt:vigil:tick usdt:vigil:semtick --json
assert_rc 0 "vigil probe usdt:"
check "$T/both.truth" "$T/both.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted", n_locations=2)
eq(w + ": the target fired (harness)", (1000, 300, "1"), (t.int("ticks"), t.int("semtick"), t.one("semaphore_at_go")))
eq(w + ": inputs", ["usdt:vigil:tick", "usdt:vigil:semtick"], [l.get("input") for l in locs])
eq(w + ": tick calls", t.int("ticks"), locs[0].get("calls"))
eq(w + ": semtick calls (the kernel raised the semaphore)", t.int("semtick"), locs[1].get("calls"))
for l in locs:
    eq(w + ": " + l["input"] + " sites", 1, len(l.get("sites") or []))
    check(str(l.get("image", "")).endswith("/tgt_usdt"), w + ": image %r" % (l.get("image"),))
'
echo "ok: usdt:vigil:tick x1000 and usdt:vigil:semtick x300 (semaphore raised by the kernel), exact"

probe_bg image int "$T/image.truth" "$pid_image" probe "$pid_image" usdt:tgt_usdt:vigil:tick --args 2 --json
assert_rc 0 "vigil probe usdt:IMAGE:... --args 2"
check "$T/image.truth" "$T/image.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
eq(w + ": tick calls", t.int("ticks"), locs[0].get("calls"))
args = locs[0].get("args") or []
eq(w + ": args", 2, len(args))
lens = sorted(((str(int(v.split()[0])), int(v.split()[1])) for v in t.kv["len"]), key=lambda x: (-x[1], int(x[0])))
if len(args) == 2:
    i, n = args
    eq(w + ": arg0 (i) kind, count, distinct", ("signed", 1000, 1000), (i.get("kind"), i.get("count"), i.get("distinct")))
    eq(w + ": arg1 (len) kind", "signed", n.get("kind"))
    eq(w + ": arg1 (len) top, as the target counted", lens, [(x.get("value"), x.get("count")) for x in n.get("top") or []])
    check(all(isinstance(a.get("reg"), str) and a.get("reg") for a in args), w + ": each arg names its register")
'
echo "ok: usdt:tgt_usdt:vigil:tick --args 2: the same probe by image, its arguments by the spec"

# Memory operands: memtick's arguments are in its -O0 frame
# ("-4@-4(%rbp) -8@-16(%rbp)"): read in the kernel at each hit, they must
# be exactly the values the target passed.
start_target tgt_usdt "$T/mem.truth"
pid_mem=$TPID
wait_truth "$T/mem.truth" ready
probe_bg mem int "$T/mem.truth" "$pid_mem" probe "$pid_mem" usdt:vigil:memtick --args 2 --json
assert_rc 0 "vigil probe usdt:vigil:memtick --args 2"
check "$T/mem.truth" "$T/mem.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
eq(w + ": memtick calls", t.int("memtick"), locs[0].get("calls"))
args = locs[0].get("args") or []
vals = [v.split() for v in t.kv["memval"]]
eq(w + ": args", 2, len(args))
if len(args) == 2:
    for a, col, size in ((args[0], 0, "4"), (args[1], 1, "8")):
        check(re.fullmatch(r"-?[0-9]+\(%rbp\)", a.get("memory") or ""), w + ": memory operand %r" % (a.get("memory"),))
        eq(w + ": base register", "rbp", a.get("reg"))
        eq(w + ": values of " + str(a.get("memory")), sorted((v[col], int(v[2])) for v in vals),
           sorted((x.get("value"), x.get("count")) for x in a.get("top") or []))
'
echo "ok: usdt:vigil:memtick --args 2: memory operands read at each hit, the values the target passed"

vg unknown probe "$pid_both" usdt:vigil:nope --duration 100ms
assert_rc 2 "unknown USDT probe"
assert_one_error_line
grep -qF "no USDT probe vigil:nope in the process's images (its probes: vigil:memtick, vigil:tick, vigil:semtick)" "$T/unknown.err" ||
	{ show_last; fail "the error must list the probes there are"; }
echo "ok: an unknown USDT probe: exit 2, the candidates listed"

vg malformed probe "$pid_both" usdt:vigil --duration 100ms
assert_rc 2 "malformed usdt location"
assert_one_error_line
echo "ok: usdt:PROVIDER alone: exit 2"

# --list-usdt: both probes, at the addresses the probe run used, with the
# argument specs sys/sdt.h wrote (len is a long in rsi in tgt_usdt).
vg list probe "$pid_both" --list-usdt
assert_rc 0 "--list-usdt"
tick=$(jget "$T/both.out" 'd["locations"][0]["runtime_addresses"][0]')
semtick=$(jget "$T/both.out" 'd["locations"][1]["runtime_addresses"][0]')
grep -qE "^  usdt:vigil:tick  $tick  semaphore 0x[0-9a-f]+  args -8@%[a-z0-9]+ -8@%[a-z0-9]+\$" "$T/list.out" ||
	{ show_last; fail "--list-usdt: no vigil:tick line at $tick"; }
grep -qE "^  usdt:vigil:semtick  $semtick  semaphore 0x[0-9a-f]+  args -8@%[a-z0-9]+\$" "$T/list.out" ||
	{ show_last; fail "--list-usdt: no vigil:semtick line at $semtick"; }
[[ $(head -n1 "$T/list.out") == */tgt_usdt ]] || { show_last; fail "--list-usdt: the image line first"; }
echo "ok: --list-usdt: both probes, at the probed addresses, with their argument specs"

vg list_o probe "$pid_both" --list-usdt -o "$T/list.txt"
assert_rc 2 "--list-usdt -o"
assert_one_error_line
[[ ! -e $T/list.txt ]] || fail "--list-usdt -o: wrote a file it refused"
echo "ok: --list-usdt with -o: refused (exit 2), nothing written"
