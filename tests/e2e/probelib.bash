# probelib.bash - what the probe_*.sh tests share (sourced after lib.sh):
# run vigil probe against a tgt_probe that starts on its go, re-read the
# target's code after vigil exited, check a report in Python (probecheck.py).

# probe_bg NAME STOP TRUTH TPID ARGS...  - vigil ARGS in the background,
# the go (SIGUSR1) to TPID once vigil printed '# probing', then, once TRUTH
# says "state done", stopped by STOP (int, term, or wait: by itself); $RC.
probe_bg() {
	local name=$1 stop=$2 truth=$3 tpid=$4
	shift 4
	LAST=$name
	LAST_CMD="vigil $*"
	"$PYTHON" -S "$E2E_DIR/probecheck.py" run "$name" "$stop" "$truth" "$tpid" "$VIGIL" "$@" ||
		harness_error "probecheck.py run failed"
	RC=$(cat "$T/$name.rc")
	case $RC in
	notarmed) RC=$(cat "$T/$name.rc2"); show_last; fail "$LAST_CMD: exited before its '# probing' line" ;;
	noarm) show_last; fail "$LAST_CMD: no '# probing' line on stderr within 10 s" ;;
	notdone) show_last; fail "$LAST_CMD: the target did not finish its calls within 30 s of the go" ;;
	timeout) show_last; fail "$LAST_CMD: still running 20 s after the stop ($stop; killed)" ;;
	esac
}

# final TRUTH PID  - SIGUSR2 to the target (vigil has exited): it re-reads
# its code into TRUTH ("code_final" lines, "state final").
final() {
	kill -USR2 "$2"
	wait_truth "$1" final
}

# check TRUTH OUT PYTHON  - the report OUT against TRUTH (t: ProbeTruth,
# d: the document, w: what is checked).
check() {
	vg_py "$1" "$2" "$3" "$LAST_CMD" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import sys
from probecheck import *
t, d, code, w = ProbeTruth(sys.argv[1]), load_json(sys.argv[2]), sys.argv[3], sys.argv[4]
exec(code)
done()
PY
}
