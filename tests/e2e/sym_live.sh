#!/bin/bash
# sym_live: `vigil sym PID` on tgt_sym (-O2 -g), for addresses the target
# reports about itself (see tests/targets/tgt_sym.c): &function gives the
# function, offset 0 and the line of its first statement; a return address
# gives the caller and the line of the call; a call made inside two inlined
# helpers gives the whole chain (inner inlined, outer inlined, function).
# Every ADDR form (0xRUNTIME, SYMBOL, IMAGE:SYMBOL+OFF, @0xSTATIC), the text
# output, stdin mode (input order, a malformed line answered with an error
# and exit 2 after the others), and an address in the padding between two
# functions (no symbol, the one before as nearest_symbol).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_sym "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
bin=$(truth_sym "$truth" sym_leaf path)
rt() { truth_sym "$truth" "$1" runtime; }
st() { truth_sym "$truth" "$1" static; }

# vg_in NAME INPUT ARGS...  - like vg, with INPUT (a string) on stdin.
vg_in() {
	local name=$1 input=$2
	shift 2
	LAST=$name
	LAST_CMD="printf '${input//$'\n'/\\n}' | vigil $*"
	set +e
	printf '%s' "$input" | "$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
	set -e
}

# assert_order FILE WORD...  - each WORD occurs in FILE, in this order.
assert_order() {
	local file=$1
	shift
	vg_py "$file" "$@" <<'PY' || { show_last; fail "$LAST_CMD: answers not in input order"; }
import sys
text = open(sys.argv[1]).read()
pos = 0
for word in sys.argv[2:]:
    i = text.find(word, pos)
    if i < 0:
        sys.exit(f"FAIL: '{word}' missing after offset {pos} of the output")
    pos = i + len(word)
PY
}

# assert_has FILE REGEX...  - every REGEX (grep -E) matches FILE.
assert_has() {
	local file=$1 re
	shift
	for re in "$@"; do
		if ! grep -Eq -- "$re" "$file"; then
			show_last
			fail "$LAST_CMD: output does not match /$re/"
		fi
	done
}

all="sym_leaf sym_multi ret_call call_inline ret_inline"
args=()
for n in $all; do args+=("$(rt "$n")"); done
vg rt sym "$pid" "${args[@]}" --json
assert_rc 0

caller=$(nm "$bin" | awk '$3 == "sym_caller" { print $1 }')
[[ -n $caller ]] || harness_error "nm finds no sym_caller in $bin"
off=$(printf '0x%x' $(($(st ret_call) - 0x$caller)))
vg forms sym "$pid" sym_leaf "tgt_sym:sym_multi" "sym_caller+$off" "@$(st call_inline)" --json
assert_rc 0

vg_py "$truth" "$bin" "$off" <<'PY'
import os, sys
from symcheck import *
truth, binary, off = SymTruth(sys.argv[1]), sys.argv[2], sys.argv[3]
T = os.environ["T"]
symtab = nm_symbols(binary)
names = ["sym_leaf", "sym_multi", "ret_call", "call_inline", "ret_inline"]
oracle = oracle_frames(binary, [truth.syms[n]["static"] for n in names])
orc = dict(zip(names, oracle)) if oracle else {}
for n in names:
    oracle_agrees(truth.frames[n], orc.get(n), n == "ret_inline", n)

doc = load_json(f"{T}/rt.out")
res = check_sym_doc(doc, truth.pid, "sym 0xRUNTIME...")
if eq("sym 0xRUNTIME...: number of results", len(names), len(res)):
    for n, r in zip(names, res):
        check_result(r, truth, n, "sym 0xRUNTIME", symtab, input=f"{truth.syms[n]['runtime']:#x}",
                     tail_ok=(n == "ret_inline"), oracle=orc.get(n))
    for n in ("sym_leaf", "sym_multi"):
        r = res[names.index(n)]
        eq(f"&{n}: offset", "0x0", r.get("offset"))
        eq_addr(f"&{n}: symbol_address is &{n}", truth.syms[n]["runtime"],
                addr("symbol_address", r.get("symbol_address")))

doc = load_json(f"{T}/forms.out")
res = check_sym_doc(doc, truth.pid, "sym by symbol")
forms = [("sym_leaf", "sym_leaf"), ("sym_multi", "tgt_sym:sym_multi"),
         ("ret_call", f"sym_caller+{off}"), ("call_inline", f"@{truth.syms['call_inline']['static']:#x}")]
if eq("sym by symbol: number of results", len(forms), len(res)):
    for (n, inp), r in zip(forms, res):
        check_result(r, truth, n, f"sym {inp}", symtab, input=inp, oracle=orc.get(n))
done()
PY
echo "ok: json (0xRUNTIME, SYMBOL, IMAGE:SYMBOL, SYMBOL+OFF, @0xSTATIC)"

# Text: the function and file:line of every frame, innermost first.
vg text sym "$pid" "$(rt sym_leaf)" "$(rt call_inline)"
assert_rc 0
line() { truth_get "$truth" "frame $1 $2" | cut -d' ' -f3; }
assert_has "$T/text.out" "sym_leaf" "tgt_sym\.c:$(line sym_leaf 0)([^0-9]|$)" \
	"tgt_sym\.c:$(line call_inline 0)([^0-9]|$)" "tgt_sym\.c:$(line call_inline 1)([^0-9]|$)" \
	"tgt_sym\.c:$(line call_inline 2)([^0-9]|$)"
assert_order "$T/text.out" sym_leaf "tgt_sym.c:$(line sym_leaf 0)" sym_inl_inner \
	"tgt_sym.c:$(line call_inline 0)" sym_inl_outer "tgt_sym.c:$(line call_inline 1)" \
	sym_outer "tgt_sym.c:$(line call_inline 2)"
