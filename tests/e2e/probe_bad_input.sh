#!/bin/bash
# probe_bad_input: what `vigil probe` refuses, before arming anything, each
# with its exit code, one stderr line "vigil: error: ..." naming what is
# wrong, nothing on stdout, and with --json an error document with the same
# exit code: an unknown symbol, an address in no executable mapping (the
# target's [stack]), an unmapped address (0x10), a FILE:LINE of no file,
# no LOCATION, --args 7, --interval 0, --format without --stacks or
# unknown, --duration 0, 9 -o (exit 2); a dead PID (exit 4); as
# user nobody against a root target (exit 3).  The target's code is
# untouched afterwards.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_probe "$truth" count 1000
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

sleep 0 &
dead=$!
wait "$dead" || true
[[ ! -e /proc/$dead ]] || harness_error "pid $dead still exists"
stack=$(awk '$6 == "[stack]" { split($1, r, "-"); print "0x" r[1]; exit }' "/proc/$pid/maps")
[[ -n $stack ]] || harness_error "no [stack] line in /proc/$pid/maps"

# refuse NAME RC REGEX ARGS...  - see refuse_cmd in lib.sh.
refuse() { refuse_cmd probe 3000 "$@"; }

refuse unknown_symbol 2 "no_such_function_xyz" "$pid" no_such_function_xyz --duration 500
refuse stack_address 2 "$stack|executable|mapping" "$pid" "$stack" --duration 500
refuse unmapped 2 "0x10|mapping|mapped" "$pid" 0x10 --duration 500
refuse no_file_line 2 "nosuchfile\\.c" "$pid" nosuchfile.c:12 --duration 500
refuse no_location 2 "location" "$pid" --duration 500
refuse args_7 2 "args|7" "$pid" probe_counted --args 7 --duration 500
refuse interval_0 2 "interval" "$pid" probe_counted --interval 0 --duration 500
refuse dead 4 "$dead" "$dead" probe_counted --duration 500
refuse not_a_pid 2 "12ab" 12ab probe_counted --duration 500
refuse same_entry 2 "same function entry" "$pid" probe_counted probe_counted --latency --duration 500
# Without --latency too: 'f f f' counted every call three times.
refuse same_site 2 "probe the same instruction" "$pid" probe_counted probe_counted probe_counted --duration 500
refuse same_site_addr 2 "'probe_counted' and 'tgt_probe:probe_counted' probe the same instruction" "$pid" probe_counted tgt_probe:probe_counted --duration 500
refuse mid_instruction 2 "inside the instruction" "$pid" probe_counted+1 --duration 500
# --format writes the stacks: without --stacks, or an unknown one, refused.
refuse format_no_stacks 2 "add --stacks" "$pid" probe_counted --format folded --duration 500
refuse format_unknown 2 "^vigil: error: invalid --format 'flame': expected table, folded, pprof, speedscope, svg or json$" "$pid" probe_counted --stacks --format flame --duration 500
# The options probe shares with profile (cli/stack_opts.c), word for word.
refuse duration_0 2 "^vigil: error: invalid --duration '0': expected a duration from 1 ms to 31536000000 ms" "$pid" probe_counted --duration 0
outs=()
for i in $(seq 9); do outs+=(-o "$T/many$i.json"); done
refuse outputs_many 2 "^vigil: error: at most 8 -o$" "$pid" probe_counted "${outs[@]}" --duration 500

# Permission: as nobody against this root-owned target.
if [[ $(id -u) != 0 ]]; then
	echo "skip: permission case: needs root to start a target another user cannot observe"
elif ! command -v setpriv >/dev/null; then
	echo "skip: permission case: setpriv (util-linux) not installed"
else
	chmod 755 "$T"
	cp "$VIGIL" "$T/vigil"
	chmod 755 "$T/vigil"
	asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
	asnobody true 2>"$T/setpriv.err" || skip "setpriv cannot switch to uid 65534: $(cat "$T/setpriv.err")"
	for j in "" --json; do
		set +e
		# shellcheck disable=SC2086
		asnobody "$T/vigil" probe "$pid" probe_counted --duration 500 $j >"$T/perm.out" 2>"$T/perm.err"
		RC=$?
		set -e
		LAST=perm LAST_CMD="(as nobody) vigil probe $pid probe_counted --duration 500 $j"
		assert_rc 3
		if [[ -z $j ]]; then
			assert_one_error_line
			cp "$T/perm.err" "$T/perm_text.err"
		else
			vg_py "$T/perm.out" <<'PY' || { show_last; fail "$LAST_CMD: bad error document"; }
import sys
from vgcheck import *
check_error_doc(load_json(sys.argv[1]), 3)
done()
PY
		fi
	done
	echo "ok: as nobody: exit 3, $(head -c 160 "$T/perm_text.err")"
fi

# Nothing was armed: the target's code is as it was.
kill -USR1 "$pid"
wait_truth "$truth" done
kill -USR2 "$pid"
wait_truth "$truth" final
vg_py "$truth" <<'PY' || fail "the target's code changed"
import sys
from probecheck import *
t = ProbeTruth(sys.argv[1])
for fn, hx in t.code["code"].items():
    eq("probe_bad_input: " + fn + " code_final vs code", hx, t.code["code_final"].get(fn))
done()
PY
echo "ok"
