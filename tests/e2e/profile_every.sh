#!/bin/bash
# profile_every: --every 1s --duration 3s on tgt_profile split writes one
# profile per period, rolling files named by the period's start, and the
# sampling never pauses between them:
#   exit 0; 3 "# period" lines; 3 pprof files and 3 folded files;
#   each pprof is gzip profile.proto whose time_nanos + duration_nanos is
#   the next one's time_nanos (consecutive windows, exactly), durations
#   summing to 3 s (+-150 ms), hot_a or hot_b in each (tgt_profile's two
#   hot functions; a starved target may give a period a few samples, all
#   in hot_b's 30 %), hot_a in one at least; its file name is strftime of
#   its time_nanos; the folded file of the same period has the same
#   samples; the samples of all files add up exactly to the total the
#   profiler counted (its last line): nothing lost at a swap.
# Then -o DIR --keep 2 over 4 periods: cpu-YYYYmmddTHHMMSS.pb.gz files,
# exactly the last 2 periods' remain, each naming hot_a or hot_b (at
# continuous mode's 19 Hz).
source "$(dirname "$0")/lib.sh"

truth=$T/truth
start_target tgt_profile "$truth" split
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

mkdir "$T/p" "$T/f" "$T/dir"
vg every profile "$pid" --every 1s --duration 3s --freq 199 \
	-o "$T/p/cpu-%Y%m%dT%H%M%S.pb.gz" -o "$T/f/%Y%m%dT%H%M%S.folded"
assert_rc 0
vg_py "$T" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import os, re, sys, time
from profcheck import *
t = sys.argv[1]
err = open(f"{t}/every.err").read()
periods = re.findall(r"^# period (\d+): (\d+) samples", err, re.M)
eq("period lines", 3, len(periods))
m = re.search(r"^# (\d+) samples in ([0-9.]+) s \(duration\) over 3 periods", err, re.M)
check(m, f"no summary line over 3 periods in stderr:\n{err}")
total = int(m.group(1)) if m else -1
pb = sorted(os.listdir(f"{t}/p"))
fo = sorted(os.listdir(f"{t}/f"))
eq("pprof files", 3, len(pb))
eq("folded files", 3, len(fo))
profs = [pprof_summary(open(f"{t}/p/{n}", "rb").read(), n) for n in pb]
summed = 0
check(any(pr and "hot_a" in pr["strings"] for pr in profs), "no period's string table names hot_a")
for i, (name, pr) in enumerate(zip(pb, profs)):
    if pr is None:
        continue
    check({"hot_a", "hot_b"} & set(pr["strings"]), f"{name}: neither hot_a nor hot_b in the string table")
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(pr["time_nanos"] / 1e9))
    eq(f"{name}: named by its start", f"cpu-{stamp}.pb.gz", name)
    if i + 1 < len(profs) and profs[i + 1]:
        eq(f"{name}: ends where the next period starts (ns)", profs[i + 1]["time_nanos"],
           pr["time_nanos"] + pr["duration_nanos"])
    folded = parse_folded(open(f"{t}/f/{fo[i]}").read(), fo[i]) if i < len(fo) else {}
    eq(f"{fo[i] if i < len(fo) else '?'}: samples of the same period as {name}",
       pr["samples"], sum(n for _, n in folded))
    eq(f"{name}: samples of the '# period {i + 1}' line", int(periods[i][1]) if i < len(periods) else -1,
       pr["samples"])
    summed += pr["samples"]
dur = sum(p["duration_nanos"] for p in profs if p) / 1e6
check(2850 <= dur <= 3150, f"periods cover {dur:.0f} ms, expected 3000 +- 150")
eq("samples of all files vs the profiler's total", total, summed)
check(summed > 0, "no samples at all")
print(f"3 periods, {summed} samples, {dur:.0f} ms")
done()
PY

vg keep profile "$pid" --every 1s --duration 4s -o "$T/dir" --keep 2
assert_rc 0
vg_py "$T" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import os, re, sys
from profcheck import *
t = sys.argv[1]
err = open(f"{t}/keep.err").read()
written = re.findall(r"^# period \d+: .*; written to (\S+)$", err, re.M)
eq("periods written", 4, len(written))
left = sorted(os.listdir(f"{t}/dir"))
eq("files kept", sorted(os.path.basename(w) for w in written[-2:]), left)
for n in left:
    check(re.fullmatch(r"cpu-\d{8}T\d{6}\.pb\.gz", n), f"file name {n}")
    pr = pprof_summary(open(f"{t}/dir/{n}", "rb").read(), n)
    check(pr and {"hot_a", "hot_b"} & set(pr["strings"]), f"{n}: neither hot_a nor hot_b in it")

done()
PY
echo "ok"
