#!/bin/bash
# scan_pointers_rank: --pointers-to ADDR with the defaults on tgt_ptrheap, a
# redis-like keyspace where the value object ADDR is reached by the real
# chain *(*(*(*(*(g_server+64))+8)+24)+8) (depth 5, as redis 7.0 keeps a
# value) and by decoys each of which an older rule ranked first: depth 1
# with a large offset, depth 2 with a large offset, depth 4 through a
# pointer into a string, depth 2 from a library's global; 40,000 small
# objects linked at random make a wide search grow until it is cut.  The
# real chain must be listed first and every decoy after it; every chain
# listed leads to ADDR when followed in /proc/PID/mem; the text table shows
# the real chain on its first line.
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_ptrheap "$truth" "$TARGETS/libvgtestlib.so"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
target=$(truth_get "$truth" chain_target)
real=$(truth_get "$truth" real)

check_rank() {  # check_rank NAME DECOYS (1: every decoy must be listed)
	vg_py "$truth" "$T/$1.out" "$LAST_CMD" "$pid" "$2" <<'PY'
import struct, sys
from vgcheck import *
from scancheck import read_mem
t = Truth(sys.argv[1])
d = load_json(sys.argv[2])
w, pid, want_decoys = sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"
check_header(d, "live_scan", pid, w)
target = int(t.kv["chain_target"][-1], 16)
real = t.kv["real"][-1]
decoys = dict(r.split(" ", 1) for r in t.kv["decoy"])
chains = d.get("chains")
if not check(isinstance(chains, list) and chains, w + ": no chains listed"):
    done()
for c in chains:
    a = addr(w + ": base_address", c.get("base_address"))
    for o in c.get("offsets", []):
        a = struct.unpack("<Q", read_mem(pid, a, 8))[0] + o
    eq_addr(w + ": chain %s followed in /proc/%d/mem" % (c.get("expression"), pid), target, a)
exprs = [c.get("expression") for c in chains]
top = ", ".join(exprs[:5])
eq(w + ": the first chain (then: %s)" % top, real, exprs[0])
eq(w + ": its offsets", [int(x) for x in t.kv["real_offsets"][-1].split()], chains[0].get("offsets"))
eq(w + ": its base_symbol", "g_server+64", chains[0].get("base_symbol"))
for kind, e in sorted(decoys.items()):
    check(e in exprs or not want_decoys,
          w + ": the %s decoy %s is not listed: the search did not reach it" % (kind, e))
    if e in exprs:
        check(exprs.index(e) > exprs.index(real) if real in exprs else False,
              w + ": the %s decoy %s ranks before the real chain" % (kind, e))
print("note: %d chains listed of %s, complete for offsets <= %s, %.2f s" % (
    len(chains), d.get("chains_total"), d.get("max_offset_complete"), d.get("seconds", 0)))
done()
PY
}

vg rank scan "$pid" --pointers-to "$target" --json
assert_rc 0
check_rank rank 0
echo "ok: with the defaults the real chain ranks first"

# Room for every chain: each decoy is found, and ranks below the real one.
vg all scan "$pid" --pointers-to "$target" --max-chains 1000000 --max-list 1000000 --json
assert_rc 0
check_rank all 1
echo "ok: every decoy is found and ranks after it"

vg table scan "$pid" --pointers-to "$target"
assert_rc 0
first=$(grep -m1 '^  depth ' "$T/table.out")
[[ $first == *"$real "* ]] || { show_last; fail "$LAST_CMD: the first chain is not $real: $first"; }
echo "ok: table view"
