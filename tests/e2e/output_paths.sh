#!/bin/bash
# output_paths: every way each command writes its result, run on the binary
# under test (make test runs it on the ASan build and on the default build
# users get), each to a file and to standard output, and each result checked
# to be complete and well-formed:
#   maps, read, print, sym, scan, watch  stdout into a regular file and into a pipe
#                                 (table and --json; read --as/--raw; sym
#                                 --style llvm, --bin, standard input; scan
#                                 first, --save/--from, --snapshot/--from,
#                                 --pointers-to)
#   profile                       every --format (table folded pprof
#                                 speedscope svg json) and --json, with
#                                 -o FILE and into a pipe; --output once
#   probe                         table and --json, with -o FILE, --output
#                                 FILE and into a pipe; --stacks --format
#                                 table folded pprof speedscope svg, with
#                                 -o FILE and into a pipe
#   stack                         table and --json; --every in every
#                                 --format; with -o FILE and into a pipe
# Every run exits 0; with -o nothing goes to stdout.  JSON: one document
# with the common header (schema_version, tool, tool_version, operation,
# process).  pprof: gzip, then a protobuf wire-format walk of profile.proto
# (ids and string indices resolve, one value per sample type).  speedscope:
# its $schema, shared.frames and sampled profiles whose frame indices
# resolve.  folded: "stack count" lines.  svg: parses as XML (an <svg>).
# Tables: non-empty, end with a newline, and the file and the stdout copy
# agree: byte for byte where the command is deterministic (maps, read, sym),
# with numbers masked where only timings differ (scan), on their header
# lines otherwise (watch, profile, probe: two runs see different samples).
# The watch JSON's per-site fields are not asserted (they are changing).
# Watch uses hardware breakpoints where they fire and uprobe emulation
# (VIGIL_WATCH_EMULATE_TRAPS) where they do not, or with
# WATCH_MODE_FORCE=emulation (lib.sh watch_probe).
source "$(dirname "$0")/lib.sh"

start_target tgt_globals_pie "$T/glob.truth"
start_target tgt_sym "$T/sym.truth"
start_target tgt_scan "$T/scan.truth" 8
start_target tgt_profile "$T/prof.truth" split
for c in wft wpt wfj wpj; do
	start_target tgt_watch "$T/$c.truth" single 50
done
for c in glob sym scan prof wft wpt wfj wpj; do
	wait_truth "$T/$c.truth" ready
done
gpid=$(truth_get "$T/glob.truth" pid)
spid=$(truth_get "$T/sym.truth" pid)
cpid=$(truth_get "$T/scan.truth" pid)
ppid=$(truth_get "$T/prof.truth" pid)

# Each output: NAME KIND GROUP COMPARE PID PATH EXIT COMMAND, one line in
# $T/cases for the Python pass at the end (which fails on any exit but 0,
# after all routes ran: one run shows every broken one).  The outputs of one GROUP are
# the same result sent to different places; COMPARE says how they must
# agree: exact, masked (numbers masked) or header (lines that start in the
# first column, numbers masked, profile's per-function rows left out).
: >"$T/cases"
IN=/dev/null
OUT_ENV=()

# out DEST NAME KIND GROUP COMPARE PID ARGS...  - run vigil ARGS (stdin $IN,
# environment prefix OUT_ENV) with the result sent to DEST:
#   file          stdout redirected to a regular file
#   pipe          stdout through a pipe, as `vigil ... | jq` has it
#   -o, --output  ARGS DEST $T/NAME.file; stdout must stay empty
out() {
	local dest=$1 name=$2 kind=$3 group=$4 cmp=$5 pid=$6 path
	shift 6
	path=$T/$name.out
	if [[ $dest == -o || $dest == --output ]]; then
		set -- "$@" "$dest" "$T/$name.file"
		path=$T/$name.file
	fi
	LAST=$name
	LAST_CMD="${OUT_ENV[*]:1}${OUT_ENV[*]:+ }vigil $*"
	set +e
	if [[ $dest == pipe ]]; then
		LAST_CMD+=" | cat"
		"${OUT_ENV[@]}" "$VIGIL" "$@" 2>"$T/$name.err" <"$IN" | cat >"$T/$name.out"
		RC=${PIPESTATUS[0]}
	else
		"${OUT_ENV[@]}" "$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" <"$IN"
		RC=$?
	fi
	set -e
	[[ $RC == 0 ]] || echo "FAIL: $LAST_CMD: exit $RC: $(tail -n1 "$T/$name.err")" >&2
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$group" "$cmp" "$pid" "$path" \
		"$RC" "$LAST_CMD" >>"$T/cases"
}

