#!/bin/bash
# stack_unprivileged: vigil stack as an unprivileged user (nobody, no
# capabilities) on that user's own tgt_stack_basic: the BPF task iterator
# is refused (a note says so and what it needs), the blocked threads come
# from /proc/TID/syscall (pc and sp: enough for CFI here, the walks are
# complete and the target's own frames are the truth's), exit 0.  Against
# a root process the same user gets exit 3 and one line.  With CAP_BPF
# alone the note names the CAP_PERFMON it lacks.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root to switch to another user"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
asnobody true 2>"$T/setpriv.err" || skip "setpriv cannot switch to uid 65534: $(cat "$T/setpriv.err")"

# Both programs where nobody can run them; the truth where nobody can write.
chmod 755 "$T"
cp "$VIGIL" "$T/vigil"
cp "$TARGETS/tgt_stack_basic" "$T/tgt_stack_basic"
chmod 755 "$T/vigil" "$T/tgt_stack_basic"
mkdir -m 777 "$T/out"
truth=$T/out/truth
asnobody "$T/tgt_stack_basic" "$truth" </dev/null &
track_pid $!
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

set +e
asnobody "$T/vigil" stack "$pid" --json >"$T/nobody.out" 2>"$T/nobody.err"
RC=$?
set -e
LAST=nobody LAST_CMD="(as nobody) vigil stack $pid --json"
assert_rc 0
vg_py "$T/nobody.out" "$pid" "$truth" <<'PY' || { show_last; fail "vigil stack as nobody: see above"; }
import os, sys
from vgcheck import *
doc, pid, truth = load_json(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
check_header(doc, "live_stack", pid, "as nobody")
notes = doc["observation"]["notes"]
check(any("task_iter" in n and "CAP_BPF" in n for n in notes),
      f"no note that the task iterator was refused and needs CAP_BPF: {notes!r}")
threads, expect = {}, {}
for line in open(truth):
    w = line.split()
    if w[0] == "thread":
        threads[int(w[1])] = w[2]
    elif w[0] == "expect":
        expect.setdefault(w[1], {})[int(w[2])] = (w[3], int(w[4]), w[5] == "1")
by = {t["tid"]: t for t in doc["threads"]}
for tid, name in threads.items():
    if name == "spinner":
        continue
    t, w = by.get(tid) or {}, f"thread {tid} ({name})"
    eq(f"{w}: obtained", "proc_syscall", t.get("obtained"))
    eq(f"{w}: complete", True, t.get("complete"))
    own = [f for f in t.get("frames") or [] if str(f.get("image", "")).endswith("tgt_stack_basic")]
    got = [(f["function"], f["line"], f["inlined"]) for f in own][:len(expect[name])]
    eq(f"{w}: own frames", [expect[name][i] for i in sorted(expect[name])], got)
done()
PY
echo "ok: as nobody: proc_syscall stacks, complete, the truth's frames"

# With CAP_BPF but not CAP_PERFMON the kernel refuses the iterator's
# loader for a helper it may not call (EINVAL, not EPERM): the note still
# names the capability that is missing, not a verifier message.
asbpfonly() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+bpf \
	--ambient-caps=-all,+bpf "$@"; }
asbpfonly true 2>"$T/setpriv.err" || skip "setpriv cannot keep CAP_BPF as uid 65534: $(cat "$T/setpriv.err")"
set +e
asbpfonly "$T/vigil" stack "$pid" --json >"$T/bpfonly.out" 2>"$T/bpfonly.err"
RC=$?
set -e
LAST=bpfonly LAST_CMD="(as nobody with CAP_BPF) vigil stack $pid --json"
assert_rc 0
vg_py "$T/bpfonly.out" <<'PY' || { show_last; fail "vigil stack with CAP_BPF only: see above"; }
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
notes = doc["observation"]["notes"]
check(any("task_iter" in n and "lacks CAP_PERFMON" in n for n in notes),
      f"no note that the task iterator needs the CAP_PERFMON this process lacks: {notes!r}")
for t in doc["threads"]:
    check(t["obtained"] != "task_iter", f"thread {t['tid']} obtained by the refused iterator")
done()
PY
echo "ok: CAP_BPF alone: the note names CAP_PERFMON"

start_target tgt_stack_basic "$T/root.truth"
wait_truth "$T/root.truth" ready
rpid=$(truth_get "$T/root.truth" pid)
set +e
asnobody "$T/vigil" stack "$rpid" >"$T/denied.out" 2>"$T/denied.err"
RC=$?
set -e
LAST=denied LAST_CMD="(as nobody) vigil stack $rpid"
assert_rc 3
assert_one_error_line
echo "ok"
