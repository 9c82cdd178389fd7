#!/bin/sh
# run-tests.sh SAN_BUILD [FUZZ_SECONDS [DEFAULT_BUILD]]
#
# Runs the whole test suite of SAN_BUILD (meson test: unit + e2e; make test
# gives the ASan+UBSan build), then, with DEFAULT_BUILD, the end-to-end
# suite again against that build's vigil (make test gives ./build, the
# binary `make` produces and users run: a bug that only shows without the
# sanitizers, such as a free() that ASan's allocator forgives, fails there),
# then the fuzz smoke run.  Closes with one line "N passed, N failed,
# N skipped" counting all of them.  Exit status: 0 only if nothing failed.
set -u
san_build=${1:-build-asan}
fuzz_seconds=${2:-15}
default_build=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)

# Sanitizer reports must fail the test that triggers them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# A log left by an earlier run must not be counted if meson test cannot run.
rm -f "$san_build/meson-logs/testlog.json"
echo "== $san_build: unit + e2e"
meson test -C "$san_build" --print-errorlogs --num-processes 2
meson_rc=$?

default_rc=0
logs="$san_build/meson-logs/testlog.json"
refused=0
if [ -n "$default_build" ]; then
	# Its point is to be the build without sanitizers: say what it is.
	if ! python3 - "$default_build" <<'PY'
import json, sys
try:
    with open(sys.argv[1] + "/meson-info/intro-buildoptions.json") as f:
        o = {x["name"]: x["value"] for x in json.load(f)}
except OSError as e:
    sys.exit(f"run-tests.sh: {sys.argv[1]} is not a configured meson build: {e}")
print(f"== {sys.argv[1]}: e2e (buildtype {o['buildtype']}, "
      f"optimization {o['optimization']}, b_sanitize {o['b_sanitize']})")
if o["b_sanitize"] != "none":
    sys.exit(f"run-tests.sh: the default build must not be sanitized (b_sanitize {o['b_sanitize']})")
PY
	then
		default_rc=1 refused=1
	else
		logs="$logs $default_build/meson-logs/testlog.json"
		rm -f "$default_build/meson-logs/testlog.json"
		meson test -C "$default_build" --suite e2e --print-errorlogs --num-processes 2
		default_rc=$?
	fi
fi

fuzz_pass=0 fuzz_fail=0
if [ "$fuzz_seconds" -gt 0 ] 2>/dev/null; then
	if FUZZ_SECONDS=$fuzz_seconds "$top/tests/fuzz/run.sh"; then
		fuzz_pass=1
	else
		fuzz_fail=1
	fi
fi

# shellcheck disable=SC2086  # $logs: one path per word
python3 - "$fuzz_pass" "$((fuzz_fail + refused))" $logs <<'PY'
import json, sys
total = [0, 0, 0]
failed = []
for path in sys.argv[3:]:
    n = [0, 0, 0]
    try:
        with open(path) as f:
            for line in f:
                t = json.loads(line)
                r = t.get("result")
                k = 0 if r in ("OK", "EXPECTEDFAIL") else 2 if r == "SKIP" else 1
                n[k] += 1
                if k == 1:
                    failed.append((path.split("/meson-logs/")[0], t))
    except FileNotFoundError:
        n[1] += 1
        failed.append((path, {"name": "(no test log: meson test did not run)"}))
    if len(sys.argv) > 4:
        print(f"{path.split('/meson-logs/')[0]}: {n[0]} passed, {n[1]} failed, {n[2]} skipped")
    total = [a + b for a, b in zip(total, n)]
# The end of a CI log is often all that is kept: name each failure there,
# with the last lines it printed, not only at the top of a long log.
for build, t in failed:
    print(f"FAILED {build}: {t['name']} ({t.get('result', '?')}, "
          f"{t.get('duration', 0):.1f} s)")
    for stream, keep in (("stdout", 10), ("stderr", 25)):
        out = (t.get(stream) or "").rstrip().splitlines()
        for l in out[-keep:]:
            print(f"    {stream[3:]}| {l}")
total[0] += int(sys.argv[1])
total[1] += int(sys.argv[2])
print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
PY
[ "$meson_rc" -eq 0 ] && [ "$default_rc" -eq 0 ] && [ "$fuzz_fail" -eq 0 ]
