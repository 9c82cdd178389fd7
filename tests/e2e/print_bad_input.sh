#!/bin/bash
# print_bad_input: every malformed or unusable expression gets one error
# line that names the failing part and a documented exit code (2: bad
# expression; 1: a null or unreadable pointer on the way, or no byte of
# the value readable; 4: no such process), nothing on stdout, and the same
# as a JSON error document with --json.
source "$(dirname "$0")/lib.sh"

truth=$T/print.truth
start_target tgt_print "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

n=0
while IFS='|' read -r rc expr msg; do
	n=$((n + 1))
	vg "b$n" print "$pid" -- "$expr"
	assert_rc "$rc"
	assert_one_error_line
	grep -qF -- "$msg" "$T/b$n.err" || { show_last; fail "$LAST_CMD: the error must say: $msg"; }
	if [[ $rc == 2 ]]; then
		[[ ! -s $T/b$n.out ]] || { show_last; fail "$LAST_CMD: output on stdout despite the error"; }
	fi
	vg "j$n" print "$pid" --json -- "$expr"
	assert_rc "$rc"
	vg_py "$T/j$n.out" "$rc" "$msg" <<'PY'
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
if int(sys.argv[2]) == 2:
    check_error_doc(doc, 2)
    check(sys.argv[3] in doc["error"]["message"], f"message {doc['error']['message']!r}")
elif "error" in doc:
    check_error_doc(doc, 1)
    check(sys.argv[3] in doc["error"]["message"], f"message {doc['error']['message']!r}")
else:
    # Printed as far as it could be read: every byte marked unreadable.
    r = get(doc, "results")[0]
    eq("bytes_read", 0, r["bytes_read"])
    check(r["bytes_unreadable"] > 0, "bytes_unreadable")
done()
PY
done <<'EOF2'
2|g_nope|g_nope: no global or static variable 'g_nope'
2|g_config.limtis|g_config.limtis: struct config has no member 'limtis'; did you mean 'limits'?
2|g_head->nxt|struct node has no member 'nxt'; did you mean 'next'?
2|g_config.|g_config.: syntax error at the end: expected a member name after '.'
2|g_table[1|expected ']'
2|g_static|'g_static' is defined in 2 source files
2|nope.c:g_static|no global or static variable 'g_static' in source file 'nope.c'
2|g_config->port|g_config is a struct config, not a pointer; use '.'
2|g_head.id|g_head is a struct node *, not a struct or union; use '->'
2|(struct nope *)0|no type 'struct nope'
2|*g_config.greeting + g_config|arithmetic needs numbers or pointers
2|g_zeros[1] / 0|division by zero
2|*(void *)g_head|void pointer; cast it first
1|g_head->next->next->next->id|null pointer g_head->next->next->next (read at 0x
1|*g_gone|none of the 16 bytes at
EOF2

# An unreadable value prints what it is before the error.
vg gone print "$pid" '*g_gone'
assert_rc 1
assert_eq "$LAST_CMD" '*g_gone = {a = <unreadable>, b = <unreadable>}' "$(cat "$T/gone.out")"

# A stripped copy: the symbol is there, the types are not.
cp "$TARGETS/tgt_print" "$T/stripped"
strip --strip-debug "$T/stripped"
"$T/stripped" "$T/stripped.truth" </dev/null &
track_pid $!
wait_truth "$T/stripped.truth" ready
spid=$(truth_get "$T/stripped.truth" pid)
vg stripped print "$spid" g_config
assert_rc 2
assert_one_error_line
grep -q "'g_config' is a symbol of .*stripped, which has no debug info" "$T/stripped.err" ||
	{ show_last; fail "$LAST_CMD: the error must say the image has no debug info"; }

# A --tid that is not a thread of the process.
vg badtid print "$pid" g_tls --tid 1
assert_rc 2
assert_one_error_line
grep -q "thread 1 is not a thread of pid $pid" "$T/badtid.err" || { show_last; fail "$LAST_CMD: must name the thread"; }
vg badtid2 print "$pid" g_tls --tid x
assert_rc 2
assert_one_error_line

# Usage errors.
vg noexpr print "$pid"
assert_rc 2
assert_one_error_line
vg baddepth print "$pid" g_color --depth x
assert_rc 2
assert_one_error_line
vg badmax print "$pid" g_color --max-elements -1
assert_rc 2
assert_one_error_line
# A syntax error is found before the target is looked at.
vg syntax_nopid print 999999999 'a b'
assert_rc 2
grep -q 'syntax error' "$T/syntax_nopid.err" || { show_last; fail "$LAST_CMD: syntax first"; }
vg gone_pid print 999999999 g_color
assert_rc 4
assert_one_error_line
echo "ok: $n bad expressions"
