#!/bin/bash
# profile_exit: the target exits while vigil profiles it.  tgt_profile
# exit 1000 burns CPU in burn_until for 1 s and exits 0; `vigil profile
# --duration 5000 --json`, started at once, must stop at the exit (well
# before 5 s), exit 0 and write the complete report: stop_reason
# target_exited, samples > 0 (most of them in burn_until), duration_ms
# under 5000, threads/stacks/functions consistent.  The same with the
# table view: exit 0 and the table written.
source "$(dirname "$0")/lib.sh"

for fmt in json table; do
	truth=$T/truth.$fmt
	start_target tgt_profile "$truth" exit 1000
	wait_truth "$truth" ready
	pid=$(truth_get "$truth" pid)
	t0=$(date +%s%N)
	if [[ $fmt == json ]]; then
		vg $fmt profile "$pid" --duration 5000 --freq 999 --json
	else
		vg $fmt profile "$pid" --duration 5000 --freq 999
	fi
	t1=$(date +%s%N)
	assert_rc 0
	ms=$(((t1 - t0) / 1000000))
	((ms < 4000)) || { show_last; fail "$LAST_CMD: took $ms ms for a target that lives 1000 ms (--duration 5000)"; }
	echo "ok: $fmt: vigil profile exited 0 after $ms ms for a target that exited after 1000 ms"
done

vg_py "$(truth_get "$T/truth.json" pid)" <<'PY' || { LAST=json; show_last; fail "vigil profile --json on an exiting target: see above"; }
import os, sys
from profcheck import *
T, pid = os.environ["T"], int(sys.argv[1])
doc = load_json(f"{T}/json.out")
obs = check_profile_doc(doc, pid, "json", alive=None, stop_reason="target_exited")
by, stacks = check_profile_body(doc, "json")
n = obs.get("samples") or 0
check(n >= 50, f"json: {n} samples of a target burning CPU for 1 s (at 999 Hz)")
check(n <= 1.1 * 999 * 1.0 + 50, f"json: {n} samples, more than 1 s of CPU at 999 Hz can give")
b = by.get("burn_until") or {}
check((b.get("self") or 0) >= 0.5 * n, f"json: burn_until has {b.get('self')!r} of {n} samples")
check(0 < (obs.get("duration_ms") or 0) < 5000,
      f"json: duration_ms {obs.get('duration_ms')!r}: stopped by the exit, before --duration 5000")
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
