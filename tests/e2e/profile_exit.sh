#!/bin/bash
# profile_exit: the target exits while vigil profiles it.  tgt_profile
# exit 1000 burns CPU in burn_until; once vigil says it samples ("#
# profiling pid" on stderr) the test sends SIGUSR1 and the target burns
# 1000 ms more and exits 0.  `vigil profile --duration 20000` must stop at
# the exit (within 4 s of the signal, not at 20 s), exit 0 and write the
# complete report: with --json stop_reason target_exited, as many samples
# as the target's CPU time allows (its own count at the exit, in the
# truth: a loaded machine gives it a fraction of a CPU), most of them in
# burn_until, duration_ms under 20000, threads, stacks and functions
# consistent; with the table view, the table.
source "$(dirname "$0")/lib.sh"

for fmt in json table; do
	truth=$T/truth.$fmt
	start_target tgt_profile "$truth" exit 1000
	wait_truth "$truth" ready
	pid=$(truth_get "$truth" pid)
	echo "$(cpu_ticks "$pid") $(getconf CLK_TCK)" >"$T/$fmt.ticks0"
	args=(profile "$pid" --duration 20000 --freq 999)
	[[ $fmt == table ]] || args+=(--json)
	LAST=$fmt LAST_CMD="vigil ${args[*]}"
	"$VIGIL" "${args[@]}" >"$T/$fmt.out" 2>"$T/$fmt.err" </dev/null &
	VGPID=$!
	track_pid "$VGPID"
	for ((i = 0; i < 3000; i++)); do
		grep -q '^# profiling pid' "$T/$fmt.err" && break
		kill -0 "$VGPID" 2>/dev/null || break
		sleep 0.01
	done
	grep -q '^# profiling pid' "$T/$fmt.err" || { vg_watch_wait 1; show_last; fail "$LAST_CMD: no '# profiling pid' line on stderr within 30 s"; }
	t0=$(date +%s%N)
	kill -USR1 "$pid"
	vg_watch_wait 15
	t1=$(date +%s%N)
	assert_rc 0
	ms=$(((t1 - t0) / 1000000))
	wait_truth "$truth" exiting
	((ms < 4000)) || { show_last; fail "$LAST_CMD: exited $ms ms after the signal, for a target that exits 1000 ms after it"; }
	echo "ok: $fmt: vigil profile exited 0, $ms ms after the signal (the target exits 1000 ms after it)"
done

vg_py "$(truth_get "$T/truth.json" pid)" <<'PY' || { LAST=json; show_last; fail "vigil profile --json on an exiting target: see above"; }
import os, sys
from profcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
doc = load_json(f"{T}/json.out")
obs = check_profile_doc(doc, pid, "json", alive=None, stop_reason="target_exited")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
ticks0, hz = (int(x) for x in open(f"{T}/json.ticks0").read().split())
cpu_ns = int(next(l for l in open(f"{T}/truth.json") if l.startswith("work ")).split()[3])
check_sample_count(n, cpu_ns / 1e9 - ticks0 / hz, 999, "json: observation.samples")

b = by.get("burn_until") or {}
check((b.get("self") or 0) >= 0.5 * n, f"json: burn_until has {b.get('self')!r} of {n} samples")
check(0 < (obs.get("duration_ms") or 0) < 20000,
      f"json: duration_ms {obs.get('duration_ms')!r}: stopped by the exit, before --duration 20000")
print(f"json: {n} samples, burn_until {b.get('self')}, duration_ms {obs.get('duration_ms')}, "
      f"pid_alive_after {(doc.get('process') or {}).get('pid_alive_after')!r}")
done()
PY
rows_and_n=$(vg_py <<'PY'
import os
from profcheck import *
rows, n = parse_table(open(os.environ["T"] + "/table.out").read(), "table")
done()
print(n, (rows.get("burn_until") or {}).get("self", 0))
PY
) || { LAST=table; show_last; fail "the table of an exiting target does not parse"; }
read -r n burn <<<"$rows_and_n"
((n > 0 && burn * 2 >= n)) || { LAST=table; show_last; fail "table: $n samples, burn_until $burn"; }
echo "ok: table: $n samples, burn_until $burn"
