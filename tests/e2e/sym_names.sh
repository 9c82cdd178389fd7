#!/bin/bash
# sym_names: the names vigil prints.
#  - a frame named from DWARF by a C asm alias takes the public name of the
#    ELF symbol at the same entry: sigaltstack, not __GI_sigaltstack;
#    clock_gettime, not __GI___clock_gettime (libc6-dbg's DWARF);
#  - every function name printed for 300 libc addresses is accepted back
#    as input, and (but for IFUNCs, which name the selected implementation)
#    resolves into that function: a GCC clone's DWARF name (ptmalloc_init
#    for ptmalloc_init.part.0), a static one such as
#    __futex_abstimed_wait_common only in libc6-dbg's .symtab;
#  - --no-demangle prints linkage names: no frame of tgt_cxx is a
#    demangled or DW_AT_name-only name ("operator()");
#  - the missing-debug-info note is one readable sentence per image, once
#    in the table (build-id, what was tried, debuginfod), with no "\012".
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_images "$truth" bss
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
libc=/lib/x86_64-linux-gnu/libc.so.6
bid=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
[[ -f /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] || skip "libc6-dbg is not installed (scripts/install-deps.sh)"

vg alias sym "$pid" sigaltstack clock_gettime --json
assert_rc 0
# 300 instruction starts in libc's functions, then their names fed back.
objdump -d --no-show-raw-insn "$libc" | awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print $1 }' |
	awk 'NR % 997 == 0' | head -300 >"$T/libc.static"
base=$(awk -v p="$(realpath $libc)" '$6 == p && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$pid/maps")
[[ -n $base ]] || harness_error "libc not found in /proc/$pid/maps"
while read -r s; do printf '0x%x\n' $((0x$base + 0x$s)); done <"$T/libc.static" >"$T/libc.addrs"
LAST=libc LAST_CMD="vigil sym $pid --json < libc.addrs"
"$VIGIL" sym "$pid" --json <"$T/libc.addrs" >"$T/libc.out" 2>"$T/libc.err" || { show_last; fail "$LAST_CMD"; }
"$PYTHON" -S -c '
import json, sys
names = set()
for r in json.load(open(sys.argv[1]))["results"]:
    for f in r["frames"]:
        if not f["inlined"] and f["function"]:
            names.add(f["function"])
print("\n".join(sorted(names)))' "$T/libc.out" >"$T/names.in"
LAST=back LAST_CMD="vigil sym $pid --json < names.in"
set +e
"$VIGIL" sym "$pid" --json <"$T/names.in" >"$T/back.out" 2>"$T/back.err"
RC=$?
set -e
vg cxx sym --bin "$TARGETS/tgt_cxx" --no-demangle --json @0x0 \
	$(nm --defined-only "$TARGETS/tgt_cxx" | awk '$2 ~ /[tT]/ && $3 ~ /^_Z/ { print "@0x" $1 }' | sort -u)
# The note: /usr/bin/sleep has no debug info here (no coreutils-dbgsym).
sleep 30 &
track_pid $!
spid=$!
# Until the child has exec'd sleep (a fixed 0.2 s was a guess).
for ((i = 0; i < 500; i++)); do
	sbase=$(awk '$6 == "/usr/bin/sleep" && $2 ~ /x/ { split($1, a, "-"); print a[1]; exit }' "/proc/$spid/maps")
	[[ -z $sbase ]] || break
	sleep 0.01
done
[[ -n $sbase ]] || harness_error "/usr/bin/sleep not mapped in pid $spid within 5 s"
DEBUGINFOD_URLS= vg note sym "$spid" "0x$sbase" "$(printf '0x%x' $((0x$sbase + 0x40)))"

vg_py "$RC" <<'PY' || { show_last; fail "names printed by vigil sym: see above"; }
import os, sys
from vgcheck import *
T, rc = os.environ["T"], int(sys.argv[1])
res = get(load_json(f"{T}/alias.out"), "results")
for r, want in zip(res, ("sigaltstack", "clock_gettime")):
    eq(f"{want}: outer frame", want, (r.get("frames") or [{}])[-1].get("function"))
back = get(load_json(f"{T}/back.out"), "results")
bad = [r.get("input") + ": " + str(r.get("error")) for r in back if r.get("error")]
check(not bad, f"{len(bad)} of {len(back)} printed names not accepted back: {bad[:5]}")
# An IFUNC name (memcpy) resolves to the implementation the process
# selected (__memcpy_avx512_unaligned_erms): allowed, rare.
other = []
for r in back:
    if not r.get("error"):
        fr = [f for f in r.get("frames") or [] if not f.get("inlined")]
        if not (fr and fr[-1].get("function") == r.get("input")):
            other.append(f"{r.get('input')} -> {fr[-1].get('function') if fr else None}")
check(len(other) <= len(back) // 20, f"{len(other)} names resolve into another function: {other[:5]}")
eq("exit of the names fed back", 0, rc)
names = [f.get("function") or "" for r in get(load_json(f"{T}/cxx.out"), "results") for f in r.get("frames") or []]
bad = [n for n in names if "::" in n or "(" in n or " " in n]
check(names and not bad, f"--no-demangle: {len(bad)} demangled names, e.g. {bad[:3]}")
note = open(f"{T}/note.out").read()
lines = [l for l in note.splitlines() if "no debug info for" in l]
eq("note lines for /usr/bin/sleep (once per image)", 1, len(lines))
if lines:
    l = lines[0]
    check("\\012" not in l, f"note has an escaped newline: {l}")
    check("build-id" in l and "tried" in l and "debuginfod" in l, f"note: {l}")
print(f"{len(back)} names fed back, {len(names)} --no-demangle frames")
done()
PY
echo ok
