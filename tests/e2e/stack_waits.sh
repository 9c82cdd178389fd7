#!/bin/bash
# stack_waits: vigil stack on tgt_stack_waits, whose threads block at known
# lines and write down what they wait for.  Against that truth, in the
# --json document, the same document written by -o FILE, and the table:
# every thread's wait kind, object name, owner TID, the system call it is
# in, the line it blocked at (its first frame outside libc: function,
# file:line); the pipe and TCP threads' fds and what they are (the pipe's
# inode and other end, the connection's two ports); the deadlock reported
# once with exactly dl_a and dl_b and their two locks; the join waiter's
# owner the sleeper; the waiter's chain ending at the holder asleep; the
# signal-handler thread's frames going through the handler and the signal
# frame (__restore_rt) into the interrupted code; the inlined and
# no-frame-pointer threads' frames complete; kernel stacks read (we are
# root) and absent with --no-kernel.  The spinner is running or preempted
# (kind running, or user when off the CPU between two time slices).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_stack_waits "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg json stack "$pid" --json
assert_rc 0
vg file stack "$pid" --json -o "$T/stack.json"
assert_rc 0
[[ ! -s $T/file.out ]] || { show_last; fail "-o FILE: output on stdout"; }
vg table stack "$pid"
assert_rc 0
vg tablefile stack "$pid" -o "$T/stack.txt"
assert_rc 0
vg nokernel stack "$pid" --json --no-kernel
assert_rc 0

vg_py "$T" "$pid" "$truth" <<'PY' || fail "vigil stack on tgt_stack_waits: see above"
import os, re, sys
from vgcheck import *
T, pid, truth = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [l.split() for l in open(truth) if l.strip()]
threads = {l[1]: l[2:] for l in lines if l[0] == "thread"}
tid = {n: int(f[0]) for n, f in threads.items()}
name_of = {v: k for k, v in tid.items()}
uframes = {}
for l in lines:
    if l[0] == "uframe":
        uframes.setdefault(l[1], []).append((l[3], l[4], int(l[5]), l[6] == "1"))
rfd, wfd = next(l[1:] for l in lines if l[0] == "pipe")
server = next(l[1] for l in lines if l[0] == "tcp_server")
client = next(l[1] for l in lines if l[0] == "tcp_client")
pipe_ino = os.readlink(f"/proc/{pid}/fd/{rfd}")

def target_frames(t):
    return [(f["function"], os.path.basename(f["file"] or ""), f["line"], f["inlined"])
            for f in t["frames"] if str(f.get("image") or "").endswith("tgt_stack_waits")]

