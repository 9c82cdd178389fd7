#!/bin/bash
# permission: an unprivileged user observing a root process gets exit 3 and
# one line saying so (not a crash, not exit 1 or 2).
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root to start a target another user cannot read"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"

start_target tgt_globals_pie "$T/truth"
wait_truth "$T/truth" ready
pid=$(truth_get "$T/truth" pid)
rt=$(truth_sym "$T/truth" vg_magic runtime)

# The unprivileged user must be able to run vigil: a copy in a readable dir.
chmod 755 "$T"
cp "$VIGIL" "$T/vigil"
chmod 755 "$T/vigil"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
asnobody true 2>"$T/setpriv.err" || skip "setpriv cannot switch to uid 65534: $(cat "$T/setpriv.err")"

for args in "maps $pid" "read $pid $rt 8" "read $pid vg_magic 8"; do
	set +e
	# shellcheck disable=SC2086
	asnobody "$T/vigil" $args >"$T/perm.out" 2>"$T/perm.err"
	RC=$?
	set -e
	LAST=perm LAST_CMD="(as nobody) vigil $args"
	assert_rc 3
	assert_one_error_line
	# shellcheck disable=SC2086
	set +e
	asnobody "$T/vigil" $args --json >"$T/perm.out" 2>"$T/perm.err"
	RC=$?
	set -e
	LAST_CMD="(as nobody) vigil $args --json"
	assert_rc 3
	vg_py "$T/perm.out" <<'PY'
import sys
from vgcheck import *
check_error_doc(load_json(sys.argv[1]), 3)
done()
PY
done
echo "ok"
