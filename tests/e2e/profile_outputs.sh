#!/bin/bash
# profile_outputs: several outputs from one run, "-o -", and the refusals
# (issue 19 item 2).  One profile of tgt_launch (started by "--", 500 ms in
# launch_burn; as many samples as its CPU time, in its truth, allows)
# written six ways at once: -o f.svg -o c.pb.gz -o c.folded
# -o c.speedscope.json -o c.json -o - (the table on stdout).  Each file
# holds its extension's format, and all six describe the same samples:
# the same total in the table, the folded lines, the speedscope weights
# (ns at 999 Hz) and the JSON; launch_burn the top self function everywhere (pprof read
# by go tool pprof, which names tgt_launch as the File), and the pprof
# Lines carry llvm-symbolizer's column.  Then: one -o with an extension and no --format takes
# the extension's format; probe -o - is stdout; -o /dev/stdout is still
# refused; --format contradicting an extension, an extension that names
# nothing among several -o, and "-o -" twice are usage errors (exit 2).
source "$(dirname "$0")/lib.sh"

TG=$TARGETS/tgt_launch
vg six profile -o "$T/f.svg" -o "$T/c.pb.gz" -o "$T/c.folded" -o "$T/c.speedscope.json" \
	-o "$T/c.json" -o - -- "$TG" "$T/t" 0 500 0
assert_rc 0
grep -q "written to $T/f.svg, $T/c.pb.gz, $T/c.folded, $T/c.speedscope.json, $T/c.json" "$T/six.err" ||
	{ show_last; fail "the summary line does not list the five files"; }
vg_py "$T" <<'PY' || { show_last; fail "$LAST_CMD: see above"; }
import json, sys, xml.etree.ElementTree as ET
from profcheck import *
t = sys.argv[1]
rows, n_table = parse_table(open(f"{t}/six.out").read(), "stdout table")
folded = parse_folded(open(f"{t}/c.folded").read(), "c.folded")
n_folded = sum(n for _, n in folded)
ss = speedscope_self(json.load(open(f"{t}/c.speedscope.json")), "c.speedscope.json")
doc = load_json(f"{t}/c.json")
n_json = (doc.get("observation") or {}).get("samples")
cpu_ns = int(next(l for l in open(f"{t}/t") if l.startswith("cpu_ns ")).split()[1])
check_sample_count(n_table or 0, cpu_ns / 1e9, 999, "the table's sample count")

eq("samples: folded vs table", n_table, n_folded)
# speedscope weights are nanoseconds: one sample is 1e9/999 ns at 999 Hz.
eq("samples: speedscope weights vs table", n_table, round(sum(ss.values()) * 999 / 1e9))
eq("samples: JSON observation.samples vs table", n_table, n_json)
def top(d): return max(d, key=d.get) if d else None
eq("top self function, table", "launch_burn", top({k: v["self"] for k, v in rows.items()}))
eq("top self function, folded", "launch_burn", top(folded_self(folded)))
eq("top self function, speedscope", "launch_burn", top(ss))
eq("top self function, JSON", "launch_burn", top(json_self(doc)))
flat, top_text = pprof_top(f"{t}/c.pb.gz", t, "c.pb.gz")
eq("top flat function, go tool pprof", "launch_burn", top(flat))
# Mapping[0] is the program (started by "--", its first samples are in
# ld.so and libc, whose images the trie met first).
check("File: tgt_launch" in top_text, f"go tool pprof names another file first: {top_text[:160]!r}")
# Line.column (profile.proto field 3 of Line) where DWARF has one: every
# location in tgt_launch gives llvm-symbolizer's line:column for its
# static address (go tool pprof 1.19 does not print columns).
import gzip, os, subprocess
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        n, wt = key >> 3, key & 7
        if wt == 0: v, i = varint(b, i)
        elif wt == 2:
            ln, i = varint(b, i); v = b[i:i + ln]; i += ln
        elif wt == 1: v = b[i:i + 8]; i += 8
        elif wt == 5: v = b[i:i + 4]; i += 4
        else: raise ValueError(f"wire type {wt}")
        out.append((n, v))
    return out
def one(fs, n): return next((v for k, v in fs if k == n), 0)
prof = fields(gzip.decompress(open(f"{t}/c.pb.gz", "rb").read()))
strings = [v.decode() for n, v in prof if n == 6]
mapping0 = fields(next(v for n, v in prof if n == 3))
exe, start, off = strings[one(mapping0, 5)], one(mapping0, 2), one(mapping0, 4)
checked = with_col = 0
for n, v in prof:
    if n != 4: continue
    loc = fields(v)
    if one(loc, 2) != one(mapping0, 1): continue
    lines = [fields(x) for k, x in loc if k == 4]
    if not lines: continue
    static = one(loc, 3) - start + off
    out = subprocess.run(["llvm-symbolizer", f"--obj={exe}", hex(static)], capture_output=True, text=True).stdout.split("\n")
    want = out[1].rsplit(":", 2) if len(out) > 1 else []
    if len(want) != 3 or not want[1].isdigit(): continue
    eq(f"line of {hex(static)}", int(want[1]), one(lines[0], 2))
    eq(f"column of {hex(static)}", int(want[2]), one(lines[0], 3))
    checked += 1; with_col += int(want[2]) > 0
check(checked >= 3 and with_col >= 3, f"only {checked} locations of tgt_launch checked, {with_col} with a column")
print(f"pprof: {checked} locations of tgt_launch carry llvm-symbolizer's line:column ({with_col} with a column)")
root = ET.parse(f"{t}/f.svg").getroot()
eq("f.svg root", "{http://www.w3.org/2000/svg}svg", root.tag)
check("launch_burn" in open(f"{t}/f.svg").read(), "f.svg does not name launch_burn")
print(f"six outputs of one run agree: {n_table} samples, launch_burn on top")
done()
PY

# One -o: its extension names the format.
vg one profile --duration 300ms -o "$T/one.folded" -- "$TG" "$T/t1" 0 200 0
assert_rc 0
grep -Eq '^.*main;launch_burn [0-9]+$' "$T/one.folded" || { show_last; fail "-o one.folded is not folded stacks"; }

# probe -o - : the report on stdout, as without -o.
vg probe_dash probe launch_counted --json -o - -- "$TG" "$T/t2" 100 0 0
if [[ $RC == 3 ]] && grep -q 'uprobe' "$T/probe_dash.err"; then
	echo "note: uprobes refused here; probe -o - not checked"
else
	assert_rc 0
	assert_eq "probe -o -: calls" 100 "$(jget "$T/probe_dash.out" 'd["locations"][0]["calls"]')"
fi

sleep 30 </dev/null &
spid=$!
track_pid "$spid"
refuse() { refuse_cmd profile 2000 "$@"; }
refuse devstdout 2 "/dev/stdout" "$spid" -o /dev/stdout --duration 1s
refuse contradicts 2 "--format folded contradicts -o '$T/a.svg'" "$spid" --format folded -o "$T/a.svg" -o "$T/b.folded"
refuse no_ext 2 "cannot tell the format of -o '$T/b'" "$spid" -o "$T/a.svg" -o "$T/b"
refuse dash_twice 2 "-o - is given twice" "$spid" -o - -o -
refuse same_file 2 "-o '$T/a.svg' is given twice" "$spid" -o "$T/a.svg" -o "$T/a.svg"
[[ ! -e $T/a.svg && ! -e $T/b.folded ]] || fail "a refused run left an output file"
echo "ok"
