#!/bin/sh
# Runs the whole test suite of one build dir (meson test: unit + e2e), then
# the fuzz smoke run, and closes with one line "N passed, N failed, N skipped"
# counting both.  Exit status: 0 only if nothing failed.
set -u
build=${1:-build-asan}
fuzz_seconds=${2:-15}
top=$(cd "$(dirname "$0")/.." && pwd)

# Sanitizer reports must fail the test that triggers them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

meson test -C "$build" --print-errorlogs --num-processes 2
meson_rc=$?

fuzz_pass=0 fuzz_fail=0
if [ "$fuzz_seconds" -gt 0 ] 2>/dev/null; then
	if FUZZ_SECONDS=$fuzz_seconds "$top/tests/fuzz/run.sh"; then
		fuzz_pass=1
	else
		fuzz_fail=1
	fi
fi

python3 - "$build/meson-logs/testlog.json" "$fuzz_pass" "$fuzz_fail" <<'PY'
import json, sys
passed = failed = skipped = 0
try:
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line).get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
except FileNotFoundError:
    failed += 1
passed += int(sys.argv[2])
failed += int(sys.argv[3])
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
[ "$meson_rc" -eq 0 ] && [ "$fuzz_fail" -eq 0 ]
