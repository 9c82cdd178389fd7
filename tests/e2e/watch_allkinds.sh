#!/bin/bash
# watch_allkinds: every kind of write of the recorded hardware traces
# (storekinds.c) into one watched cell, R times each (tgt_watch allkinds):
# 18 instruction kinds, each at its own line, must each be one exact writer
# site with R writes; a rep movsb/stosb over the cell is 8 traps per write
# on real hardware (one under the emulation, which traps once after any
# instruction).  Real breakpoints only: libc's memcpy/memset (sites in libc,
# R writes each), read(2) (a kernel_write of read at the caller's line, one
# write per call) and the vDSO's clock_gettime (named, R writes).
source "$(dirname "$0")/lib.sh"

R=${WATCH_R:-3}
truth=$T/truth
start_target tgt_watch "$truth" allkinds "$R"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
watch_probe "$pid"
kinds=(mov_reg mov_imm mov_byte_mid straddle lock_add add_reg inc bts xchg cmpxchg setcc pop_mem
	movnti sse_store stosq rep_movsb rep_movsq rep_stosb)
group=$(printf 'k_%s,' "${kinds[@]}")
watch_env "$truth" "${group%,}"
[[ $WATCH_MODE == real ]] ||
	echo "skip: libc memcpy/memset, read(2) and the vDSO: the emulation has no uprobe site for them"
vg_watch_start run watch "$pid" g_area+56 --duration 3000 --json
kill -USR1 "$pid"
wait_truth "$truth" done
vg_watch_wait 20
assert_rc 0 "vigil watch --duration 3000"

vg_py "$truth" "$R" "${kinds[@]}" <<'PY' || { show_last; fail "$LAST_CMD: report differs (above)"; }
import os, sys
from watchcheck import *
T = os.environ["T"]
truth, R, kinds = WatchTruth(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
emu = MODE == "emulation"
w = "watch allkinds"
doc = load_json(f"{T}/run.out")
obs = check_watch_header(doc, truth.pid, w)
cell = the_watch(doc, w, 0)
eq_addr(f"{w}: runtime_va", truth.syms["g_area"]["runtime"] + 56, hexint(w, cell.get("runtime_va")))
sites = cell.get("writer_sites") or []
want = {  # kind, mnemonic (contained), traps per write on real hardware
    "mov_reg": ("store", "mov", 1), "mov_imm": ("store", "mov", 1),
    "mov_byte_mid": ("store", "mov", 1), "straddle": ("store", "mov", 1),
    "lock_add": ("read_modify_write", "lock add", 1), "add_reg": ("read_modify_write", "add", 1),
    "inc": ("read_modify_write", "inc", 1), "bts": ("read_modify_write", "bts", 1),
    "xchg": ("read_modify_write", "xchg", 1), "cmpxchg": ("read_modify_write", "lock cmpxchg", 1),
    "setcc": ("store", "setl", 1), "pop_mem": ("other_write", "pop", 1),
    "movnti": ("store", "movnti", 1), "sse_store": ("vector_store", "movdqu", 1),
    "stosq": ("string_store", "stosq", 1), "rep_movsb": ("string_store", "rep movsb", 8),
    "rep_movsq": ("string_store", "rep movsq", 1), "rep_stosb": ("string_store", "rep stosb", 8),
}
seen = set()
for k in kinds:
    kind, mn, per = want[k]
    s = site_at_line(sites, truth.lines["k_" + k], f"{w}: {k}")
    if s is None:
        continue
    seen.add(s.get("site"))
    traps = R if emu else per * R
    check_site(s, truth, "k_" + k, f"{w}: {k}", kind, hits=traps, writes=R, function="vgk_" + k,
               mnemonic=mn, trap_at_writer=not emu and per > 1)
by_site = {s.get("site"): s for s in sites}
samples = cell.get("samples") or []
reg_site = [s for s in sites if s.get("line") == truth.lines["k_mov_reg"]]
if reg_site:
    eq_list(f"{w}: mov_reg values", [0x7e600000 + i for i in range(R)],
            values_of([x for x in samples if x.get("site") == reg_site[0].get("site")], w + " mov_reg",
                      kind="register_store", register="rdi"))
rest = [s for s in sites if s.get("site") not in seen]
if emu:
    eq(f"{w}: sites besides the labelled kinds (emulation)", [], rest)
else:
    libc = [s for s in rest if "libc" in (s.get("image") or "") and s.get("kind") != "kernel_write"]
    check(libc, f"{w}: no writer site in libc (memcpy/memset)")
    for s in libc:
        at = f"{w}: libc {s.get('symbol')} {s.get('instruction')}"
        check(s.get("kind") in ("vector_store", "string_store", "store"), f"{at}: kind {s.get('kind')!r}")
        eq(f"{at}: confidence", "exact", s.get("confidence"))
        eq(f"{at}: writes", R, s.get("writes"))
        check("mem" in (s.get("symbol") or ""), f"{at}: symbol must be libc's memcpy/memset")
    rd = [s for s in rest if s.get("kind") == "kernel_write" and (s.get("syscall") or {}).get("name") == "read"]
    if eq(f"{w}: one read(2) site", 1, len(rd)):
        eq(f"{w}: read(2) line (the caller's)", truth.lines["k_read"], rd[0].get("line"))
        eq(f"{w}: read(2) writes (one per call)", R, rd[0].get("writes"))
        eq(f"{w}: read(2) confidence", "exact", rd[0].get("confidence"))
        t = rd[0].get("traps")
        check(isinstance(t, int) and R <= t <= 8 * R, f"{w}: read(2) traps {t!r} not in [{R}, {8 * R}]")
    ck = [s for s in rest if s not in libc and s not in rd]
    check(ck, f"{w}: no writer site for clock_gettime")
    for s in ck:
        at = f"{w}: clock_gettime site {s.get('instruction')!r}"
        named = " ".join(str(s.get(k) or "") for k in ("function", "symbol")) + \
            str((s.get("syscall") or {}).get("name") or "")
        check("clock_gettime" in named, f"{at}: must name clock_gettime (vDSO function or system call), got {named!r}")
        eq(f"{at}: confidence", "exact", s.get("confidence"))
        eq(f"{at}: writes", R, s.get("writes"))
check(all(s.get("kind") != "unknown" for s in sites), f"{w}: a site with no writer: "
      f"{[(s.get('trap_runtime_ip'), s.get('instruction')) for s in sites if s.get('kind') == 'unknown']}")
eq(f"{w}: writes add up", sum(s.get("writes", 0) for s in sites), cell.get("writes"))
done()
print(f"ok: {len(kinds)} instruction kinds{'' if emu else ', libc, read(2), vDSO'} x {R} ({MODE})")
PY
