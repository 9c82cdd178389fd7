#!/bin/bash
# bad_input: every malformed command line exits 2 with exactly one line
# "vigil: error: ..." on stderr and nothing on stdout; with --json the error is a
# JSON document on stdout.  Help and version exit 0.  (A positional word
# that is not a number is a process name: cli_target.sh; -p takes only a PID.)
source "$(dirname "$0")/lib.sh"

start_target tgt_globals_pie "$T/truth"
wait_truth "$T/truth" ready
pid=$(truth_get "$T/truth" pid)
rt=$(truth_sym "$T/truth" vg_magic runtime)

# One case per line: the arguments (word-split; no case needs spaces).
cases=(
	"nosuchcommand"
	"nosuchcommand $pid"
	"maps --bogus $pid"
	"maps"
	"maps -p abc"
	"maps -5"
	"maps 0"
	"maps 12abc"
	"maps ${pid}x"
	"maps 99999999999999999999"
	"maps $pid extra"
	"read $pid"
	"read --bogus $pid vg_magic"
	"read $pid 0xzz"
	"read $pid 0x"
	"read $pid @0xzz"
	"read $pid 0x10"
	"read $pid 0x10 8"
	"read $pid 0xffffffffffffffff 16"
	"read $pid 0x10000000000000000"
	"read $pid nosuchsymbol"
	"read $pid nosuchlib.so:vg_magic"
	"read $pid tgt_globals_pie:nosuchsymbol"
	"read $pid vg_magic+zz"
	"read $pid $rt 0"
	"read $pid vg_magic 0"
	"read $pid vg_magic 12q"
	"read $pid vg_magic -8"
	"read $pid vg_magic 99999999999999999999"
	"read $pid vg_magic 99999999999G"
	"read $pid vg_magic 8 --as u128"
	"read $pid vg_magic 8 --as"
	"read $pid vg_magic 8 extra"
)
bad=0
for c in "${cases[@]}"; do
	# shellcheck disable=SC2086
	vg bad $c
	n=$(wc -l <"$T/bad.err")
	if [[ $RC != 2 ]]; then
		echo "FAIL: vigil $c: exit $RC, expected 2; stderr: $(head -c 300 "$T/bad.err")" >&2
		bad=$((bad + 1))
	elif [[ $n != 1 ]] || ! head -n1 "$T/bad.err" | grep -q '^vigil: error: '; then
		echo "FAIL: vigil $c: stderr must be one line 'vigil: error: ...', got $n lines: $(head -c 300 "$T/bad.err")" >&2
		bad=$((bad + 1))
	elif [[ -s $T/bad.out ]]; then
		echo "FAIL: vigil $c: printed on stdout despite the error: $(head -c 200 "$T/bad.out")" >&2
		bad=$((bad + 1))
	fi
done
((bad == 0)) || fail "$bad of ${#cases[@]} bad command lines handled wrongly"
echo "ok: ${#cases[@]} bad command lines"

# Semantic errors with --json: the error is the JSON document on stdout.
json_cases=(
	"maps -p abc"
	"read $pid 0xzz"
	"read $pid 0x10"
	"read $pid nosuchsymbol"
	"read $pid vg_magic 0"
	"read $pid vg_magic 8 --as u128"
)
for c in "${json_cases[@]}"; do
	# shellcheck disable=SC2086
	vg badjson $c --json
	if [[ $RC != 2 ]]; then
		show_last
		fail "vigil $c --json: expected exit 2, got $RC"
	fi
	vg_py "$T/badjson.out" "$c" <<'PY'
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
check_error_doc(doc, 2, "vigil " + sys.argv[2] + " --json")
done()
PY
done
echo "ok: JSON errors"

# Help and version.
vg help --help
assert_rc 0
grep -q maps "$T/help.out" && grep -q read "$T/help.out" ||
	{ show_last; fail "vigil --help must list maps and read"; }
for cmd in read maps; do
	vg help_cmd help "$cmd"
	assert_rc 0
	grep -q "$cmd" "$T/help_cmd.out" || { show_last; fail "vigil help $cmd does not mention $cmd"; }
	vg help_opt "$cmd" --help
	assert_rc 0
	grep -q "$cmd" "$T/help_opt.out" || { show_last; fail "vigil $cmd --help does not mention $cmd"; }
done
vg maps_json maps "$pid" --json
assert_rc 0
version=$(jget "$T/maps_json.out" 'd["tool_version"]')
vg version --version
assert_rc 0
grep -qF "$version" "$T/version.out" ||
	{ show_last; fail "vigil --version does not print the tool_version $version"; }
echo "ok: help and version"
