#!/bin/bash
# watch_kinds: each kind of writer that tgt_watch kinds R runs R times, named
# for what it is at the line of the store: a register store (its values), an
# immediate store (0x1234abcd), a `lock add` (read_modify_write), a
# `rep movsb` into the buffer (string_store with its caveat) and a read(2)
# into the buffer (kernel_write, syscall read, at the line of the read()
# call).  One vigil run watches g_cell, the last 8 bytes of the rep movsb
# copy and (real breakpoints only) the last 8 bytes of the read(2) buffer.
# Uprobe emulation cannot show a write by the kernel (the trap is in the
# kernel) nor how many times a rep movsb traps per copy: the read(2) watch
# is then skipped and the rep movsb counted once per copy.
source "$(dirname "$0")/lib.sh"

R=${WATCH_R:-7}
truth=$T/truth
start_target tgt_watch "$truth" kinds "$R"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
watch_probe "$pid"
watch_env "$truth" reg,imm,lock rep

locs=(g_cell g_buf+56)
if [[ $WATCH_MODE == real ]]; then
	locs+=(g_rbuf+56)
else
	echo "skip: read(2) into the watched buffer: the kernel writes it, a uprobe cannot emulate that trap"
fi
vg_watch_start run watch "$pid" "${locs[@]}" --regs --duration 3000 --json
kill -USR1 "$pid"
wait_truth "$truth" done
vg_watch_wait 20
assert_rc 0 "vigil watch --duration 3000"

vg_py "$truth" "$R" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import os, sys
from watchcheck import *
T = os.environ["T"]
truth, R = WatchTruth(sys.argv[1]), int(sys.argv[2])
emu = MODE == "emulation"
w = "watch kinds"
doc = load_json(f"{T}/run.out")
obs = check_watch_header(doc, truth.pid, w)
eq(f"{w}: stop_reason", "duration", obs.get("stop_reason"))
eq(f"{w}: number of watches", 2 if emu else 3, len(doc.get("watches") or []))

# g_cell: R x (register store, immediate store, lock add), in this order.
cw = f"{w}: g_cell"
cell = the_watch(doc, cw, 0)
eq_addr(f"{cw}: runtime_va", truth.syms["g_cell"]["runtime"], hexint(cw, cell.get("runtime_va")))
eq(f"{cw}: accepted_hits", 3 * R, cell.get("accepted_hits"))
eq(f"{cw}: writes", 3 * R, cell.get("writes"))
eq(f"{cw}: traps", 3 * R, cell.get("traps"))
sites = cell.get("writer_sites") or []
eq(f"{cw}: number of writer sites", 3, len(sites))
reg = site_at_line(sites, truth.lines["reg"], cw + " register store")
check_site(reg, truth, "reg", f"{cw} register store", "store", hits=R, writes=R, function="vgw_store_reg", mnemonic="mov")
imm = site_at_line(sites, truth.lines["imm"], cw + " immediate store")
check_site(imm, truth, "imm", f"{cw} immediate store", "store", hits=R, writes=R, function="vgw_store_imm", mnemonic="mov")
lock = site_at_line(sites, truth.lines["lock"], cw + " lock add")
check_site(lock, truth, "lock", f"{cw} lock add", "read_modify_write", hits=R, writes=R,
           function="vgw_lock_add", mnemonic="lock add")
if reg:
    eq(f"{cw} register store: value_source", {"kind": "register_store", "register": "rax", "why": None},
       reg.get("value_source"))
if imm:
    vs = imm.get("value_source") or {}
    eq(f"{cw} immediate store: value_source.kind", "immediate_store", vs.get("kind"))
if lock:
    # The old contents are unknown; what lock add added (1) is known.
    vs = lock.get("value_source") or {}
    eq(f"{cw} lock add: value_source.kind", "add_immediate", vs.get("kind"))
samples = cell.get("samples") or []
eq(f"{cw}: number of samples", 3 * R, len(samples))
by_site = {s.get("site"): n for s, n in ((reg, "reg"), (imm, "imm"), (lock, "lock")) if s}
eq_list(f"{cw}: writers in time order", ["reg", "imm", "lock"] * R,
        [by_site.get(s.get("site"), s.get("site")) for s in samples])
