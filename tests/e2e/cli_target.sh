#!/bin/bash
# cli_target: every way of naming the target reaches the same process,
# and what names none, several or a list is refused clearly (issue 19
# item 1).  A copy of sleep under a name no other process has (NAME):
#   -p PID, -pPID, --pid=PID, --pid PID, NAME as the positional, --name
#   NAME: maps and profile report process.pid = the PID started (a zombie
#   of the same name is no candidate);
#   a second copy: NAME is ambiguous: exit 2, one line listing both PIDs;
#   a name nobody has: exit 4 "no process named";
#   -p PID,PID: exit 2, the command observes one process (profile and
#   stack take several: profile_several, stack_several), naming them;
#   -p PID with a positional PID too, -p with --name: exit 2 (given twice);
#   -p with no value: exit 2.
source "$(dirname "$0")/lib.sh"

NAME=vgn$$
cp "$(command -v sleep)" "$T/$NAME"
"$T/$NAME" 300 </dev/null &
pid=$!
track_pid "$pid"
for ((i = 0; i < 500; i++)); do
	[[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$NAME" ]] && break
	sleep 0.01
done

same_pid() {   # NAME: the last run's JSON names $pid
	assert_rc 0
	got=$(jget "$T/$LAST.out" 'd["process"]["pid"]')
	assert_eq "$LAST_CMD: process.pid" "$pid" "$got"
}

# A zombie of the same name (its parent, now sleep, never reaps it) is
# nothing to observe: it is not a candidate.
sh -c '"$1" 0 & exec sleep 30' sh "$T/$NAME" </dev/null &
track_pid "$!"
for ((i = 0; i < 500; i++)); do
	grep -q '^State:.*Z' $(grep -l "^Name:	$NAME" /proc/[0-9]*/status 2>/dev/null) /dev/null 2>/dev/null && break
	sleep 0.01
done

vg p_short maps -p "$pid" --json; same_pid
vg p_glued maps "-p$pid" --json; same_pid
vg p_eq maps "--pid=$pid" --json; same_pid
vg p_long maps --json --pid "$pid"; same_pid
vg by_pos maps "$NAME" --json; same_pid
vg by_name maps --name "$NAME" --json; same_pid
vg by_name_eq read "--name=$NAME" 0x0 1 --json
assert_rc 2   # reached the process: address 0 is not mapped
grep -q '"pid":	'"$pid" "$T/$LAST.out" || { show_last; fail "read --name: error document without pid $pid"; }
vg prof_name profile "$NAME" --duration 200ms --json; same_pid
vg prof_p profile --duration 200ms -p "$pid" --json; same_pid
echo "ok: -p, -pPID, --pid=, --pid, NAME, --name all name pid $pid"

refuse() { refuse_cmd maps 2000 "$@"; }
"$T/$NAME" 300 </dev/null &
pid2=$!
track_pid "$pid2"
for ((i = 0; i < 500; i++)); do
	[[ $(cat "/proc/$pid2/comm" 2>/dev/null) == "$NAME" ]] && break
	sleep 0.01
done
# Listed by PID (findproc.c), which is not start order once PIDs wrap
# around pid_max (CI saw 32746, then 333).
lo_pid=$((pid < pid2 ? pid : pid2)) hi_pid=$((pid < pid2 ? pid2 : pid))
refuse ambiguous 2 "2 processes are named '$NAME'.*$lo_pid $NAME \\($T/$NAME 300\\).*$hi_pid $NAME \\($T/$NAME 300\\)" "$NAME"
refuse none 4 "no process named 'nosuch$$'" "nosuch$$"
refuse none_name 4 "no process named '123'" --name 123
refuse list 2 "'$pid,$pid2' names several processes: maps observes one process" -p "$pid,$pid2"
refuse twice 2 "target is given twice" -p "$pid" --name "$NAME"
refuse twice_pos 2 "exactly one PID|unexpected argument '$pid'" -p "$pid2" "$pid"
refuse no_value 2 "-p needs a value" -p
refuse p_word 2 "invalid PID '$NAME'" -p "$NAME"
refuse_cmd profile 2000 prof_list 2 "pid $pid is given twice" -p "$pid,$pid2,$pid" --duration 1s
refuse_cmd probe 2000 probe_list 2 "probe observes one process" -p "$pid,$pid2" main
echo "ok: ambiguous, none, list, twice refused"
