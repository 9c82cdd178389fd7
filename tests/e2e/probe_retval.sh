#!/bin/bash
# probe_retval: `vigil probe PID probe_args --retval --latency` on tgt_probe
# args, whose calls return what the target writes down itself (args_ret
# VALUE COUNT: 4189 x7 and 613 x3): the return value read from rax at the
# return probe, typed from DWARF's return type (long int: signed), with the
# exact distribution, and the one return probe also timing the 10 calls.
# --retval at an address inside a function (no return to read) is refused
# with exit 2.
source "$(dirname "$0")/lib.sh"

start_target tgt_probe "$T/r.truth" args
pid_r=$TPID
wait_truth "$T/r.truth" ready

source "$E2E_DIR/probelib.bash"

probe_bg r int "$T/r.truth" "$pid_r" probe "$pid_r" probe_args --retval --latency --json
assert_rc 0 "vigil probe --retval --latency"
final "$T/r.truth" "$pid_r"
check "$T/r.truth" "$T/r.out" '
obs, locs = check_probe_doc(d, t.pid, w, stop="interrupted")
loc = locs[0]
check_function_location(loc, t, "probe_args", w, calls=10)
eq(w + ": the target returns (harness)", [("4189", 7), ("613", 3)], t.args_rets)
rv = loc.get("retval")
if not check(isinstance(rv, dict), w + ": retval must be an object, got %r" % (rv,)):
    done_now()
eq(w + ": retval.type (DWARF)", "long int", rv.get("type"))
eq(w + ": retval.kind", "signed", rv.get("kind"))
eq(w + ": retval.count", 10, rv.get("count"))
eq(w + ": retval.distinct", 2, rv.get("distinct"))
eq(w + ": retval.top (value, count)", t.args_rets, [(x.get("value"), x.get("count")) for x in rv.get("top") or []])
h = rv.get("histogram") or []
eq(w + ": retval.histogram", [("4096", "8191", 7), ("512", "1023", 3)][::-1],
   [(b.get("lo"), b.get("hi"), b.get("count")) for b in h])
lat = loc.get("latency")
check(isinstance(lat, dict) and lat.get("count") == 10, w + ": the same return probe times the 10 calls, got %r" % (lat,))
check_code_restored(t, ["probe_args"], w)
'
echo "ok: --retval: the exact distribution of the return values, typed, with --latency"

vg inside probe "$pid_r" probe_args+4 --retval --duration 100ms
assert_rc 2 "--retval inside a function"
assert_one_error_line
grep -q -- "--retval: 'probe_args+4': not at a function's first instruction" "$T/inside.err" ||
	{ show_last; fail "the error must name the location and say why"; }
echo "ok: --retval inside a function: refused (exit 2)"
