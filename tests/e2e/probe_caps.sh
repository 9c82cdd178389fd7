#!/bin/bash
# probe_caps: what `vigil probe` of the user's own process needs, found
# with setpriv (user nobody, ambient capabilities, no root).
#   - CAP_BPF + CAP_PERFMON (what the documentation used to ask for): where
#     the kernel's uprobe PMU requires CAP_SYS_ADMIN (perf_uprobe_event_init
#     since "perf: Require CAP_SYS_ADMIN for uprobes", 2025), exit 3 with
#     one line that names CAP_SYS_ADMIN and says that vigil has CAP_PERFMON
#     only; an older kernel that still accepts CAP_PERFMON: exit 0.
#   - CAP_SYS_ADMIN alone: exit 0, a report (it stands for CAP_BPF and
#     CAP_PERFMON too).
#   - no capability: exit 3, the line names CAP_SYS_ADMIN.
# Skips when not root (setpriv cannot raise capabilities) or without
# setpriv.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root to hand capabilities to user nobody"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
chmod 755 "$T"
cp "$VIGIL" "$T/vigil"
chmod 755 "$T/vigil"
# asnobody CAPS CMD...  - CMD as uid/gid 65534 with exactly CAPS ambient.
asnobody() {
	local caps=$1
	shift
	if [[ $caps == none ]]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
	else
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="-all,$caps" \
			--ambient-caps="$caps" "$@"
	fi
}
asnobody +perfmon,+bpf true 2>"$T/setpriv.err" ||
	skip "setpriv cannot give nobody CAP_PERFMON + CAP_BPF: $(cat "$T/setpriv.err")"
[[ -e /sys/bus/event_source/devices/uprobe/type ]] || skip "no uprobe PMU in this kernel"

# The target: nobody's own process, in clock_nanosleep most of the time.
# (setpriv itself, not the function: $! must be the pid that becomes sleep)
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all sleep 120 </dev/null >/dev/null 2>&1 &
tpid=$!
track_pid "$tpid"
for ((i = 0; i < 100; i++)); do
	[[ $(stat -c %u "/proc/$tpid" 2>/dev/null) == 65534 && $(cat "/proc/$tpid/comm") == sleep ]] && break
	sleep 0.02
done
[[ $(cat "/proc/$tpid/comm" 2>/dev/null) == sleep ]] || harness_error "sleep as nobody did not start"

run() {  # run NAME CAPS ARGS...
	local name=$1 caps=$2
	shift 2
	LAST=$name
	LAST_CMD="(as nobody, caps $caps) vigil $*"
	set +e
	asnobody "$caps" "$T/vigil" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
	set -e
}

run perfmon +perfmon,+bpf probe "$tpid" libc.so.6:clock_nanosleep --duration 300
if [[ $RC == 0 ]]; then
	echo "note: this kernel lets CAP_PERFMON create uprobes (before the 2025 change)"
else
	assert_rc 3
	assert_one_error_line
	grep -q "requires CAP_SYS_ADMIN, and vigil has CAP_PERFMON only" "$T/perfmon.err" ||
		{ show_last; fail "$LAST_CMD: the error does not say that CAP_SYS_ADMIN is required and CAP_PERFMON is not enough"; }
	echo "ok: CAP_BPF + CAP_PERFMON: exit 3, $(head -c 200 "$T/perfmon.err")"
fi

run admin +sys_admin probe "$tpid" libc.so.6:clock_nanosleep --duration 300 --json
assert_rc 0 "$LAST_CMD (CAP_SYS_ADMIN alone must be enough)"
jget "$T/admin.out" 'd["operation"]' | grep -qx live_probe || { show_last; fail "$LAST_CMD: no probe report"; }
echo "ok: CAP_SYS_ADMIN alone: exit 0, a report"

run none none probe "$tpid" libc.so.6:clock_nanosleep --duration 300
assert_rc 3
assert_one_error_line
grep -q "CAP_SYS_ADMIN" "$T/none.err" || { show_last; fail "$LAST_CMD: the error does not name CAP_SYS_ADMIN"; }
echo "ok: no capability: exit 3, $(head -c 200 "$T/none.err")"

# --help says it too.
"$VIGIL" help probe | grep -q "CAP_SYS_ADMIN" || fail "vigil help probe does not name CAP_SYS_ADMIN"
