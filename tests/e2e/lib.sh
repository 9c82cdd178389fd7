# lib.sh - helpers sourced by every e2e test (tests/e2e/<command>_<case>.sh).
#
# Each test: its own temp dir $T, targets started with start_target and
# killed by the EXIT trap, vigil run through `vg` (stdout/stderr kept in
# $T/NAME.out and $T/NAME.err, exit code in $RC).  Checks that need JSON are
# written in Python (stdlib only) with the helpers of vgcheck.py.
# Exit codes: 0 pass, 1 fail, 77 skip (kernel refuses; reason printed),
# 99 harness broke (a target did not start).
set -euo pipefail

: "${VIGIL:?set VIGIL to the vigil binary}"
: "${TARGETS:?set TARGETS to the build dir of tests/targets}"
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PYTHONPATH="$E2E_DIR${PYTHONPATH:+:$PYTHONPATH}"
# The real interpreter, not a version-manager shim (pyenv's costs 0.2 s a call).
PYTHON=$(python3 -c 'import sys; print(sys.executable)') || {
	echo "HARNESS ERROR: python3 not found" >&2
	exit 99
}

T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-e2e.XXXXXX")
T=$(realpath "$T")
export T
# The persistent symbol index (symcache.h) goes to this test's own
# directory: never the user's cache, and no test sees another's.
export VIGIL_CACHE_DIR="$T/vigil-cache"
VG_PIDS=()

vg_cleanup() {
	local p
	for p in "${VG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	for p in "${VG_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	# VG_KEEP=DIR: keep the outputs for a post-mortem.
	[[ -z ${VG_KEEP:-} ]] || cp -r "$T" "$VG_KEEP"
	rm -rf "$T"
}
trap vg_cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
harness_error() { echo "HARNESS ERROR: $*" >&2; exit 99; }

# start_target NAME ARGS...  - run $TARGETS/NAME in the background; sets TPID.
start_target() {
	local name=$1
	shift
	[[ -x $TARGETS/$name ]] || harness_error "target $TARGETS/$name not built"
	"$TARGETS/$name" "$@" </dev/null &
	TPID=$!
	VG_PIDS+=("$TPID")
}

# track_pid PID  - kill PID in the EXIT trap too.
track_pid() { VG_PIDS+=("$1"); }

# wait_truth FILE [STATE]  - wait (5 s max) until FILE exists and, if STATE
# is given, has the line "state STATE".
wait_truth() {
	local file=$1 state=${2:-} i
	for ((i = 0; i < 500; i++)); do
		if [[ -f $file ]] && { [[ -z $state ]] || grep -qx "state $state" "$file"; }; then
			return 0
		fi
		sleep 0.01
	done
	harness_error "target wrote no truth to $file${state:+ with state $state} within 5 s"
}

# truth_get FILE KEY  - the rest of the first line "KEY ...".
truth_get() {
	local line
	line=$(grep -m1 "^$2 " "$1") || harness_error "no '$2' line in truth file $1"
	printf '%s\n' "${line#"$2 "}"
}

# truth_sym FILE NAME FIELD  - FIELD: runtime static size bytes path.
truth_sym() {
	local rest idx
	rest=$(truth_get "$1" "sym $2")
	case $3 in
	runtime) idx=1 ;; static) idx=2 ;; size) idx=3 ;; bytes) idx=4 ;; path) idx=5 ;;
	*) harness_error "truth_sym: unknown field $3" ;;
	esac
	if ((idx == 5)); then
		cut -d' ' -f5- <<<"$rest"
	else
		cut -d' ' -f"$idx" <<<"$rest"
	fi
}

# vg NAME ARGS...  - run vigil; $T/NAME.out, $T/NAME.err, $RC, $LAST.
# Environment prefixes work: VIGIL_MAPS_SOURCE=text vg NAME maps PID.
vg() {
	local name=$1
	shift
	LAST=$name
	LAST_CMD="vigil $*"
	set +e
	"$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
	set -e
	return 0
}

# show_last  - what the last vigil run printed (for failure messages).
show_last() {
	echo "--- command: ${VIGIL_MAPS_SOURCE:+VIGIL_MAPS_SOURCE=$VIGIL_MAPS_SOURCE }$LAST_CMD (exit $RC)" >&2
	echo "--- stdout (first 20 lines):" >&2
	head -c 4000 "$T/$LAST.out" | head -n 20 >&2 || true
	echo "--- stderr:" >&2
	head -c 4000 "$T/$LAST.err" >&2 || true
}