echo "ok: text"

# Bad ADDR argument: exit 2 before any output.
vg badarg sym "$pid" "$(rt sym_leaf)" 0x12zz
assert_rc 2
assert_one_error_line
[[ ! -s $T/badarg.out ]] || { show_last; fail "$LAST_CMD: output before the exit-2 error"; }
echo "ok: bad ADDR argument"

# stdin: one answer per input line, in input order.
leaf=$(rt sym_leaf) multi=$(rt sym_multi) call=$(rt ret_call)
input="$leaf"$'\n'"$multi"$'\n'"$call"$'\n'
vg_in stdin_text "$input" sym "$pid"
assert_rc 0
assert_order "$T/stdin_text.out" sym_leaf sym_multi sym_caller
vg_in stdin_json "$input" sym "$pid" --json
assert_rc 0
bad="$leaf"$'\n'"0x12zz"$'\n'"$multi"$'\n'
vg_in stdin_bad_text "$bad" sym "$pid"
assert_rc 2 "a malformed stdin line: exit 2"
assert_order "$T/stdin_bad_text.out" sym_leaf sym_multi
vg_in stdin_bad_json "$bad" sym "$pid" --json
assert_rc 2 "a malformed stdin line (--json): exit 2"
vg_py "$truth" "$bin" <<'PY'
import os, sys
from symcheck import *
truth, binary = SymTruth(sys.argv[1]), sys.argv[2]
T = os.environ["T"]
symtab = nm_symbols(binary)
hx = lambda n: f"{truth.syms[n]['runtime']:#x}"
res = check_sym_doc(load_json(f"{T}/stdin_json.out"), truth.pid, "stdin")
want = [("sym_leaf", hx("sym_leaf")), ("sym_multi", hx("sym_multi")), ("ret_call", hx("ret_call"))]
if eq("stdin: number of results", 3, len(res)):
    for (n, inp), r in zip(want, res):
        check_result(r, truth, n, "stdin", symtab, input=inp)
res = check_sym_doc(load_json(f"{T}/stdin_bad_json.out"),
                    truth.pid, "stdin with a malformed line")
if eq("stdin with a malformed line: number of results", 3, len(res)):
    check_result(res[0], truth, "sym_leaf", "stdin, line 1 of 3", symtab, input=hx("sym_leaf"))
    check_result(res[2], truth, "sym_multi", "stdin, line 3 of 3", symtab, input=hx("sym_multi"))
    eq("stdin, malformed line 2: input", "0x12zz", res[1].get("input"))
    e = res[1].get("error")
    check(isinstance(e, str) and e, f"stdin, malformed line 2: error must be a sentence, got {e!r}")
    eq("stdin, malformed line 2: symbol", None, res[1].get("symbol"))
done()
PY
echo "ok: stdin"

# Padding: the first byte after a function that no symbol covers.
pad=$(vg_py "$bin" <<'PY'
import sys
from symcheck import *
p = padding_address(sys.argv[1], ["sym_leaf", "sym_multi", "sym_callee", "sym_caller", "sym_probe", "sym_outer"])
print("" if p is None else f"{p[0]:#x} {p[1]} {p[2]:#x}")
PY
)
if [[ -z $pad ]]; then
	echo "note: gcc left no padding after the sym_* functions; padding not checked"
else
	read -r pad_st pad_fn pad_off <<<"$pad"
	bias=$(awk '$1 == "obj" && $2 == "main" { print $3 }' "$truth")
	pad_rt=$(printf '0x%x' $((bias + pad_st)))
	vg pad sym "$pid" "$pad_rt" --json
	assert_rc 0
	vg_py "$truth" "$pad_rt" "$pad_fn" "$pad_off" <<'PY'
import os, sys
from symcheck import *
truth, a, fn, off = SymTruth(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
res = check_sym_doc(load_json(os.environ["T"] + "/pad.out"), truth.pid, "padding")
w = f"padding {a} (the byte after {fn})"
if eq(f"{w}: number of results", 1, len(res)):
    r = res[0]
    eq(f"{w}: address", a, r.get("address"))
    eq(f"{w}: error", None, r.get("error"))
    eq(f"{w}: symbol", None, r.get("symbol"))
    eq(f"{w}: nearest_symbol", {"name": fn, "offset": off}, r.get("nearest_symbol"))
    fr = r.get("frames")
    check(isinstance(fr, list) and not any(f.get("function") for f in fr),
          f"{w}: no frame may name a function, got {fr!r}")
    check(isinstance(r.get("why"), str) and r.get("why"), f"{w}: why must say why there is no symbol, got {r.get('why')!r}")
done()
PY
	echo "ok: padding $pad_rt after $pad_fn"
fi

# stdin takes plain hex too, as `perf script -F ip` prints it (right-aligned
# in 16 columns, no 0x: the example of `vigil sym --help`).
input=$(printf '%16s\n%16s\n' "${leaf#0x}" "${call#0x}")$'\n'
vg_in stdin_plain "$input" sym "$pid" --json
assert_rc 0 "plain hex on stdin (perf script -F ip)"
vg_py "$truth" "$bin" <<'PY'
import os, sys
from symcheck import *
truth, binary = SymTruth(sys.argv[1]), sys.argv[2]
symtab = nm_symbols(binary)
res = check_sym_doc(load_json(os.environ["T"] + "/stdin_plain.out"), truth.pid, "stdin plain hex")
if eq("stdin plain hex: number of results", 2, len(res)):
    check_result(res[0], truth, "sym_leaf", "stdin plain hex", symtab)
    check_result(res[1], truth, "ret_call", "stdin plain hex", symtab)
done()
PY
echo "ok: stdin plain hex"
