#!/bin/bash
# profile_duration: --duration TIME is the profile's length, whatever vigil
# does meanwhile (symbolizing the first addresses, loading debug info).
# On tgt_profile split (one CPU-bound thread), for TIME = 200 (a bare
# number: milliseconds), 1s and 0.4s (units, util/duration.c), MS the
# milliseconds they stand for:
# exit 0, stop_reason duration, observation.duration_ms within MS - 5 and
# MS + 150, and no more samples than that window can hold at 999 Hz
# (duration_ms x 0.999 x 1.05 + 5): samples from after the deadline must
# not be counted.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_profile "$truth" split
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

for spec in 200:200 1s:1000 0.4s:400; do
	time_arg=${spec%%:*} ms=${spec#*:}
	vg "d$ms" profile "$pid" --duration "$time_arg" --freq 999 --json
	assert_rc 0
	vg_py "$pid" "$ms" "$T/d$ms.out" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import sys
from profcheck import *
pid, ms, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
doc = load_json(path)
obs = check_profile_doc(doc, pid, f"--duration {ms}", stop_reason="duration")
d, n = obs.get("duration_ms") or 0, obs.get("samples") or 0
check(ms - 5 <= d <= ms + 150, f"--duration {ms}: observation.duration_ms {d!r}, expected {ms - 5} to {ms + 150}")
hi = min(d, ms + 150) * 0.999 * 1.05 + 5
check(0 < n <= hi, f"--duration {ms}: {n} samples, at most {hi:.0f} fit in {min(d, ms + 150):.0f} ms at 999 Hz")
print(f"--duration {ms}: duration_ms {d:.1f}, {n} samples")
done()
PY
done
echo "ok"
