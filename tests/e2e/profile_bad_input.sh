#!/bin/bash
# profile_bad_input: what `vigil profile` refuses, each with its exit code
# (2 bad input, 3 permission, 4 dead PID), one stderr line
# "vigil: error: ..." naming what is wrong, nothing on stdout, and with
# --json an error document with the same exit code: a dead PID, a PID that
# is not a number, --freq 0 / abc, --format flame, --unwind lbr, --event
# bogus, --duration -5 / 1.5ms / 2x, --tid 0, 65 --tid, 9 -o; --every's
# misuses (below); as user nobody against a root target: exit 3;
# --event cycles without a hardware PMU: exit 3 naming cpu-clock.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_profile "$truth" split
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

sleep 0 &
dead=$!
wait "$dead" || true
[[ ! -e /proc/$dead ]] || harness_error "pid $dead still exists"

# refuse NAME RC REGEX ARGS...  - see refuse_cmd in lib.sh.
refuse() { refuse_cmd profile 2000 "$@"; }

refuse dead 4 "$dead" "$dead" --duration 500
refuse not_a_pid 2 "12ab" 12ab --duration 500
refuse freq_zero 2 "freq" "$pid" --freq 0 --duration 500
refuse freq_text 2 "freq" "$pid" --freq abc --duration 500
refuse format 2 "format|flame" "$pid" --format flame --duration 500
refuse unwind 2 "unwind|lbr" "$pid" --unwind lbr --duration 500
refuse event 2 "event|bogus" "$pid" --event bogus --duration 500
refuse duration 2 "duration|-5" "$pid" --duration -5
refuse duration_submilli 2 "invalid --duration '1.5ms'" "$pid" --duration 1.5ms
refuse duration_unit 2 "invalid --duration '2x'" "$pid" --duration 2x
refuse duration_u64max 2 "invalid --duration '18446744073709551615'" "$pid" --duration 18446744073709551615
# The options profile shares with probe and stack (cli/stack_opts.c), word
# for word, with profile's own limits: 64 --tid, 8 -o.
refuse tid_zero 2 "^vigil: error: invalid --tid '0': expected a thread id$" "$pid" --tid 0 --duration 500
tids=()
for _ in $(seq 65); do tids+=(--tid "$pid"); done
refuse tid_many 2 "^vigil: error: at most 64 --tid$" "$pid" "${tids[@]}" --duration 500
outs=()
for i in $(seq 9); do outs+=(-o "$T/many$i.svg"); done
refuse outputs_many 2 "^vigil: error: at most 8 -o$" "$pid" "${outs[@]}" --duration 500
refuse format_exact 2 "^vigil: error: invalid --format 'flame': expected table, folded, pprof, speedscope, svg or json$" "$pid" --format flame --duration 500
# Continuous mode (--every): a period under 1 s, a plain -o file (one
# name for every period), the JSON report, --push/--keep/--label without
# what they need, a URL that is not http(s), a label that is not K=V.
refuse every_short 2 "invalid --every '500ms'" "$pid" --every 500ms --duration 2s
refuse every_plain_o 2 "must be a directory or a strftime pattern" "$pid" --every 1s -o "$T/one.pb.gz"
refuse every_json 2 "not the JSON report" "$pid" --every 1s -o "$T/j-%S.json"
refuse push_alone 2 "--push needs --every" "$pid" --push http://127.0.0.1:9 --duration 500
refuse keep_alone 2 "--keep needs --every" "$pid" --keep 3 --duration 500
refuse label_no_push 2 "--label needs --push" "$pid" --every 1s --label a=b
refuse push_scheme 2 "invalid --push 'ftp://x'" "$pid" --every 1s --push ftp://x
refuse push_label 2 "invalid --label 'a'" "$pid" --every 1s --push http://127.0.0.1:9 --label a
# A hardware event where there is no PMU (most VMs, this one): exit 3 with
# the remedy, before any sampling.  Where perf itself can count cycles,
# vigil must sample them.
if perf stat -e cycles -x, true >/dev/null 2>&1 &&
   ! perf stat -e cycles -x, true 2>&1 | grep -q 'not supported'; then
	vg cycles profile "$pid" --event cycles --duration 300
	assert_rc 0
	echo "ok: cycles: a PMU here, vigil samples them"
else
	refuse cycles 3 "no hardware PMU.*--event cpu-clock" "$pid" --event cycles --duration 500
fi

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
		asnobody "$T/vigil" profile "$pid" --duration 500 $j >"$T/perm.out" 2>"$T/perm.err"
		RC=$?
		set -e
		LAST=perm LAST_CMD="(as nobody) vigil profile $pid --duration 500 $j"
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
echo "ok"
