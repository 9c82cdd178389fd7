#!/bin/bash
# target_exits: a PID that no longer exists, a zombie, and a target that
# exits while vigil reads a large buffer over and over.  vigil exits 4 and
# says so; it never exits 0 with fewer bytes than asked unless the JSON says
# complete:false.
source "$(dirname "$0")/lib.sh"

# 1. A reaped PID.
start_target tgt_globals_pie "$T/dead.truth"
wait_truth "$T/dead.truth" ready
dead=$(truth_get "$T/dead.truth" pid)
rt=$(truth_sym "$T/dead.truth" vg_magic runtime)
kill -KILL "$dead"
wait "$dead" 2>/dev/null || true
[[ ! -e /proc/$dead ]] || harness_error "pid $dead still exists after kill+wait"
for args in "read $dead $rt 8" "maps $dead"; do
	# shellcheck disable=SC2086
	vg dead $args
	assert_rc 4
	assert_one_error_line
	grep -qi 'pid' "$T/dead.err" || { show_last; fail "$LAST_CMD: the message must mention the pid"; }
	[[ ! -s $T/dead.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the error"; }
	# shellcheck disable=SC2086
	vg dead_json $args --json
	assert_rc 4
	vg_py "$T/dead_json.out" <<'PY'
import sys
from vgcheck import *
check_error_doc(load_json(sys.argv[1]), 4)
done()
PY
done
echo "ok: dead pid"

# 2. A zombie: exited, not reaped by its parent.
"$PYTHON" -S -c '
import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid, flush=True)
time.sleep(60)
' >"$T/zombie" &
track_pid $!
for ((i = 0; i < 500; i++)); do
	zpid=$(cat "$T/zombie" 2>/dev/null || true)  # the background shell may not have created it yet
	[[ -n $zpid ]] && grep -q '^[0-9]* (.*) Z' "/proc/$zpid/stat" 2>/dev/null && break
	sleep 0.01
done
grep -q '^[0-9]* (.*) Z' "/proc/$zpid/stat" || harness_error "no zombie"
vg zombie maps "$zpid"
assert_rc 4 "maps of a zombie"
assert_one_error_line
vg zombie_read read "$zpid" 0x400000 8
assert_rc 4 "read of a zombie"
assert_one_error_line
echo "ok: zombie"

# 3. Exits while being read: three targets with different lifetimes, each
# read over and over (alternately 4 MiB as JSON and the whole 32 MiB --raw)
# until vigil reports exit 4.
race() {
	local life=$1 truth=$T/exit_$1.truth pid buf len deadline n=0 partial=0 size
	start_target tgt_exit "$truth" "$life" 32
	wait_truth "$truth" ready
	pid=$(truth_get "$truth" pid)
	read -r buf len <<<"$(truth_get "$truth" buf)"
	deadline=$((SECONDS + 5))
	while :; do
		((SECONDS < deadline)) || fail "vigil never reported the exit of pid $pid (after $n reads)"
		n=$((n + 1))
		if ((n % 2)); then
			vg race read "$pid" "$buf" 4M --json
			case $RC in
			0)
				if ! vg_py "$T/race.out" $((4 << 20)) >"$T/race.py" 2>&1 <<'PY'
import sys
from vgcheck import *
doc, n = load_json(sys.argv[1]), int(sys.argv[2])
hx = get(doc, "hex")
got = get(doc, "bytes_read")
if doc.get("complete") is True:
    eq("bytes_read of a complete read", n, got)
    eq("hex length of a complete read", 2 * n, len(hx))
else:
    eq("complete", False, doc.get("complete"))
    check(got < n, f"complete:false with bytes_read {got} >= {n}")
    eq("hex length of a partial read", 2 * got, len(hx))
    print("partial")
check(hx == "a5" * (len(hx) // 2), "bytes other than the target's 0xa5")
done()
PY
				then
					cat "$T/race.py" >&2
					show_last
					fail "read $n: exit 0 but inconsistent"
				fi
				if grep -q partial "$T/race.py"; then partial=$((partial + 1)); fi
				;;
			4)
				vg_py "$T/race.out" <<'PY' || { show_last; fail "read $n: bad error document"; }
import sys
from vgcheck import *
check_error_doc(load_json(sys.argv[1]), 4)
done()
PY
				break
				;;
			*) show_last; fail "read $n of an exiting target: expected exit 0 or 4, got $RC" ;;
			esac
		else
			vg race_raw read "$pid" "$buf" "$len" --raw
			case $RC in
			0)
				size=$(stat -c %s "$T/race_raw.out")
				[[ $size == "$len" ]] || { show_last; fail "read $n: --raw exit 0 with $size of $len bytes"; }
				;;
			4) assert_one_error_line; break ;;
			*) show_last; fail "raw read $n of an exiting target: expected exit 0 or 4, got $RC" ;;
			esac
		fi
	done
	echo "ok: exited after ${life} ms while read ($n reads, $partial partial)"
}
race 300
race 550
race 800