# both NAME KIND COMPARE PID ARGS...  - out file and out pipe, one group.
both() {
	local name=$1 kind=$2 cmp=$3 pid=$4
	shift 4
	out file "${name}_file" "$kind" "$name" "$cmp" "$pid" "$@"
	out pipe "${name}_pipe" "$kind" "$name" "$cmp" "$pid" "$@"
}

# ---- maps, read, sym: deterministic, the two copies byte for byte ------
both maps_table table exact "$gpid" maps "$gpid"
both maps_json json exact "$gpid" maps "$gpid" --json

both read_dump table exact "$gpid" read "$gpid" vg_magic 32
both read_u32 table exact "$gpid" read "$gpid" vg_magic 8 --as u32
both read_str table exact "$gpid" read "$gpid" vg_text --as str
both read_raw raw exact "$gpid" read "$gpid" vg_magic 8 --raw
both read_json json exact "$gpid" read "$gpid" vg_magic 16 --as u64 --json
both read_json_str json exact "$gpid" read "$gpid" vg_text --as str --json
both print_table table exact "$gpid" print "$gpid" vg_magic vg_text vg_ptr vg_double
both print_json json exact "$gpid" print "$gpid" vg_magic vg_text vg_ptr vg_double --json
echo "ok: maps, read and print"

sbin=$(truth_sym "$T/sym.truth" sym_leaf path)
# A symbol, a return address, a call inside two inlined helpers.
addrs=(sym_leaf "$(truth_sym "$T/sym.truth" ret_call runtime)" "$(truth_sym "$T/sym.truth" call_inline runtime)")
both sym_table table exact "$spid" sym "$spid" "${addrs[@]}"
both sym_llvm table exact "$spid" sym "$spid" "${addrs[@]}" --style llvm
both sym_json json exact "$spid" sym "$spid" "${addrs[@]}" --json
both sym_bin table exact - sym --bin "$sbin" 0x1520 0x1834
both sym_bin_json json exact - sym --bin "$sbin" 0x1520 0x1834 --json
for s in sym_leaf ret_call call_inline; do
	truth_sym "$T/sym.truth" "$s" runtime
done >"$T/sym.in"
IN=$T/sym.in
both sym_stdin table exact "$spid" sym "$spid"
both sym_stdin_json json exact "$spid" sym "$spid" --json
IN=/dev/null
echo "ok: sym"

