#!/bin/bash
# target_kinds: processes vigil cannot observe are named for what they are.
#   - A kernel thread (pid 2, kthreadd, where it is one): scan, watch and
#     probe exit 2 with one line "pid 2 (kthreadd) is a kernel thread: it
#     has no user memory or code to VERB" (they said "0 matches", "not
#     mapped", "no symbol"); maps still lists nothing with a warning.
#   - A process of one's own user that made itself not dumpable
#     (prctl(PR_SET_DUMPABLE, 0), tgt_nodump): exit 3 with a line that says
#     so and that root or CAP_SYS_PTRACE is needed, not "run as the
#     target's user" (vigil already is); run as nobody with setpriv.
source "$(dirname "$0")/lib.sh"

if [[ $(cat /proc/2/comm 2>/dev/null) == kthreadd ]]; then
	for cmd in "scan 2 1 --type i32" "watch 2 0x1000 --duration 100" "probe 2 malloc --duration 100"; do
		verb=${cmd%% *}
		# shellcheck disable=SC2086
		vg "k_$verb" $cmd
		assert_rc 2
		assert_one_error_line
		grep -q "^vigil: error: pid 2 (kthreadd) is a kernel thread: it has no user memory or code to $verb" "$T/k_$verb.err" ||
			{ show_last; fail "$LAST_CMD: the error does not say that pid 2 is a kernel thread"; }
	done
	vg k_maps maps 2
	assert_rc 0
	grep -q "kernel thread" "$T/k_maps.err" || { show_last; fail "$LAST_CMD: no kernel thread warning"; }
	echo "ok: pid 2 (kthreadd): scan, watch, probe refused as a kernel thread (exit 2)"
else
	echo "note: pid 2 is not kthreadd here (a PID namespace): kernel thread case not run"
fi

if [[ $(id -u) != 0 ]]; then
	skip "the non-dumpable case needs root to run target and vigil as user nobody"
fi
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
asnobody true 2>"$T/setpriv.err" || skip "setpriv cannot switch to uid 65534: $(cat "$T/setpriv.err")"
chmod 755 "$T"
mkdir "$T/nb"
chown 65534:65534 "$T/nb"
cp "$VIGIL" "$T/vigil"
cp "$TARGETS/tgt_nodump" "$T/tgt_nodump"
chmod 755 "$T/vigil" "$T/tgt_nodump"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$T/tgt_nodump" "$T/nb/truth" </dev/null &
track_pid $!
wait_truth "$T/nb/truth" ready
pid=$(truth_get "$T/nb/truth" pid)
for cmd in "maps $pid" "profile $pid --duration 100"; do
	name=nd_${cmd%% *}
	set +e
	# shellcheck disable=SC2086
	asnobody "$T/vigil" $cmd >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
	set -e
	LAST=$name LAST_CMD="(as nobody) vigil $cmd"
	assert_rc 3
	assert_one_error_line
	grep -q "the process runs as your user but is not dumpable" "$T/$name.err" ||
		{ show_last; fail "$LAST_CMD: the error does not say that the process is not dumpable"; }
	grep -q "root or CAP_SYS_PTRACE" "$T/$name.err" || { show_last; fail "$LAST_CMD: the error does not say what is needed"; }
done
echo "ok: a non-dumpable process of one's own user: exit 3, $(head -c 200 "$T/nd_maps.err")"