def check_doc(doc, what, kernel=True):
    check_header(doc, "live_stack", pid, what)
    by = {t["tid"]: t for t in doc["threads"]}
    for name, f in threads.items():
        t_id, func, file, line, kind, obj, owner, call = f
        t = by.get(int(t_id))
        check(t is not None, f"{what}: thread {name} ({t_id}) missing")
        if t is None:
            continue
        w = t["wait"]
        eq(f"{what} {name} name", name, t["name"])
        check(t["complete"], f"{what} {name}: walk incomplete ({t['unwind_stop']}, {t['why']})")
        if kind == "running":
            check(w["kind"] in ("running", "user"), f"{what} {name}: wait {w['kind']}, not running/user")
            check(t["syscall"]["state"] in ("running", "none"), f"{what} {name}: syscall {t['syscall']}")
        else:
            eq(f"{what} {name} wait kind", kind, w["kind"])
            eq(f"{what} {name} system call", call, t["syscall"]["name"])
        if obj.startswith("fd="):
            eq(f"{what} {name} fd", int(obj[3:]), w["fd"])
        elif obj != "-":
            eq(f"{what} {name} object", obj, w["object_name"])
        elif kind not in ("join",):
            eq(f"{what} {name} object", None, w["object_name"])
        eq(f"{what} {name} owner", int(owner) or None, w["owner"])
        if int(owner):
            eq(f"{what} {name} owner name", name_of[int(owner)], w["owner_name"])
        b = t["blocked_at"]
        check(b is not None, f"{what} {name}: no blocked_at")
        if b:
            eq(f"{what} {name} blocked at", func, b["function"])
            eq(f"{what} {name} blocked file", file, os.path.basename(b["file"] or ""))
            if int(line):
                eq(f"{what} {name} blocked line", int(line), b["line"])
        if kernel and kind not in ("running",):
            check(isinstance(t["kernel_frames"], list) and t["kernel_frames"],
                  f"{what} {name}: no kernel stack ({t['kernel_why']})")
        if not kernel:
            eq(f"{what} {name} kernel_frames", None, t["kernel_frames"])
            eq(f"{what} {name} kernel_why", "not asked for (--no-kernel)", t["kernel_why"])
        if name in uframes:
            want = [(u[0], u[1], u[2], u[3]) for u in uframes[name]]
            eq_list(f"{what} {name} own frames", want, target_frames(t)[:len(want)])
    # the pipe and the connection
    pr = by[tid["piperead"]]["wait"]
    eq(f"{what} pipe fd kind", "pipe", pr["fd_kind"])
    eq(f"{what} pipe fd text", f"{pipe_ino} read end, write end is fd {wfd}", pr["fd_text"])
    sr = by[tid["sockrecv"]]["wait"]
    eq(f"{what} tcp fd kind", "tcp", sr["fd_kind"])
    eq(f"{what} tcp fd text", f"tcp {server} -> {client} (ESTABLISHED)", sr["fd_text"])
    check(f"= tcp {server} -> {client} (ESTABLISHED)" in by[tid["sockrecv"]]["syscall"]["text"],
          f"{what}: recvfrom text {by[tid['sockrecv']]['syscall']['text']!r}")
    # the mutex: its futex named, its chain ends at the holder asleep
    wt = by[tid["waiter"]]
    check(re.fullmatch(r"futex\(0x[0-9a-f]+=g_lock, WAIT_PRIVATE, 2\)", wt["syscall"]["text"]),
          f"{what}: waiter's futex text {wt['syscall']['text']!r}")
    eq(f"{what} waiter chain", {"end": "at_thread", "end_tid": tid["holder"],
        "text": f"waits for g_lock held by {tid['holder']} (holder), which is sleeping in clock_nanosleep"},
       {k: wt["chain"][k] for k in ("end", "end_tid", "text")} if wt["chain"] else None)
    eq(f"{what} holder state", "S", wt["wait"]["owner_state"])
    # join: the joined thread
    jn = by[tid["joiner"]]["wait"]
    eq(f"{what} joiner owner", tid["sleeper"], jn["owner"])
    eq(f"{what} joiner owner state", "S", jn["owner_state"])
    # the signal handler: handler, signal frame, interrupted code
    sh = [f["function"] or f["symbol"] for f in by[tid["sighandler"]]["frames"]]
    check("on_sigusr1" in sh and "sighandler_main" in sh and
          sh.index("on_sigusr1") < sh.index("__restore_rt") < sh.index("sighandler_main")
          if "__restore_rt" in sh else False,
          f"{what}: sighandler frames do not go handler -> __restore_rt -> sighandler_main: {sh}")
    # the deadlock, once, exactly dl_a and dl_b
    dls = doc["deadlocks"]
    eq(f"{what} deadlocks", 1, len(dls))
    if dls:
        d = dls[0]
        eq(f"{what} deadlock threads", sorted([tid["dl_a"], tid["dl_b"]]), d["threads"])
        got = {(l["tid"], l["object_name"], l["owner"], l["name"], l["blocked_at"]["function"],
                l["blocked_at"]["line"]) for l in d["links"]}
        want = {(tid["dl_a"], "g_m2", tid["dl_b"], "dl_a", "dl_a_main", int(threads["dl_a"][3])),
                (tid["dl_b"], "g_m1", tid["dl_a"], "dl_b", "dl_b_main", int(threads["dl_b"][3]))}
        eq(f"{what} deadlock links", sorted(want), sorted(got))
    deadlocked = sorted(t["tid"] for t in doc["threads"] if t["deadlocked"])
    eq(f"{what} deadlocked threads", sorted([tid["dl_a"], tid["dl_b"]]), deadlocked)

check_doc(load_json(f"{T}/json.out"), "--json")
check_doc(load_json(f"{T}/stack.json"), "-o FILE")
check_doc(load_json(f"{T}/nokernel.out"), "--no-kernel", kernel=False)

# The table: each thread's group says its wait and where it blocked.
for path, what in ((f"{T}/table.out", "table"), (f"{T}/stack.txt", "table -o FILE")):
    text = open(path).read()
    blocks = {}
    for b in text.split("\n\n"):
        m = re.match(r"thread (\d+) ", b)
        if m:
            blocks[int(m.group(1))] = b
    for name, f in threads.items():
        t_id, func, file, line, kind, obj, owner, call = f
        b = blocks.get(int(t_id))
        check(b is not None, f"{what}: no block for thread {name}")
        if not b:
            continue
        if kind != "running":
            check(re.search(rf"^  waits: {kind}\b", b, re.M), f"{what} {name}: no 'waits: {kind}' line:\n{b}")
            check(re.search(rf"^  blocked at: {func}  {re.escape(file)}:{line}:\d+$", b, re.M),
                  f"{what} {name}: no 'blocked at: {func}  {file}:{line}:' line:\n{b}")
            check(re.search(r"^  kernel stack:$", b, re.M), f"{what} {name}: no kernel stack")
        if int(owner):
            check(f" held by {owner} ({name_of[int(owner)]})" in b or
                  f" for thread {owner} ({name_of[int(owner)]})" in b,
                  f"{what} {name}: owner {owner} not named:\n{b}")
done()
PY
echo "ok"