# assert_rc EXPECTED [WHAT]  - exit code of the last vg run.
assert_rc() {
	if [[ $RC != "$1" ]]; then
		show_last
		fail "${2:-$LAST_CMD}: expected exit $1, got $RC"
	fi
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	if [[ $2 != "$3" ]]; then
		fail "$1: expected '$2', got '$3'"
	fi
}

# assert_one_error_line  - stderr of the last run is one line "vigil: error: ...".
assert_one_error_line() {
	local n
	n=$(wc -l <"$T/$LAST.err")
	if [[ $n != 1 ]] || ! head -n1 "$T/$LAST.err" | grep -q '^vigil: error: '; then
		show_last
		fail "$LAST_CMD: stderr must be exactly one line starting 'vigil: error: ' ($n lines)"
	fi
}

# jget FILE EXPR  - evaluate the Python expression EXPR with d = JSON of FILE;
# strings print raw, everything else as JSON.
jget() {
	"$PYTHON" -S - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(f"FAIL: {sys.argv[1]} is not JSON ({e})")
try:
    v = eval(sys.argv[2], {"d": d})
except Exception as e:
    sys.exit(f"FAIL: cannot get {sys.argv[2]} from {sys.argv[1]}: {e!r}")
print(v if isinstance(v, str) else json.dumps(v))
PY
}

# require_mount_namespace  - skip (77) only when the kernel refuses a private
# mount namespace; any other failure of unshare -m is a test failure.
require_mount_namespace() {
	if ! unshare -m --propagation private true 2>"$T/unshare.err"; then
		if grep -qi 'operation not permitted' "$T/unshare.err"; then
			skip "unshare -m refused: $(cat "$T/unshare.err")"
		fi
		fail "unshare -m failed: $(cat "$T/unshare.err")"
	fi
}

# vg_py ARGS... <<'PY' ... PY  - run a Python check (vgcheck importable).
vg_py() { "$PYTHON" -S - "$@"; }

