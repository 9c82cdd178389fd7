#!/bin/bash
# stack_target_truth: tgt_stack_waits writes a complete truth, and what it
# wrote is what /proc shows of it: every thread named, each in the system
# call it says (the spinner running), the deadlock's owners each other's,
# the TCP ports those of the socket behind the recv fd.  The base the
# vigil stack tests stand on.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_stack_waits "$truth"
wait_truth "$truth" ready
vg_py "$truth" <<'PY'
import os, sys
from vgcheck import *
path = sys.argv[1]
lines = [l.split() for l in open(path) if l.strip()]
pid = int(next(l[1] for l in lines if l[0] == "pid"))
threads = {l[1]: l[2:] for l in lines if l[0] == "thread"}
want = ["holder", "waiter", "dl_a", "dl_b", "condwait", "piperead", "sockrecv",
        "sleeper", "joiner", "inlined", "sighandler", "nofp", "spinner"]
eq("thread names", sorted(want), sorted(threads))
# x86-64 numbers (arch/x86/entry/syscalls/syscall_64.tbl)
nr = {"read": 0, "futex": 202, "recvfrom": 45, "clock_nanosleep": 230, "pause": 34}
tids = {}
for name, f in threads.items():
    tid, func, file, line, kind, obj, owner, call = f
    tids[name] = int(tid)
    task = f"/proc/{pid}/task/{tid}"
    check(os.path.isdir(task), f"{name}: tid {tid} is not a thread of {pid}")
    eq(f"{name} comm", name, open(f"{task}/comm").read().strip())
    check(func and file.endswith(".c"), f"{name}: no function/file: {f!r}")
    check(kind in ("mutex", "cond", "io", "join", "sleep", "signal", "running"), f"{name}: kind {kind}")
    sc = open(f"{task}/syscall").read().split()
    if call == "-":
        st = open(f"{task}/stat").read().rsplit(")", 1)[1].split()[0]
        check(st == "R" or sc[0] in ("running", "-1"), f"{name}: not spinning: {st} {sc}")
    else:
        check(int(line) > 0, f"{name}: line {line}")
        eq(f"{name} system call", str(nr[call]), sc[0])
owners = {n: int(f[6]) for n, f in threads.items()}
eq("waiter's owner", tids["holder"], owners["waiter"])
eq("dl_a's owner", tids["dl_b"], owners["dl_a"])
eq("dl_b's owner", tids["dl_a"], owners["dl_b"])
eq("joiner's owner", tids["sleeper"], owners["joiner"])
# The recv fd is the accepted end of the connection the truth names.
fd = threads["sockrecv"][5].split("=")[1]
ino = os.readlink(f"/proc/{pid}/fd/{fd}")[len("socket:["):-1]
server = next(l[1] for l in lines if l[0] == "tcp_server")
client = next(l[1] for l in lines if l[0] == "tcp_client")
def hexaddr(a):
    ip, port = a.split(":")
    return "%08X:%04X" % (int.from_bytes(bytes(int(x) for x in ip.split(".")), "little"), int(port))
row = [r.split() for r in open(f"/proc/{pid}/net/tcp").readlines()[1:] if r.split()[9] == ino]
check(len(row) == 1, f"socket inode {ino} not in /proc/net/tcp")
eq("tcp local", hexaddr(server), row[0][1])
eq("tcp remote", hexaddr(client), row[0][2])
pipe = next(l[1:] for l in lines if l[0] == "pipe")
eq("piperead fd", f"fd={pipe[0]}", threads["piperead"][5])
for n in ("inlined", "sighandler", "nofp"):
    check(any(l[0] == "uframe" and l[1] == n for l in lines), f"no uframe lines for {n}")
done()
PY
echo "ok"
