#!/bin/bash
# scan_pointers: --pointers-to ADDR on tgt_scan, whose g_root points to
# heap A, *(A+24) to heap B, and the value lives at B+40.  The chain
# g_root +24 +40 is reported (base tgt_scan+0xSTATIC, base_symbol g_root,
# offsets [24, 40], expression "*(*(g_root)+24)+40", depth 2); every chain
# listed really leads to ADDR when followed in /proc/PID/mem; --depth 1 and
# --max-offset 39 cannot reach it, --max-offset 40 can; the table shows it.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_scan "$truth" 8
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
target=$(truth_get "$truth" chain_target)

check_json() {  # check_json NAME PYTHON-EXPECTATIONS (d: doc, t: truth)
	vg_py "$truth" "$T/$1.out" "$2" "$LAST_CMD" "$pid" <<'PY'
import os, struct, sys
from scancheck import *
t = ScanTruth(sys.argv[1])
d = load_json(sys.argv[2])
code, w, pid = sys.argv[3], sys.argv[4], int(sys.argv[5])
check_header(d, "live_scan", pid, w)
eq(w + ": scan.mode", "pointers", d.get("scan", {}).get("mode"))
chains = d.get("chains")
if not check(isinstance(chains, list), w + ": chains must be a list"):
    done()
eq(w + ": chains_listed", len(chains), d.get("chains_listed"))
check(isinstance(d.get("chains_total"), int) and d["chains_total"] >= len(chains),
      w + ": chains_total %r < chains listed %d" % (d.get("chains_total"), len(chains)))
check(isinstance(d.get("pointers"), int) and d["pointers"] > 0, w + ": pointers %r" % d.get("pointers"))
check(d.get("truncated") in (True, False), w + ": truncated must be a boolean")
exe = os.path.basename(t.exe)
root_static = t.syms["g_root"]["static"]
# Every chain listed leads to the target address.
for c in chains:
    a = addr(w + ": base_address", c.get("base_address"))
    offs = c.get("offsets")
    if a is None or not isinstance(offs, list) or not offs:
        check(False, w + f": malformed chain {c!r}")
        continue
    eq(w + ": depth of %s" % c.get("expression"), len(offs), c.get("depth"))
    for o in offs:
        a = struct.unpack("<Q", read_mem(pid, a, 8))[0] + o
    eq_addr(w + ": chain %s followed in /proc/%d/mem" % (c.get("expression"), pid), t.chain_target, a)
# From g_root at depth <= 2 only *(*(g_root)+24)+40 leads there (B is 16 KiB
# past A); deeper chains from it may pass through other heap objects.
mine = [c for c in chains if c.get("base_symbol") == "g_root" and c.get("depth", 0) <= 2]
exec(code)
done()
PY
}

expect_root_chain='
if check(len(mine) == 1, w + ": expected one chain from g_root, got %d: %r" % (len(mine), [c.get("expression") for c in chains][:10])):
    c = mine[0]
    eq(w + ": offsets", [24, 40], c.get("offsets"))
    eq(w + ": expression", "*(*(g_root)+24)+40", c.get("expression"))
    eq(w + ": depth", 2, c.get("depth"))
    eq(w + ": base", f"{exe}+{root_static:#x}", c.get("base"))
    eq(w + ": base_address", hex(t.sym("g_root")), c.get("base_address"))
'
vg ptr scan "$pid" --pointers-to "$target" --json
assert_rc 0
check_json ptr "$expect_root_chain
sc = d['scan']
eq(w + ': scan.depth (default)', 5, sc.get('depth'))
eq(w + ': scan.max_offset (default)', 4096, sc.get('max_offset'))
eq(w + ': scan.target', hex(t.chain_target), sc.get('target'))
print('note: %d chains listed, %s found, %s pointers' % (len(chains), d.get('chains_total'), d.get('pointers')))"
echo "ok: the chain g_root +24 +40, every chain listed leads to ADDR"

vg ptr40 scan "$pid" --pointers-to "$target" --depth 2 --max-offset 40 --json
assert_rc 0
check_json ptr40 "$expect_root_chain"
vg ptr39 scan "$pid" --pointers-to "$target" --depth 3 --max-offset 39 --json
assert_rc 0
check_json ptr39 'eq(w + ": chains from g_root with offset 40 > 39", [], mine)'
vg ptr1 scan "$pid" --pointers-to "$target" --depth 1 --json
assert_rc 0
check_json ptr1 'eq(w + ": chains from g_root at depth 1", [], mine)
check(all(c.get("depth") == 1 for c in chains), w + ": a chain deeper than --depth 1")'
echo "ok: --depth and --max-offset bound the search"

vg table scan "$pid" --pointers-to "$target"
assert_rc 0
grep -qF '*(*(g_root)+24)+40' "$T/table.out" || { show_last; fail "$LAST_CMD: the table does not show *(*(g_root)+24)+40"; }
echo "ok: table view"
