#!/bin/bash
# cli_launch: "vigil profile|probe [options] -- CMD ARGS" starts CMD and
# observes it from its first instruction, then exits with CMD's status
# (issue 19 item 1).  tgt_launch does all its work in its first
# milliseconds (tests/targets/README):
#   probe -- tgt_launch 20000 ...: exactly the 20000 calls the target made
#     (an observer attached after the start would miss some), exit 3 = its
#     status;
#   profile -- tgt_launch ... sig10: the folded stacks hold main ->
#     launch_burn, exit 138 (128 + SIGUSR1);
#   watch g_launch_count -- tgt_launch 1000 ...: exactly 1000 writes (the
#     only stores to it, all in the first instructions of main), exit 5;
#   status 0 passes on as 0;
#   a program that outlives a --duration: vigil reports, then waits; a
#     SIGTERM to vigil alone is passed on: exit 143, long before the
#     program's 20 s;
#   a program that does not exist: exit 2, one error line;
#   vigil failing before the program runs (unknown LOCATION): exit 2 and
#     the program never ran (no truth file).
source "$(dirname "$0")/lib.sh"

TG=$TARGETS/tgt_launch
N=20000

vg probe_n probe launch_counted --json -- "$TG" "$T/p.truth" "$N" 50 3
if grep -q 'CAP_SYS_ADMIN\|uprobe PMU' "$T/probe_n.err" && [[ $RC == 3 ]]; then
	skip "the kernel refuses uprobes here: $(head -1 "$T/probe_n.err")"
fi
assert_rc 3 "probe -- tgt_launch ... 3: the program's exit status"
calls=$(jget "$T/probe_n.out" 'd["locations"][0]["calls"]')
assert_eq "probe -- tgt_launch: calls" "$(truth_get "$T/p.truth" calls)" "$calls"
assert_eq "probe -- tgt_launch: calls" "$N" "$calls"
echo "ok: probe -- CMD counted all $calls calls, exit 3 passed on"

vg prof_sig profile --format folded -o "$T/f.folded" -- "$TG" "$T/f.truth" 0 400 sig10
assert_rc 138 "profile -- tgt_launch ... sig10: 128 + SIGUSR1"
grep -Eq '(^|;)main;launch_burn( |;)' "$T/f.folded" ||
	{ show_last; head -5 "$T/f.folded" >&2; fail "no stack main;launch_burn in the folded output"; }
echo "ok: profile -- CMD sampled main -> launch_burn, exit 138 passed on"

vg watch_n watch g_launch_count --len 4 --json -- "$TG" "$T/w.truth" 1000 0 5
if [[ $RC == 3 ]] && grep -q 'do not fire' "$T/watch_n.out"; then
	# A VM that does not pass the debug registers through: vigil says
	# so (exit 3, in the JSON's error) and leaves no launched program.
	assert_eq "watch -- tgt_launch on a machine whose breakpoints do not fire: operation" \
		live_watch "$(jget "$T/watch_n.out" 'd["operation"]')"
	! pgrep -f "$TG $T/w.truth" >/dev/null || fail "watch -- tgt_launch left the program running"
	echo "skip: watch -- CMD's 1000 writes: hardware breakpoints do not fire on this machine (vigil exits 3 and says so)"
else
	assert_rc 5 "watch -- tgt_launch ... 5: the program's exit status"
	assert_eq "watch -- tgt_launch: writes of g_launch_count" 1000 \
		"$(jget "$T/watch_n.out" 'd["watches"][0]["writes"]')"
	echo "ok: watch -- CMD saw all 1000 writes, exit 5 passed on"
fi

vg prof_ok profile --duration 5s --json -- "$TG" "$T/o.truth" 0 50 0
assert_rc 0 "profile -- tgt_launch ... 0"
assert_eq "pid of the launched program" "$(truth_get "$T/o.truth" pid)" \
	"$(jget "$T/prof_ok.out" 'd["process"]["pid"]')"

"$VIGIL" profile --duration 300ms -o "$T/long.folded" -- "$TG" "$T/l.truth" 0 20000 0 \
	>"$T/long.out" 2>"$T/long.err" </dev/null &
vpid=$!
track_pid "$vpid"
for ((i = 0; i < 500; i++)); do
	grep -q 'samples in' "$T/long.err" && break
	sleep 0.02
done
grep -q 'samples in' "$T/long.err" || { cat "$T/long.err" >&2; fail "no report 10 s after a 300 ms --duration"; }
kill -0 "$vpid" 2>/dev/null || fail "vigil exited before the program it started"
child=$(pgrep -P "$vpid" -x tgt_launch) || fail "the program vigil started is not running after the report"
track_pid "$child"
t0=$(date +%s%N)
kill -TERM "$vpid"
set +e
wait "$vpid"
rc=$?
set -e
assert_eq "vigil -- CMD after SIGTERM: the program's status (128 + 15)" 143 "$rc"
((($(date +%s%N) - t0) / 1000000 < 3000)) || fail "vigil took over 3 s to pass SIGTERM on"
! kill -0 "$child" 2>/dev/null || fail "vigil exited and left the program $child running"
[[ -s $T/long.folded ]] || fail "no report written at the --duration"
echo "ok: a program outliving --duration: report, then SIGTERM passed on (exit 143)"

vg missing profile --duration 1s -- "$T/no-such-program" x
assert_rc 2
assert_one_error_line
grep -q "cannot run '$T/no-such-program': No such file" "$T/missing.err" || { show_last; fail "missing program: wrong message"; }

vg bad_loc probe no_such_function_xyz -- "$TG" "$T/never.truth" 10 0 0
assert_rc 2
assert_one_error_line
sleep 0.2
[[ ! -e $T/never.truth ]] || fail "the program ran although vigil failed before releasing it"
vg no_cmd profile --
assert_rc 2
assert_one_error_line
echo "ok: a missing program, a failure before the start, '--' alone: exit 2"