first = int(truth.one("kinds_reg").split()[1], 16)
eq_list(f"{cw}: register store values", [first + i for i in range(R)],
        values_of([s for s in samples if by_site.get(s.get("site")) == "reg"], cw + " reg",
                  kind="register_store", register="rax"))
eq_list(f"{cw}: immediate store values", [0x1234abcd] * R,
        values_of([s for s in samples if by_site.get(s.get("site")) == "imm"], cw + " imm",
                  kind="immediate_store", register=None))
eq_list(f"{cw}: lock add deltas", ["+1"] * R,
        [(s.get("value") or {}).get("delta") for s in samples if by_site.get(s.get("site")) == "lock"])
values_of([s for s in samples if by_site.get(s.get("site")) == "lock"], cw + " lock", kind="add_immediate")
eq(f"{cw}: latest_value", truth.one("g_cell"), cell.get("latest_value"))

# rep movsb of 64 bytes into g_buf: the watch covers its last 8 bytes.
bw = f"{w}: g_buf+56"
buf = the_watch(doc, bw, 1)
eq_addr(f"{bw}: runtime_va", truth.syms["g_buf"]["runtime"] + 56, hexint(bw, buf.get("runtime_va")))
sites = buf.get("writer_sites") or []
eq(f"{bw}: number of writer sites", 1, len(sites))
rep = site_at_line(sites, truth.lines["rep"], bw + " rep movsb")
# Real hardware traps once per iteration over the 8 watched bytes (the IP
# on the rep instruction while iterations remain): 8 traps, one write.
check_site(rep, truth, "rep", f"{bw} rep movsb", "string_store", function="vgw_rep_movsb",
           mnemonic="rep movsb", hits=R if emu else 8 * R, writes=R, trap_at_writer=not emu)
if rep:
    c = rep.get("caveat")
    check(isinstance(c, str) and c, f"{bw} rep movsb: caveat must be a sentence, got {c!r}")
    eq(f"{bw} rep movsb: value_source.kind", "unknown", (rep.get("value_source") or {}).get("kind"))
eq(f"{bw}: writes (one per copy)", R, buf.get("writes"))
bs = buf.get("samples") or []
eq(f"{bw}: one sample per copy", R, len(bs))
if emu:
    eq(f"{bw}: traps (one uprobe hit per copy)", R, buf.get("traps"))
    print("skip: traps per rep movsb copy: a uprobe fires once per instruction; checked: one hit per copy")
else:
    eq(f"{bw}: traps (one per iteration over the watched bytes)", 8 * R, buf.get("traps"))
    eq_list(f"{bw}: traps of each copy", [8] * R, [s.get("traps") for s in bs])
eq(f"{bw}: latest_value", "0x" + "77" * 8, buf.get("latest_value"))

if not emu:
    rw = f"{w}: g_rbuf+56 (read(2))"
    rb = the_watch(doc, rw, 2)
    sites = rb.get("writer_sites") or []
    eq(f"{rw}: number of writer sites", 1, len(sites))
    k = site_at_line(sites, truth.lines["read"], rw)
    if k:
        eq(f"{rw}: kind", "kernel_write", k.get("kind"))
        eq(f"{rw}: syscall", {"name": "read", "number": 0}, k.get("syscall"))
        f = k.get("file")
        check(isinstance(f, str) and f.endswith("tgt_watch.c"), f"{rw}: file {f!r} must end with tgt_watch.c")
        eq(f"{rw}: function (the caller of read)", "vgw_read", k.get("function"))
        eq(f"{rw}: confidence", "exact", k.get("confidence"))
    # One write per read(2), however many bytes the kernel's copy trapped on.
    eq(f"{rw}: writes (one per read)", R, rb.get("writes"))
    eq(f"{rw}: samples (one per read)", R, len(rb.get("samples") or []))
    hits = rb.get("traps")
    check(isinstance(hits, int) and R <= hits <= 8 * R, f"{rw}: traps {hits!r} not in [{R}, {8 * R}]")
    eq(f"{rw}: latest_value", "0x" + "77" * 8, rb.get("latest_value"))
done()
print(f"ok: register, immediate, lock add, rep movsb{'' if emu else ', read(2)'} x {R} ({MODE})")
PY