# cpu_ticks PID  - the CPU time all of PID's threads have used so far, in
# clock ticks (utime + stime: fields 14 and 15 of /proc/PID/stat, counted
# after the comm's closing parenthesis, which may hold spaces).  A profile
# test compares its sample count with what the target ran meanwhile, not
# with the wall time: on a loaded machine a busy target gets a fraction of
# a CPU (see check_sample_count in profcheck.py).
cpu_ticks() {
	local s
	s=$(<"/proc/$1/stat") || harness_error "cannot read /proc/$1/stat"
	s=${s##*) }
	# shellcheck disable=SC2086  # the fields, one word each
	set -- $s
	echo $((${12} + ${13}))
}

# vg_cpu PID NAME ARGS...  - vg NAME ARGS, and in $T/NAME.cpu the clock
# ticks PID's threads used meanwhile and the ticks per second
# (profcheck.py's run_cpu_s reads it).
vg_cpu() {
	local pid=$1 name=$2 t0
	shift
	t0=$(cpu_ticks "$pid")
	vg "$@"
	echo "$(($(cpu_ticks "$pid") - t0)) $(getconf CLK_TCK)" >"$T/$name.cpu"
}

# ---- vigil watch (watch_*.sh, target tgt_watch) ----------------------------
# watch_probe PID  - WATCH_MODE=real when hardware breakpoints fire here, or
# WATCH_MODE=emulation when vigil says they do not (exit 3, "do not fire":
# a VM without debug registers): the tests then give vigil
# VIGIL_WATCH_EMULATE_TRAPS, uprobes right after tgt_watch's stores (see
# src/watch/watch.h).  Skips when the kernel refuses breakpoints outright.
# WATCH_MODE_FORCE=emulation runs the emulation where breakpoints fire too
# (meson registers every watch test once more that way), so both modes are
# tested on every machine that fires.
watch_probe() {
	if [[ ${WATCH_MODE_FORCE:-} == emulation ]]; then
		export WATCH_MODE=emulation
		echo "note: WATCH_MODE_FORCE=emulation: traps emulated by uprobes (VIGIL_WATCH_EMULATE_TRAPS)"
		return 0
	fi
	vg watch_probe watch "$1" g_cell --duration 200
	if [[ $RC == 0 ]]; then
		export WATCH_MODE=real
		echo "note: hardware breakpoints fire here: real watch"
	elif [[ $RC == 3 ]] && grep -q 'do not fire' "$T/watch_probe.err"; then
		export WATCH_MODE=emulation
		echo "note: hardware breakpoints do not fire on this machine: traps emulated by uprobes (VIGIL_WATCH_EMULATE_TRAPS)"
	elif [[ $RC == 3 ]]; then
		skip "the kernel refuses the breakpoint: $(head -n1 "$T/watch_probe.err")"
	else
		show_last
		fail "probe watch: expected exit 0 (breakpoints fire) or 3 (they do not), got $RC"
	fi
}

# watch_env TRUTH GROUP...  - WATCH_ENV: the env prefix of the watch runs.
# Real mode: empty.  Emulation: each GROUP (one per breakpoint, in order; a
# --follow has two) is a comma-separated list of tgt_watch's store names
# ("emu NAME" truth lines), e.g. watch_env "$truth" reg,imm,lock rep.
watch_env() {
	local truth=$1 g name groups="" part off path
	shift
	WATCH_ENV=()
	[[ $WATCH_MODE == emulation ]] || return 0
	for g in "$@"; do
		part=""
		for name in ${g//,/ }; do
			off=$(truth_get "$truth" "emu $name" | cut -d' ' -f1)
			path=$(truth_get "$truth" "emu $name" | cut -d' ' -f4-)
			part+="${part:+,}$path:$off"
		done
		groups+="${groups:+;}$part"
	done
	WATCH_ENV=(env "VIGIL_WATCH_EMULATE_TRAPS=$groups")
}

# vg_watch_start NAME ARGS...  - run "${WATCH_ENV[@]} vigil ARGS" in the
# background (VGPID; $T/NAME.out, $T/NAME.err) and wait (10 s max) for its
# "# armed: " line on stderr.  SIGINT is reset to its default first (bash
# starts background jobs with SIGINT ignored): a SIGINT is then a Ctrl-C.
vg_watch_start() {
	local name=$1 i
	shift
	LAST=$name
	LAST_CMD="vigil $*"
	((${#WATCH_ENV[@]} == 0)) || LAST_CMD="${WATCH_ENV[*]:1} $LAST_CMD"
	"$PYTHON" -S -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "${WATCH_ENV[@]}" "$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null &
	VGPID=$!
	VG_PIDS+=("$VGPID")
	for ((i = 0; i < 1000; i++)); do
		grep -q '^# armed: ' "$T/$name.err" && return 0
		if ! kill -0 "$VGPID" 2>/dev/null; then
			vg_watch_wait 1
			show_last
			fail "$LAST_CMD: exited ($RC) before its '# armed:' line"
		fi
		sleep 0.01
	done
	show_last
	fail "$LAST_CMD: no '# armed: ' line on stderr within 10 s"
}

# vg_watch_wait [SECONDS]  - wait (10 s by default) for the background vigil
# to exit by itself; $RC its exit code.
vg_watch_wait() {
	local i
	for ((i = 0; i < ${1:-10} * 100; i++)); do
		kill -0 "$VGPID" 2>/dev/null || break
		sleep 0.01
	done
	if kill -0 "$VGPID" 2>/dev/null; then
		kill -KILL "$VGPID" 2>/dev/null || true
		wait "$VGPID" 2>/dev/null || true
		RC=timeout
		show_last
		fail "$LAST_CMD: still running after ${1:-10} s (killed)"
	fi
	set +e
	wait "$VGPID"
	RC=$?
	set -e
}

# vg_watch_signal SIG  - send SIG to the background vigil and wait for it.
vg_watch_signal() {
	kill -"$1" "$VGPID"
	vg_watch_wait 10
}

# refuse_cmd CMD MAX_MS NAME RC REGEX ARGS...  - vigil CMD ARGS exits RC
# with one error line matching REGEX (grep -Ei) and nothing on stdout,
# within MAX_MS (a refusal must come before any observation starts); then
# the same with --json: an error document with exit_code RC.
refuse_cmd() {
	local cmd=$1 max_ms=$2 name=$3 rc=$4 re=$5 t0 t1
	shift 5
	t0=$(date +%s%N)
	vg "$name" "$cmd" "$@"
	t1=$(date +%s%N)
	assert_rc "$rc"
	assert_one_error_line
	grep -Eiq -- "$re" "$T/$name.err" || { show_last; fail "$LAST_CMD: the error does not match /$re/"; }
	[[ ! -s $T/$name.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the error"; }
	(((t1 - t0) / 1000000 < max_ms)) || { show_last; fail "$LAST_CMD: took $(((t1 - t0) / 1000000)) ms to refuse (did it $cmd first?)"; }
	vg "${name}_json" "$cmd" "$@" --json
	assert_rc "$rc"
	vg_py "$T/${name}_json.out" "$rc" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: bad error document"; }
import sys
from vgcheck import *
check_error_doc(load_json(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
done()
PY
	echo "ok: $name: exit $rc, $(head -c 160 "$T/$name.err")"
}
