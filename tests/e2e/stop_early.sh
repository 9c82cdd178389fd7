#!/bin/bash
# stop_early: Ctrl-C (SIGINT) early in watch, probe and profile, while vigil
# still attaches, resolves and arms, ends the observation with a report, as
# it does later: exit 0, one JSON document with stop_reason "interrupted".
# SIGINT used to be blocked only once the setup was done, so one in its
# first tens of ms killed vigil (status 130, no report).  The delays are
# counted from the exec and start at twice the time `vigil --version` takes
# here (before main() nothing can catch a signal), then +20, +60 and +150
# ms.  vigil is started from Python: a background job of a script would
# ignore SIGINT.  Watch runs where breakpoints can be armed (exit 3 "do not
# fire" skips it; the test does not need a hit).
source "$(dirname "$0")/lib.sh"

start_target tgt_watch "$T/truth" single 1
wait_truth "$T/truth" ready
pid=$(truth_get "$T/truth" pid)

vg wprobe watch "$pid" g_cell --duration 50
watch_ok=1
if [[ $RC == 3 ]]; then
	watch_ok=0
	echo "note: watch not tested: $(head -n1 "$T/wprobe.err")"
else
	assert_rc 0
fi

"$PYTHON" -S - "$VIGIL" "$pid" "$watch_ok" <<'PY' || fail "an early SIGINT gave no report (above)"
import json, signal, subprocess, sys, time

vigil, pid, watch_ok = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
best = 1.0
for _ in range(3):
    t = time.monotonic()
    subprocess.run([vigil, "--version"], stdout=subprocess.DEVNULL, check=True)
    best = min(best, time.monotonic() - t)
base = 2 * best
cmds = [["profile", pid, "--duration", "20000", "--json"],
        ["probe", pid, "libc.so.6:clock_nanosleep", "--duration", "20000", "--json"]]
if watch_ok:
    cmds.append(["watch", pid, "g_cell", "--duration", "20000", "--json"])
bad = 0
for cmd in cmds:
    for extra in (0, 0.02, 0.06, 0.15):
        d = base + extra
        p = subprocess.Popen([vigil] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(d)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        what = f"vigil {' '.join(cmd)} with SIGINT at {d * 1000:.0f} ms"
        try:
            doc = json.loads(out)
            stop = (doc.get("observation") or {}).get("stop_reason")
        except ValueError:
            doc, stop = None, None
        if p.returncode != 0 or stop != "interrupted":
            bad += 1
            print(f"FAIL: {what}: exit {p.returncode}, stop_reason {stop!r}, "
                  f"stderr {err.decode(errors='replace')[-300:]!r}", file=sys.stderr)
        else:
            print(f"ok: {what}: exit 0, stop_reason interrupted")
sys.exit(1 if bad else 0)
PY