# ---- scan: every mode; a saved set and a snapshot are files too, and
# they must load back ------------------------------------------------------
v=$(truth_get "$T/scan.truth" value_dec)
chain=$(truth_get "$T/scan.truth" chain_target)
both scan_first table masked "$cpid" scan "$cpid" "$v" --type i32 --regions heap
both scan_first_json json masked "$cpid" scan "$cpid" "$v" --type i32 --regions heap --json
# The set and the snapshot go to one path (the tables name it), moved
# aside after each run, and are put back there to be read.
set_out() {  # set_out FILE DEST NAME ...  - out DEST NAME ..., then $T/cur.EXT to FILE
	local file=$1 ext=${1##*.}
	shift
	out "$@"
	[[ -s $T/cur.$ext ]] || { show_last; fail "$LAST_CMD: no file written"; }
	mv "$T/cur.$ext" "$file"
}
set_in() { cp "$1" "$T/cur.${1##*.}"; }
for dest in file pipe json; do
	json=() kind=table group=scan_save
	[[ $dest == json ]] && json=(--json) kind=json group=scan_save_json
	set_out "$T/$dest.set" "${dest/json/pipe}" "scan_save_$dest" "$kind" "$group" masked "$cpid" \
		scan "$cpid" "$v" --type i32 --regions heap --save "$T/cur.set" "${json[@]}"
	set_out "$T/$dest.snap" "${dest/json/pipe}" "scan_snap_$dest" "$kind" "${group/save/snap}" masked "$cpid" \
		scan "$cpid" --snapshot "$T/cur.snap" --regions tgt_scan "${json[@]}"
done
for s in file pipe json; do
	set_in "$T/$s.set"
	out file "scan_from_${s}_file" table scan_from masked "$cpid" scan "$cpid" --from "$T/cur.set" --eq "$v"
	out pipe "scan_from_${s}_pipe" table scan_from masked "$cpid" scan "$cpid" --from "$T/cur.set" --eq "$v"
	out pipe "scan_from_${s}_json" json scan_from_json masked "$cpid" scan "$cpid" --from "$T/cur.set" --eq "$v" --json
	set_in "$T/$s.snap"
	out file "scan_cmp_${s}_file" table scan_cmp masked "$cpid" scan "$cpid" --from "$T/cur.snap" --type u32 --aligned --unchanged
	out pipe "scan_cmp_${s}_json" json scan_cmp_json masked "$cpid" scan "$cpid" --from "$T/cur.snap" --type u32 --aligned --unchanged --json
done
both scan_ptr table masked "$cpid" scan "$cpid" --pointers-to "$chain" --depth 2 --max-offset 64
both scan_ptr_json json masked "$cpid" scan "$cpid" --pointers-to "$chain" --depth 2 --max-offset 64 --json
echo "ok: scan"

# ---- watch: one tgt_watch per run, its 50 stores made once vigil is armed
wpid() { truth_get "$T/$1.truth" pid; }
watch_probe "$(wpid wft)"
watch_env "$T/wft.truth" reg
OUT_ENV=("${WATCH_ENV[@]}")

# go_when_armed ERR PID  - SIGUSR1 to PID once ERR has vigil's '# armed: '
# line (10 s at most; the watch then reports no writes and fails below).
go_when_armed() {
	local i
	for ((i = 0; i < 1000; i++)); do
		if grep -q '^# armed: ' "$1" 2>/dev/null; then
			kill -USR1 "$2"
			return 0
		fi
		sleep 0.01
	done
}
watch_run() {  # watch_run DEST NAME TRUTH KIND ARGS...
	local dest=$1 name=$2 truth=$3 kind=$4 pid
	shift 4
	pid=$(wpid "$truth")
	rm -f "$T/$name.err"
	go_when_armed "$T/$name.err" "$pid" &
	track_pid $!
	out "$dest" "$name" "$kind" "watch_$kind" header "$pid" watch "$pid" g_cell "$@"
	wait_truth "$T/$truth.truth" "done"
}
watch_run file watch_table_file wft table --regs --stacks --duration 1000
watch_run pipe watch_table_pipe wpt table --regs --stacks --duration 1000
watch_run file watch_json_file wfj json --regs --stacks --duration 1000 --json
watch_run pipe watch_json_pipe wpj json --regs --stacks --duration 1000 --json
OUT_ENV=()
echo "ok: watch ($WATCH_MODE)"

# ---- profile: every format, -o FILE and a pipe --------------------------
for f in table folded pprof speedscope svg json; do
	cmp=header
	for dest in -o pipe; do
		out "$dest" "profile_${f}_${dest#-}" "$f" "profile_$f" "$cmp" "$ppid" \
			profile "$ppid" --duration 300 --format "$f"
	done
done
out -o profile_json_flag_o json profile_json header "$ppid" profile "$ppid" --duration 300 --json
out pipe profile_json_flag_pipe json profile_json header "$ppid" profile "$ppid" --duration 300 --json
out --output profile_pprof_output pprof profile_pprof header "$ppid" profile "$ppid" --duration 300 --format pprof
echo "ok: profile"

# ---- probe: table and JSON with every section (--latency --args --stacks
# --per-thread), -o FILE, --output FILE and a pipe --------------------------
probe_args=(probe "$ppid" hot_a --duration 300 --latency --args 1 --stacks --per-thread)
out -o probe_table_o table probe_table header "$ppid" "${probe_args[@]}"
out --output probe_table_output table probe_table header "$ppid" "${probe_args[@]}"
out pipe probe_table_pipe table probe_table header "$ppid" "${probe_args[@]}"
out -o probe_json_o json probe_json header "$ppid" "${probe_args[@]}" --json
out --output probe_json_output json probe_json header "$ppid" "${probe_args[@]}" --json
out pipe probe_json_pipe json probe_json header "$ppid" "${probe_args[@]}" --json
# --stacks --format: the stacks through profile's writers, every format.
for f in table folded pprof speedscope svg; do
	for dest in -o pipe; do
		out "$dest" "probe_stacks_${f}_${dest#-}" "$f" "probe_stacks_$f" header "$ppid" \
			probe "$ppid" hot_a --duration 300 --stacks --format "$f"
	done
done
echo "ok: probe"

# ---- stack: the snapshot (table, --json) and the wall-clock profile in
# every --format, on the single-threaded target (its state and stack stay
# the same between two runs) ---------------------------------------------
out -o stack_table_o table stack_table header "$gpid" stack "$gpid"
out pipe stack_table_pipe table stack_table header "$gpid" stack "$gpid"
out -o stack_json_o json stack_json header "$gpid" stack "$gpid" --json
out pipe stack_json_pipe json stack_json header "$gpid" stack "$gpid" --json
for f in table folded pprof speedscope svg; do
	out -o "stack_every_${f}_o" "$f" "stack_every_$f" header "$gpid" stack "$gpid" --every 20 --duration 200 --format "$f"
done
out pipe stack_every_folded_pipe folded stack_every_folded header "$gpid" stack "$gpid" --every 20 --duration 200 --format folded
out pipe stack_every_table_pipe table stack_every_table header "$gpid" stack "$gpid" --every 20 --duration 200
echo "ok: stack"

vg_py "$T/cases" "$T/glob.truth" <<'PY'
import gzip, json, os, re, sys, xml.etree.ElementTree as ET
from vgcheck import *

OPERATION = {"maps": "maps", "read": "read", "print": "print", "sym": "symbolize", "scan": "live_scan",
             "watch": "live_watch", "profile": "live_profile", "probe": "live_probe",
             "stack": "live_stack"}
cases = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
glob = Truth(sys.argv[2])


def text_of(data, w):
    if not check(data, f"{w}: empty output"):
        return None
    check(data.endswith(b"\n"), f"{w}: does not end with a newline (cut off?): ...{data[-80:]!r}")
    check(b"\0" not in data, f"{w}: NUL byte in a text output")
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        check(False, f"{w}: not UTF-8 ({e})")
        return None


def check_json(data, w, group, pid):
    text = text_of(data, w)
    if text is None:
        return None
    try:
        doc = json.loads(text)
    except ValueError as e:
        check(False, f"{w}: not one JSON document ({e}); ends with {text[-120:]!r}")
        return None
    op = OPERATION[group.split("_")[0]]
    if pid == "-":
        eq(f"{w}: first keys", ["schema_version", "tool", "tool_version", "operation", "process"],
           list(doc)[:5])
        eq(f"{w}: operation", op, doc.get("operation"))
        eq(f"{w}: process", None, doc.get("process"))
    else:
        check_header(doc, op, int(pid), w)
    return doc


# --- protobuf wire format, as much of it as profile.proto uses ---
def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("varint runs past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        if not c & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def fields(b):
    """(field number, wire type, value) of one message; raises on bad wire data."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError(f"field {num}: {n} bytes run past the end")
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"field {num}: wire type {wt}")
        if i > len(b):
            raise ValueError(f"field {num}: runs past the end")
        out.append((num, wt, v))
    return out


def ints(fs, num):
    """A repeated integer field, packed or not."""
    vals = []
    for n, wt, v in fs:
        if n != num:
            continue
        if wt == 0:
            vals.append(v)
        elif wt == 2:
            i = 0
            while i < len(v):
                x, i = varint(v, i)
                vals.append(x)
        else:
            raise ValueError(f"field {num}: wire type {wt} for an integer")
    return vals


def one(fs, num, default=0):
    v = ints(fs, num)
    return v[-1] if v else default


def msgs(fs, num):
    return [fields(v) for n, wt, v in fs if n == num and wt == 2]


def check_pprof(data, w):
    if not check(data[:2] == b"\x1f\x8b", f"{w}: not gzip (starts {data[:4]!r})"):
        return None
    try:
        raw = gzip.decompress(data)
    except (OSError, EOFError) as e:
        check(False, f"{w}: gunzip fails ({e}): cut off?")
        return None
    try:
        p = fields(raw)
        strings = [v.decode() for n, wt, v in p if n == 6]
        types = msgs(p, 1)
        samples = msgs(p, 2)
        mappings = {one(m, 1) for m in msgs(p, 3)}
        locs = msgs(p, 4)
        funcs = msgs(p, 5)
        fids = {one(f, 1) for f in funcs}
        lids = {one(l, 1) for l in locs}
        check(strings and strings[0] == "", f"{w}: string_table[0] must be \"\"")
        check(types, f"{w}: no sample_type")
        check(samples, f"{w}: no sample")
        check(0 not in fids | lids | mappings, f"{w}: an id 0")
        idx = [one(t, k) for t in types + msgs(p, 11) for k in (1, 2)]
        idx += [one(f, k) for f in funcs for k in (2, 3, 4)]
        idx += [one(m, k) for m in msgs(p, 3) for k in (5, 6)]
        idx += ints(p, 13) + [one(p, 14)]
        check(all(0 <= i < len(strings) for i in idx),
              f"{w}: a string index past the {len(strings)} strings")
        for s in samples:
            eq(f"{w}: values of a sample (one per sample_type)", len(types), len(ints(s, 2)))
            missing = set(ints(s, 1)) - lids
            check(not missing, f"{w}: a sample names locations {sorted(missing)[:5]} that do not exist")
        for l in locs:
            check(one(l, 2) == 0 or one(l, 2) in mappings, f"{w}: location {one(l, 1)}: no mapping {one(l, 2)}")
            for ln in msgs(l, 4):
                check(one(ln, 1) in fids, f"{w}: location {one(l, 1)}: no function {one(ln, 1)}")
        return strings
    except (ValueError, UnicodeDecodeError) as e:
        check(False, f"{w}: not a profile.proto message: {e}")
        return None


def check_speedscope(data, w):
    text = text_of(data, w)
    try:
        d = json.loads(text) if text is not None else None
    except ValueError as e:
        check(False, f"{w}: not one JSON document ({e}); ends with {text[-120:]!r}")
        d = None
    if not isinstance(d, dict):
        return None
    eq(f"{w}: $schema", "https://www.speedscope.app/file-format-schema.json", d.get("$schema"))
    frames = d.get("shared", {}).get("frames")
    profiles = d.get("profiles")
    if not check(isinstance(frames, list) and frames and all(isinstance(f, dict) and "name" in f for f in frames),
                 f"{w}: shared.frames must be a non-empty list of {{name}}"):
        return None
    if not check(isinstance(profiles, list) and profiles, f"{w}: no profiles"):
        return None
    for p in profiles:
        eq(f"{w}: profile type", "sampled", p.get("type"))
        for k in ("name", "unit", "startValue", "endValue", "samples", "weights"):
            check(k in p, f"{w}: profile without {k}")
        s, wt = p.get("samples", []), p.get("weights", [])
        eq(f"{w}: samples and weights of {p.get('name')!r}", len(s), len(wt))
        check(all(isinstance(i, int) and 0 <= i < len(frames) for st in s for i in st),
              f"{w}: a sample names a frame index past the {len(frames)} frames")
    return " ".join(f["name"] for f in frames)


def check_folded(data, w):
    text = text_of(data, w)
    if text is None:
        return None
    bad = [l for l in text.splitlines() if not re.fullmatch(r"\S.* [1-9][0-9]*", l)]
    check(not bad, f"{w}: lines that are not 'stack count': {bad[:3]!r}")
    return text


def check_svg(data, w):
    text = text_of(data, w)
    if text is None:
        return None
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        check(False, f"{w}: not well-formed XML ({e})")
        return None
    eq(f"{w}: root element", "{http://www.w3.org/2000/svg}svg", root.tag)
    return text


def masked(text):
    """Lines with numbers as N, addresses as X and runs of blanks as one
    (columns are padded to the width of their numbers).  A number may
    have an exponent: JSON's "seconds" of a scan under 0.1 ms is written
    3.5e-05, of a slower one 0.000123."""
    return [re.sub(r"[ \t]+", " ", re.sub(r"[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?", "N",
                                          re.sub(r"0x[0-9a-f]+", "X", l)))

            for l in text.splitlines()]


def header(text):
    return [l for l in masked(text) if l and not l[0].isspace() and not l.startswith("self ")]


def shape(doc):
    """Keys of the document and of its objects one level down."""
    return {k: sorted(v) if isinstance(v, dict) else type(v).__name__ for k, v in doc.items()}


raw_want = bytes.fromhex(glob.syms["vg_magic"]["hex"])
groups = {}
for name, kind, group, cmp, pid, path, rc, cmd in cases:
    w = f"{name} ({cmd})"
    out = os.path.join(os.environ["T"], name + ".out")
    if path != out:
        check(os.path.getsize(out) == 0, f"{w}: wrote to stdout despite -o/--output FILE")
    try:
        data = open(path, "rb").read()
    except OSError as e:
        check(False, f"{w}: exit {rc}; no output: {e}")
        continue
    eq(f"{w}: exit code", "0", rc)
    if kind == "json":
        v = check_json(data, w, group, pid)
    elif kind == "table":
        v = text_of(data, w)
    elif kind == "raw":
        v = data
        eq(f"{w}: bytes", raw_want.hex(), data.hex())
    elif kind == "pprof":
        v = check_pprof(data, w)
        v = " ".join(v) if v else v
    elif kind == "speedscope":
        v = check_speedscope(data, w)
    elif kind == "folded":
        v = check_folded(data, w)
    elif kind == "svg":
        v = check_svg(data, w)
    else:
        fail(f"harness: unknown kind {kind}")
    if v is None:
        continue
    if group.startswith("profile_"):
        text = v if isinstance(v, str) else json.dumps(v)
        # hot_a only: a 300 ms profile of a starved target may hold 20
        # samples, none of them in hot_b's 30 % once in 1,300 (0.7^20),
        # and there are a dozen profile routes; none in hot_a's 70 % is
        # 0.3^20.
        check("hot_a" in text, f"{w}: hot_a (70 % of the samples) not named")

    groups.setdefault(group, []).append((w, kind, cmp, data, v))

for group, outs in groups.items():
    w0, kind, cmp, data0, v0 = outs[0]
    for w, _, _, data, v in outs[1:]:
        what = f"{group}: {w} against {w0}"
        if cmp == "exact":
            check(data == data0, f"{what}: differ ({len(data)} and {len(data0)} bytes)")
        elif kind == "json":
            if cmp == "masked":
                eq(what + " (numbers masked)", masked(json.dumps(v0, indent=0)), masked(json.dumps(v, indent=0)))
            else:
                eq(what + " (keys)", shape(v0), shape(v))
        elif kind == "table":
            f = masked if cmp == "masked" else header
            eq_list(what + f" ({f.__name__})", f(v0), f(v))

# The saved set and the snapshot of each route load back with the same
# matches as the first scan found.
first = [v for w, k, c, d, v in groups.get("scan_first_json", [])]
for w, k, c, d, v in groups.get("scan_from_json", []) + groups.get("scan_cmp_json", []):
    check(v.get("matches_total", 0) > 0, f"{w}: no match")
    if first and "scan_from" in w:
        eq(f"{w}: matches_total (as the first scan)", first[0].get("matches_total"), v.get("matches_total"))
print(f"checked {len(cases)} outputs in {len(groups)} groups")
done()
PY
echo "ok: every output path complete"
