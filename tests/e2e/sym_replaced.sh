#!/bin/bash
# sym_replaced: the target's own executable is deleted and another binary
# (tgt_sym_alt: the same functions at other addresses, another build-id) is
# put at its path after it started.  `vigil sym` must answer from the mapped
# image (/proc/PID/map_files), not the file now at that path: exact
# functions, lines and inline chains for 0xRUNTIME, SYMBOL and @0xSTATIC,
# and a warning naming the file in JSON "warnings" (and on stderr in text
# mode).  A copy left alone, in a second target, gets no such warning.
source "$(dirname "$0")/lib.sh"

mkdir "$T/bin"
exe=$T/bin/tgt_vg_sym
keep=$T/bin/tgt_vg_keep
cp "$TARGETS/tgt_sym" "$exe"
cp "$TARGETS/tgt_sym" "$keep"
cp "$TARGETS/tgt_sym" "$T/original"
cmp -s "$TARGETS/tgt_sym" "$TARGETS/tgt_sym_alt" && harness_error "tgt_sym_alt is the same file as tgt_sym"

"$exe" "$T/truth" </dev/null &
track_pid $!
"$keep" "$T/truth_keep" </dev/null &
track_pid $!
wait_truth "$T/truth" ready
wait_truth "$T/truth_keep" ready
pid=$(truth_get "$T/truth" pid)
pid_keep=$(truth_get "$T/truth_keep" pid)

rm "$exe"
cp "$TARGETS/tgt_sym_alt" "$exe"
grep -qF "$exe (deleted)" "/proc/$pid/maps" || harness_error "/proc/$pid/maps does not show $exe (deleted)"

rt() { truth_sym "$T/truth" "$1" runtime; }
args=()
for n in sym_leaf sym_multi ret_call call_inline ret_inline; do args+=("$(rt "$n")"); done
vg json sym "$pid" "${args[@]}" sym_leaf "@$(truth_sym "$T/truth" call_inline static)" --json
assert_rc 0
vg text sym "$pid" "$(rt sym_leaf)"
assert_rc 0
vg keep sym "$pid_keep" "$(truth_sym "$T/truth_keep" sym_leaf runtime)" --json
assert_rc 0
# A question about libc only opens libc: the replaced executable is not
# read, so not warned about.  By name (every image opened) it is.
vg libc_named sym "$pid" libc.so.6:malloc --json
assert_rc 0
libc_addr=$(vg_py "$T/libc_named.out" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["results"][0]["address"])
PY
)
vg libc_addr sym "$pid" "$libc_addr" --json
assert_rc 0

vg_py "$T" "$exe" <<'PY'
import os, sys
from symcheck import *
T, exe = sys.argv[1], sys.argv[2]
truth = SymTruth(f"{T}/truth")
orig = f"{T}/original"
symtab = nm_symbols(orig)
names = ["sym_leaf", "sym_multi", "ret_call", "call_inline", "ret_inline"]
oracle = oracle_frames(orig, [truth.syms[n]["static"] for n in names])
orc = dict(zip(names, oracle)) if oracle else {}
for n in names:
    oracle_agrees(truth.frames[n], orc.get(n), n == "ret_inline", n)
eq("harness: the truth's path of the main program", exe, truth.syms["sym_leaf"]["path"])

doc = load_json(f"{T}/json.out")
res = check_sym_doc(doc, truth.pid, "sym (replaced binary)")
inputs = [f"{truth.syms[n]['runtime']:#x}" for n in names]
inputs += ["sym_leaf", f"@{truth.syms['call_inline']['static']:#x}"]
want = names + ["sym_leaf", "call_inline"]
if eq("number of results", len(want), len(res)):
    for n, inp, r in zip(want, inputs, res):
        check_result(r, truth, n, f"replaced binary, {inp}", symtab, input=inp,
                     tail_ok=(n == "ret_inline"), oracle=orc.get(n))
warns = doc.get("warnings") or []
check(any(isinstance(x, str) and os.path.basename(exe) in x for x in warns),
      f"JSON warnings must say that {exe} on disk is not the mapped file; warnings: {warns!r}")

named = load_json(f"{T}/libc_named.out")
byaddr = load_json(f"{T}/libc_addr.out")
nr, ar = named["results"][0], byaddr["results"][0]
eq("libc by address: the function named", "malloc", ar.get("symbol"))
for k in ("address", "image", "static_address", "symbol", "frames", "file", "line"):
    eq(f"libc by address: {k}, as by name", nr.get(k), ar.get(k))
nw = (named.get("warnings") or []) + ((named.get("process") or {}).get("warnings") or [])
aw = (byaddr.get("warnings") or []) + ((byaddr.get("process") or {}).get("warnings") or [])
check(any(os.path.basename(exe) in str(x) for x in nw),
      f"by name every image is opened: the replaced {exe} must be warned about; warnings: {nw!r}")
check(not any(os.path.basename(exe) in str(x) for x in aw),
      f"a libc address opens libc only: no warning about {exe}; warnings: {aw!r}")

kdoc = load_json(f"{T}/keep.out")
kw = (kdoc.get("warnings") or []) + ((kdoc.get("process") or {}).get("warnings") or [])
check(not any("tgt_vg_keep" in str(x) for x in kw),
      f"an unchanged executable must not be warned about; warnings: {kw!r}")
done()
PY

if ! grep -q '^vigil: warning: .*tgt_vg_sym' "$T/text.err"; then
	show_last
	fail "$LAST_CMD: no 'vigil: warning:' line on stderr naming the replaced $exe"
fi
grep -q 'sym_leaf' "$T/text.out" || { show_last; fail "$LAST_CMD: no sym_leaf in the answer"; }
# Into one pipe (2>&1) as on a terminal: the answer, then the warning.
"$VIGIL" sym "$pid" "$(rt sym_leaf)" 2>&1 </dev/null | cat >"$T/joined.out"
answer_at=$(grep -n 'sym_leaf' "$T/joined.out" | head -1 | cut -d: -f1)
warning_at=$(grep -n '^vigil: warning: .*tgt_vg_sym' "$T/joined.out" | head -1 | cut -d: -f1)
if [[ -z $answer_at || -z $warning_at || $answer_at -gt $warning_at ]]; then
	cat "$T/joined.out" >&2
	fail "vigil sym PID ADDR 2>&1 | cat: the answer (line ${answer_at:-none}) must come before the warning (line ${warning_at:-none})"
fi
echo "ok"
