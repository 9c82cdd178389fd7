#!/bin/bash
# sym_mntns: tgt_sym runs in its own mount namespace, from a path that does
# not exist outside it (a bind mount, then a tmpfs), and loads libvgsym_a.so
# from there too.  `vigil sym` must still give the exact function, line and
# inline chain for its addresses (0xRUNTIME, SYMBOL, @0xSTATIC) and for the
# library's function (IMAGE:SYMBOL too): the images are opened through
# /proc/PID/map_files or /proc/PID/root, never through the host's paths.
source "$(dirname "$0")/lib.sh"

require_mount_namespace

mkdir -p "$T/a" "$T/b" "$T/c"
cp "$TARGETS/tgt_sym" "$T/a/tgt_sym_ns"
cp "$TARGETS/libvgsym_a.so" "$T/a/libvgsym_ns.so"

# case 1: $T/a bound on $T/b; case 2: a tmpfs on $T/c holding both files.
unshare -m --propagation private sh -c \
	'mount --bind "$1" "$2" && exec "$2/tgt_sym_ns" "$3" now "$2/libvgsym_ns.so"' \
	sh "$T/a" "$T/b" "$T/truth_bind" </dev/null &
track_pid $!
unshare -m --propagation private sh -c \
	'mount -t tmpfs vgtmp "$1" && cp "$2/tgt_sym_ns" "$2/libvgsym_ns.so" "$1/" &&
	 exec "$1/tgt_sym_ns" "$3" now "$1/libvgsym_ns.so"' \
	sh "$T/c" "$T/a" "$T/truth_tmpfs" </dev/null &
track_pid $!

for case in bind tmpfs; do
	truth=$T/truth_$case
	wait_truth "$truth" lib1
	pid=$(truth_get "$truth" pid)
	exe=$(truth_sym "$truth" sym_leaf path)
	lib=$(truth_sym "$truth" libfn path)
	for f in "$exe" "$lib"; do
		[[ ! -e $f ]] || harness_error "$f is visible outside the target's mount namespace"
	done
	args=()
	for n in sym_leaf sym_multi ret_call call_inline ret_inline libfn; do
		args+=("$(truth_sym "$truth" "$n" runtime)")
	done
	vg "$case" sym "$pid" "${args[@]}" sym_leaf "@$(truth_sym "$truth" call_inline static)" \
		libvgsym_ns.so:vgsym_a_work --json
	assert_rc 0
	vg_py "$truth" "$T/$case.out" "$T/a" "$case" <<'PY'
import sys
from symcheck import *
truth, out, orig_dir, case = SymTruth(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
main_syms = nm_symbols(f"{orig_dir}/tgt_sym_ns")
lib_syms = nm_symbols(f"{orig_dir}/libvgsym_ns.so")
names = ["sym_leaf", "sym_multi", "ret_call", "call_inline", "ret_inline"]
oracle = oracle_frames(f"{orig_dir}/tgt_sym_ns", [truth.syms[n]["static"] for n in names])
orc = dict(zip(names, oracle)) if oracle else {}
for n in names:
    oracle_agrees(truth.frames[n], orc.get(n), n == "ret_inline", n)
res = check_sym_doc(load_json(out), truth.pid, f"{case}: sym")
want = [(n, f"{truth.syms[n]['runtime']:#x}") for n in names + ["libfn"]]
want += [("sym_leaf", "sym_leaf"), ("call_inline", f"@{truth.syms['call_inline']['static']:#x}"),
         ("libfn", "libvgsym_ns.so:vgsym_a_work")]
if eq(f"{case}: number of results", len(want), len(res)):
    for (n, inp), r in zip(want, res):
        check_result(r, truth, n, f"{case}: {inp}", lib_syms if n == "libfn" else main_syms,
                     input=inp, tail_ok=(n == "ret_inline"), oracle=orc.get(n))
done()
PY
	echo "ok: $case"
done
