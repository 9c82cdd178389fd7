#!/bin/bash
# sym_dlopen: one `vigil sym PID` reading addresses from a FIFO while the
# target changes its libraries: an address of the main program first (the
# symbolizer has its images), then the target dlopens libvgsym_a.so and
# vigil must answer its function and line (an address no image covers
# re-reads the maps); then the target dlcloses it and dlopens libvgsym_b.so
# (same layout, so usually at the same address) and vigil must answer with
# the new library, not the stale image.  Answers must be streamed: each is
# awaited before the next change.  The maps refresh is rate-limited to once
# a second, so changes are 1.1 s apart.  Two vigils read the same lines:
# text (whose streamed answers pace the test) and --json (checked exactly).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_sym "$truth" "$TARGETS/libvgsym_a.so" "$TARGETS/libvgsym_b.so"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
bin=$(truth_sym "$truth" sym_leaf path)

mkfifo "$T/in_text" "$T/in_json"
"$VIGIL" sym "$pid" <"$T/in_text" >"$T/text.out" 2>"$T/text.err" &
vtext=$!
track_pid "$vtext"
"$VIGIL" sym "$pid" --json <"$T/in_json" >"$T/json.out" 2>"$T/json.err" &
vjson=$!
track_pid "$vjson"
exec 3>"$T/in_text" 4>"$T/in_json"

show_text() {
	echo "--- inputs so far:" >&2
	cat "$T/inputs" >&2
	echo "--- vigil sym $pid (text) stdout:" >&2
	cat "$T/text.out" >&2
	echo "--- stderr:" >&2
	cat "$T/text.err" >&2
}

# feed ADDR FUNCTION FILE LINE  - give ADDR to both vigils, wait (5 s) until
# the text one has answered FUNCTION at FILE:LINE.
feed() {
	local i
	printf '%s\n' "$1" >>"$T/inputs"
	printf '%s\n' "$1" >&3
	printf '%s\n' "$1" >&4
	for ((i = 0; i < 500; i++)); do
		if grep -q -- "$2" "$T/text.out" && grep -Eq -- "$3:$4([^0-9]|$)" "$T/text.out"; then
			return 0
		fi
		kill -0 "$vtext" 2>/dev/null || { show_text; fail "vigil sym (text) exited early"; }
		sleep 0.01
	done
	show_text
	fail "no answer '$2 ... $3:$4' for $1 within 5 s: a wrong answer, or not streamed (one answer per input line, at once)"
}
# settle  - wait until the --json vigil has read everything fed (its FIFO,
# fd 4, is empty: it answers at the end, so this is all we can see), then
# let the refresh rate limit of both vigils expire.
settle() {
	"$PYTHON" -S -c '
import array, fcntl, sys, termios, time
n = array.array("i", [0])
for _ in range(500):
    fcntl.ioctl(4, termios.FIONREAD, n)
    if n[0] == 0:
        sys.exit(0)
    time.sleep(0.01)
sys.exit("vigil sym --json did not read its input within 5 s")' || harness_error "the --json vigil is stuck"
	sleep 1.1
}
frame_field() { truth_get "$1" "frame $2 0" | cut -d' ' -f"$3"; }

feed "$(truth_sym "$truth" sym_leaf runtime)" sym_leaf tgt_sym.c "$(frame_field "$truth" sym_leaf 3)"
cp "$truth" "$T/truth0"
settle

kill -USR1 "$pid"
wait_truth "$truth" lib1
cp "$truth" "$T/truth1"
a=$(truth_sym "$truth" libfn runtime)
feed "$a" vgsym_a_work libvgsym_a.c "$(frame_field "$truth" libfn 3)"
settle

kill -USR1 "$pid"
wait_truth "$truth" lib2
cp "$truth" "$T/truth2"
b=$(truth_sym "$truth" libfn runtime)
if [[ $a == "$b" ]]; then
	echo "libvgsym_b.so's vgsym_b_work is at $b, where vgsym_a_work was: the stale image must not answer"
else
	echo "note: the loader put libvgsym_b.so elsewhere (vgsym_b_work at $b, vgsym_a_work was at $a)"
fi
grep -q libvgsym_a "/proc/$pid/maps" && harness_error "libvgsym_a.so still mapped after dlclose"
feed "$b" vgsym_b_work libvgsym_b.c "$(frame_field "$truth" libfn 3)"

exec 3>&- 4>&-
set +e
wait "$vtext"
rc_text=$?
wait "$vjson"
rc_json=$?
set -e
[[ $rc_text == 0 ]] || { show_text; fail "vigil sym $pid (text): exit $rc_text"; }
if [[ $rc_json != 0 ]]; then
	LAST=json LAST_CMD="vigil sym $pid --json <FIFO" RC=$rc_json
	show_last
	fail "vigil sym $pid --json: exit $rc_json"
fi
vg_py "$T" "$a" "$b" <<'PY'
import os, sys
from symcheck import *
T, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
t0, t1, t2 = SymTruth(f"{T}/truth0"), SymTruth(f"{T}/truth1"), SymTruth(f"{T}/truth2")
res = check_sym_doc(load_json(f"{T}/json.out"), t0.pid, "sym --json <FIFO")
if eq("number of results", 3, len(res)):
    check_result(res[0], t0, "sym_leaf", "main program, before the dlopen",
                 nm_symbols(t0.syms["sym_leaf"]["path"]), input=f"{t0.syms['sym_leaf']['runtime']:#x}")
    for t, r, inp, what in ((t1, res[1], a, "libvgsym_a.so, dlopened"),
                            (t2, res[2], b, "libvgsym_b.so, dlopened after libvgsym_a.so's dlclose")):
        check_result(r, t, "libfn", what, nm_symbols(t.syms["libfn"]["path"]), input=inp)
done()
PY
echo "ok"
