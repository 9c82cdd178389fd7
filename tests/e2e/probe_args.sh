#!/bin/bash
# probe_args: `vigil probe PID probe_args --args 4` on tgt_probe args, which
# calls probe_args(size_t size, int delta, const char *name, unsigned char
# flag) with (4096, -5, name_a, 1) 7 times and (512, 3, name_b, 0) 3 times:
# each argument named and typed from DWARF, from its System V register
# (rdi, rsi, rdx, rcx), with exact values: size 4096 x7 / 512 x3, delta -5
# (an int in esi, sign-extended) x7 / 3 x3, name the target's own pointers
# x7 / x3, flag 1 x7 / 0 x3.  --args 2 gives exactly the first two.
source "$(dirname "$0")/lib.sh"

for c in a4 a2; do
	start_target tgt_probe "$T/$c.truth" args
	eval "pid_$c=$TPID"
done
for c in a4 a2; do
	wait_truth "$T/$c.truth" ready
done

source "$E2E_DIR/probelib.bash"

# The expectations, shared by both runs (n: how many arguments asked).
expect='
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_args", w, calls=10)
c1, c2 = t.args_calls
eq(w + ": the target calls (harness)", (7, 3), (c1["count"], c2["count"]))
want = [
    ("rdi", "size", "size_t", "unsigned", [("4096", 7), ("512", 3)]),
    ("rsi", "delta", "int", "signed", [("-5", 7), ("3", 3)]),
    ("rdx", "name", None, "pointer", [(hex(c1["name"]), 7), (hex(c2["name"]), 3)]),
    ("rcx", "flag", "unsigned char", "unsigned", [("1", 7), ("0", 3)]),
][:n]
args = loc.get("args")
if not check(isinstance(args, list), w + ": args must be a list, got %r" % (args,)):
    done_now()
eq(w + ": number of args", n, len(args))
for i, (reg, name, typ, kind, top) in enumerate(want[:len(args)]):
    a = args[i]
    aw = "%s: args[%d]" % (w, i)
    eq(aw + ".reg", reg, a.get("reg"))
    eq(aw + ".name (DWARF)", name, a.get("name"))
    if typ is None:
        ty = a.get("type")
        check(isinstance(ty, str) and "char" in ty and "*" in ty, aw + ".type %r: expected a char pointer type" % (ty,))
    else:
        eq(aw + ".type (DWARF)", typ, a.get("type"))
    eq(aw + ".kind", kind, a.get("kind"))
    eq(aw + ".count", 10, a.get("count"))
    eq(aw + ".distinct", 2, a.get("distinct"))
    eq(aw + ".other", 0, a.get("other"))
    eq(aw + ".top (value, count)", top, [(x.get("value"), x.get("count")) for x in a.get("top") or []])
    if kind in ("signed", "unsigned"):
        h = a.get("histogram")
        check(isinstance(h, list) and sum(b.get("count", 0) for b in h) == 10,
              aw + ".histogram must be a list of buckets holding the 10 values, got %r" % (h,))
check_code_restored(t, ["probe_args"], w)
'

probe_bg a4 int "$T/a4.truth" "$pid_a4" probe "$pid_a4" probe_args --args 4 --json
assert_rc 0 "vigil probe --args 4"
final "$T/a4.truth" "$pid_a4"
check "$T/a4.truth" "$T/a4.out" "n = 4
$expect"
echo "ok: --args 4: names, types and exact values of the four arguments"

probe_bg a2 int "$T/a2.truth" "$pid_a2" probe "$pid_a2" probe_args --args 2 --json
assert_rc 0 "vigil probe --args 2"
final "$T/a2.truth" "$pid_a2"
check "$T/a2.truth" "$T/a2.out" "n = 2
$expect"
echo "ok: --args 2: the first two"
