#!/bin/bash
# watch_stacks: `watch --stacks` unwinds each write's user stack by CFI.
# tgt_watch libcstack R calls main -> vgw_libc_outer -> vgw_libc_inner ->
# libc's memset over g_buf, R times; the watch is on g_buf+56, so every
# write traps inside memset, which (Debian's libc) keeps no frame pointer:
# rbp there is still vgw_libc_inner's, so a frame-pointer walk (what the
# kernel's user callchain is) goes from memset straight to
# vgw_libc_outer and loses vgw_libc_inner.  Each sample's callchain must
# be, innermost first: memset, vgw_libc_inner, vgw_libc_outer, main, each
# exactly once and in that order.  Names come from `vigil sym` on the
# addresses (the IP, then each return address - 1: the call).  Real
# breakpoints only: the emulation has no uprobe site inside libc.
source "$(dirname "$0")/lib.sh"

R=${WATCH_R:-3}
truth=$T/truth
start_target tgt_watch "$truth" libcstack "$R"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
watch_probe "$pid"
[[ $WATCH_MODE == real ]] ||
	skip "a write inside libc's memset: the emulation has no uprobe site for it"
watch_env "$truth"
vg_watch_start run watch "$pid" g_buf+56 --stacks --duration 3000 --json
kill -USR1 "$pid"
wait_truth "$truth" done
vg_watch_wait 20
assert_rc 0 "vigil watch --stacks --duration 3000"

# The addresses to name: every sample's IP, and its return addresses - 1.
mapfile -t addrs < <(vg_py <<'PY' || { show_last; fail "$LAST_CMD: no callchains (above)"; }
import os
from watchcheck import *
doc = load_json(os.environ["T"] + "/run.out")
seen = []
for s in (the_watch(doc, "watch stacks", 0).get("samples") or []):
    for i, a in enumerate(s.get("callchain") or []):
        v = int(a, 16) - (1 if i else 0)
        if hex(v) not in seen:
            seen.append(hex(v))
print("\n".join(seen))
PY
)
((${#addrs[@]})) || { show_last; fail "$LAST_CMD: no sample has a callchain"; }
vg sym sym "$pid" "${addrs[@]}" --json
assert_rc 0 "vigil sym of the callchain addresses"

vg_py "$truth" "$R" <<'PY' || { show_last; fail "watch --stacks: callchains differ (above)"; }
import os, sys
from watchcheck import *
T = os.environ["T"]
truth, R = WatchTruth(sys.argv[1]), int(sys.argv[2])
w = "watch --stacks"
doc = load_json(f"{T}/run.out")
check_watch_header(doc, truth.pid, w)
names = {}
for r in load_json(f"{T}/sym.out").get("results") or []:
    names[int(r["address"], 16)] = r.get("symbol") or "?"
cell = the_watch(doc, w, 0)
samples = cell.get("samples") or []
check(len(samples) >= R, f"{w}: {len(samples)} samples, want at least {R} (one memset per round)")
want = ["vgw_libc_inner", "vgw_libc_outer", "main"]
for k, s in enumerate(samples):
    at = f"{w}: sample {k}"
    chain = [int(a, 16) for a in (s.get("callchain") or [])]
    if not check(chain, f"{at}: no callchain"):
        continue
    got = [names.get(a - (1 if i else 0), "?") for i, a in enumerate(chain)]
    check("memset" in got[0], f"{at}: frame 0 must be in libc's memset, got {got[0]!r} ({got})")
    eq(f"{at}: frames 1-3 (the caller of memset and up)", want, got[1:4])
done()
print(f"ok: {len(samples)} writes in libc's memset, each unwound to {' <- '.join(want)}")
PY
