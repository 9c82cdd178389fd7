#!/bin/bash
# json_schema: every kind of JSON document vigil prints validates against
# its schema in docs/json-schema/ (maps.json, read.json, error.json,
# version.json; common.json holds the shared parts).  The schemas close
# their objects (additionalProperties: false), so a key the code adds
# without documenting it fails here: the documentation stays true.
# Documents come from real targets: maps by text and by PROCMAP_QUERY, a
# deleted library, a TID, a program whose file name is not UTF-8 and holds a
# newline (KEY_hex, name_ambiguous); read with every --as type, arrays, a
# remainder, --bin, each source, a read stopped by an unmapped page; errors
# of every stage; --version.
source "$(dirname "$0")/lib.sh"

SCHEMA_DIR=$(cd "$E2E_DIR/../../docs/json-schema" && pwd) ||
	harness_error "docs/json-schema not found next to tests/e2e"

# jsonschema is not stdlib, and vg_py runs Python with -S (no site-packages):
# use the first interpreter that has it, lib.sh's own first.
SCHEMA_PY=
for py in "$PYTHON" /usr/bin/python3; do
	if [[ -x $py ]] && "$py" -c 'import jsonschema' 2>/dev/null; then
		SCHEMA_PY=$py
		break
	fi
done
[[ -n $SCHEMA_PY ]] ||
	harness_error "python3-jsonschema is not installed: run scripts/install-deps.sh (tried $PYTHON and /usr/bin/python3)"

start_target tgt_globals_pie "$T/pie.truth"
start_target tgt_globals_nonpie "$T/nonpie.truth"
start_target tgt_deleted "$T/del.truth" "$TARGETS/libvgtestlib.so" "$T/libvgcopy.so"
start_target tgt_threads "$T/thr.truth"
# The same program under a file name that is not UTF-8 and holds a newline:
# comm_hex, path_hex, opened_path_hex, image_hex; "\012" in the maps text.
odd=$T/$'vg\xff\nodd'
cp "$TARGETS/tgt_globals_pie" "$odd"
"$odd" "$T/odd.truth" </dev/null &
track_pid $!
wait_truth "$T/pie.truth" ready
wait_truth "$T/nonpie.truth" ready
wait_truth "$T/del.truth" deleted
wait_truth "$T/thr.truth" ready
wait_truth "$T/odd.truth" ready

pid=$(truth_get "$T/pie.truth" pid)
# shellcheck disable=SC2034  # read through ${!p} below
nonpie=$(truth_get "$T/nonpie.truth" pid)
delpid=$(truth_get "$T/del.truth" pid)
thrpid=$(truth_get "$T/thr.truth" pid)
tid=$(truth_get "$T/thr.truth" tid)
oddpid=$(truth_get "$T/odd.truth" pid)
exe=$(truth_sym "$T/pie.truth" vg_magic path)
other_exe=$(truth_sym "$T/nonpie.truth" vg_magic path)
st=$(truth_sym "$T/pie.truth" vg_magic static)
[[ $tid != "$thrpid" ]] || harness_error "thread id equals the pid"

# A pid that names no process: a child that has been reaped.
true &
dead=$!
wait "$dead" || true
[[ ! -e /proc/$dead ]] || harness_error "pid $dead still exists"

# Each run: NAME SCHEMA EXPECTED_EXIT, then vigil's arguments.  Recorded in
# $T/cases for the one Python pass below.
: >"$T/cases"
run() {
	local name=$1 schema=$2 want=$3
	shift 3
	vg "$name" "$@"
	assert_rc "$want"
	printf '%s\t%s\t%s\t%s\n' "$name" "$schema" "$RC" "$LAST_CMD" >>"$T/cases"
}

# maps: every source, PIE and non-PIE, a deleted library, a TID, odd names.
for src in text query; do
	for p in pid nonpie delpid oddpid; do
		VIGIL_MAPS_SOURCE=$src run "maps_${src}_$p" maps 0 maps "${!p}" --json
	done
done
run maps_default maps 0 maps "$oddpid" --json
run maps_tid maps 0 maps "$tid" --json

# read: every --as type (its own size), arrays, a remainder, str.
while read -r name args; do
	# shellcheck disable=SC2086
	run "read_$name" read 0 read "$pid" $args --json
done <<EOF
u8 vg_magic --as u8
u16 vg_u16 --as u16
u32 vg_magic --as u32
u64 vg_magic --as u64
i8 vg_magic --as i8
i16 vg_u16 --as i16
i32 vg_neg --as i32
i64 vg_neg --as i64
f32 vg_float --as f32
f64 vg_double --as f64
ptr vg_ptr --as ptr
ptr_unmapped vg_magic --as ptr
str vg_text --as str
str_len vg_text 8 --as str
arr_u8 vg_magic 8 --as u8
arr_u32 vg_magic 16 --as u32
arr_i64 vg_magic 16 --as i64
arr_f32 vg_float 8 --as f32
arr_f64 vg_double 16 --as f64
arr_ptr vg_ptr 16 --as ptr
remainder vg_magic 7 --as u16
dump vg_magic
dump_len vg_text 32
symoff vg_magic+4 4
imgsym tgt_globals_pie:vg_magic 8
src_mem vg_magic 8 --source proc_pid_mem
bin vg_magic 8 --bin $exe
EOF
rt=$(truth_sym "$T/pie.truth" vg_magic runtime)
run read_bin_force read 0 read "$pid" "$rt" 8 --bin "$other_exe" --force-bin --json
run read_static read 0 read "$pid" "@$st" 8 --json
run read_runtime read 0 read "$pid" "$rt" 8 --json
run read_tid read 0 read "$tid" vg_magic 8 --json
run read_odd read 0 read "$oddpid" vg_magic 8 --as u64 --json
run read_deleted read 0 read "$delpid" libvgcopy.so:vglib_counter --as u64 --json

# The first page of the executable through the file itself (image_file).
low=$(jget "$T/maps_text_pid.out" '[i["low"] for i in d["images"] if i["is_main"]][0]')
run read_image_file read 0 read "$pid" "$low" 16 --source image_file --json

# A read that runs into an unmapped page stops there: complete false, error.
gap_end=$(jget "$T/maps_text_pid.out" \
	'[r["end"] for r, n in zip(d["regions"], d["regions"][1:]) if r["perms"][0] == "r" and n["start"] != r["end"]][0]')
run read_partial read 2 read "$pid" "$(printf '0x%x' $((gap_end - 8)))" 16 --json
run read_partial_as read 2 read "$pid" "$(printf '0x%x' $((gap_end - 4)))" --as u64 --json
run read_partial_arr read 2 read "$pid" "$(printf '0x%x' $((gap_end - 12)))" 16 --as u32 --json

# Errors at every stage: command line, PID, target, address, --bin.
run err_unknown_command error 2 --json bogus
run err_no_command error 2 --json
run err_help_bogus error 2 --json help bogus
run err_maps_option error 2 maps --bogus "$pid" --json
run err_read_option error 2 read --bogus "$pid" vg_magic --json
run err_maps_pid error 2 maps abc --json
run err_dead_maps error 4 maps "$dead" --json
run err_dead_read error 4 read "$dead" 0x1000 --json
run err_bad_address error 2 read "$pid" 0x10 --json
run err_bad_hex error 2 read "$pid" 0xzz --json
run err_no_symbol error 2 read "$pid" nosuchsymbol --json
run err_bad_type error 2 read "$pid" vg_magic 8 --as u128 --json
run err_bin_mismatch error 2 read "$pid" vg_magic 8 --bin "$other_exe" --json
run err_bin_missing error 2 read "$pid" vg_magic 8 --bin "$T/nosuchfile" --json
VIGIL_MAPS_SOURCE=bogus run err_maps_source error 2 maps "$pid" --json

# Version.
run version version 0 --json --version
run version_short version 0 --json -V

"$SCHEMA_PY" - "$SCHEMA_DIR" "$T/cases" <<'PY'
import copy, json, os, sys
from importlib import metadata
from vgcheck import *

try:
    import jsonschema
    from jsonschema import Draft202012Validator as V
except ImportError:
    print("HARNESS ERROR: python3-jsonschema is not installed: run scripts/install-deps.sh",
          file=sys.stderr)
    sys.exit(99)

sdir, cases = sys.argv[1], sys.argv[2]
T = os.environ["T"]
NAMES = ("common", "maps", "read", "error", "version")
schemas = {}
for n in NAMES:
    schemas[n] = load_json(f"{sdir}/{n}.json")
    try:
        V.check_schema(schemas[n])
    except jsonschema.exceptions.SchemaError as e:
        fail(f"docs/json-schema/{n}.json is not a valid draft 2020-12 schema: {e.message} "
             f"at {'/'.join(map(str, e.absolute_path))}")
    eq(f"{n}.json: $id", f"https://vigil.invalid/json-schema/{n}.json", schemas[n].get("$id"))
on_disk = sorted(f[:-5] for f in os.listdir(sdir) if f.endswith(".json"))
eq("schema files in docs/json-schema", sorted(NAMES), on_disk)

# Cross-file "$ref"s resolve from memory: jsonschema >= 4.18 through
# referencing, older ones (Debian 12 has 4.10) through RefResolver.
try:
    from referencing import Registry, Resource
    registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in schemas.values()])
    validator = lambda s: V(s, registry=registry)
except ImportError:
    store = {s["$id"]: s for s in schemas.values()}
    validator = lambda s: V(s, resolver=jsonschema.RefResolver.from_schema(s, store=store))
validators = {n: validator(schemas[n]) for n in NAMES if n != "common"}


def resolve(node, here):
    """The schema a local or common.json "$ref" points at."""
    ref = node.get("$ref")
    if ref is None:
        return node
    f, _, ptr = ref.partition("#")
    cur = schemas[f[:-5]] if f else here
    for part in ptr.strip("/").split("/"):
        cur = cur[part]
    return resolve(cur, schemas[f[:-5]] if f else here)


def walk_descriptions(node, here, where):
    """Every property is documented: one line of description, on the
    property or on what its $ref names (the conditions under allOf only
    narrow properties declared and described above them)."""
    if isinstance(node, dict):
        for k, sub in node.get("properties", {}).items():
            d = sub.get("description") or resolve(sub, here).get("description")
            check(isinstance(d, str) and d and "\n" not in d,
                  f"{where}: property {k!r} has no one-line description")
        for k, sub in node.items():
            if k not in ("allOf", "anyOf", "oneOf", "not", "if", "then", "else"):
                walk_descriptions(sub, here, f"{where}/{k}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            walk_descriptions(sub, here, f"{where}/{i}")


for n in NAMES:
    walk_descriptions(schemas[n], schemas[n], f"{n}.json")


def errors(schema, doc):
    return sorted(validators[schema].iter_errors(doc), key=lambda e: list(e.absolute_path))


docs = {}
seen = {}
with open(cases) as f:
    for line in f.read().splitlines():
        name, schema, rc, cmd = line.split("\t")
        doc = load_json(f"{T}/{name}.out")
        docs[name] = doc
        for e in errors(schema, doc)[:5]:
            at = "/".join(map(str, e.absolute_path)) or "(document)"
            check(False, f"{cmd}: not valid against {schema}.json at {at}: {e.message}")
        if schema == "error":
            eq(f"{cmd}: error.exit_code is the exit status", int(rc), doc["error"]["exit_code"])
        seen.setdefault(schema, 0)
        seen[schema] += 1

        # What a schema cannot say: counts and lengths agree.
        if schema == "maps":
            eq(f"{cmd}: region_count", len(doc["regions"]), doc["region_count"])
        if schema == "read":
            eq(f"{cmd}: hex has bytes_read bytes", 2 * doc["bytes_read"], len(doc["hex"]))
            eq(f"{cmd}: complete", doc["bytes_read"] == doc["length"], doc["complete"])
            eq(f"{cmd}: segments cover the bytes read", doc["bytes_read"],
               sum(s["length"] for s in doc["segments"]))

# The documents that carry the rarer keys did carry them (else the schema
# for those keys went untested).
def has(name, *path):
    cur = docs[name]
    for k in path:
        if isinstance(cur, list):
            cur = [c[k] for c in cur if isinstance(c, dict) and k in c]
            if not cur:
                return False
            cur = cur[0]
        elif isinstance(cur, dict) and k in cur:
            cur = cur[k]
        else:
            return False
    return True

for name, path in [
    ("maps_tid", ("process", "requested_pid")),
    ("maps_text_oddpid", ("process", "comm_hex")),
    ("maps_text_oddpid", ("regions", "path_hex")),
    ("maps_text_oddpid", ("regions", "name_ambiguous")),
    ("maps_default", ("images", "path_hex")),
    ("maps_text_delpid", ("images", "deleted")),
    ("read_odd", ("image_hex",)),
    ("read_odd", ("region", "path_hex")),
    ("read_tid", ("process", "requested_pid")),
    ("read_ptr", ("points_to",)),
    ("read_arr_u32", ("values",)),
    ("read_remainder", ("undecoded_bytes",)),
    ("read_str", ("nul_terminated",)),
    ("read_bin", ("binary_match",)),
    ("read_partial", ("error",)),
]:
    check(has(name, *path), f"{name}: expected key {'.'.join(path)} (test coverage)")
eq("maps_text_nonpie: main elf_type", ["exec"],
   [i["elf_type"] for i in docs["maps_text_nonpie"]["images"] if i["is_main"]])
eq("maps_query_pid: maps_source", "procmap_query", docs["maps_query_pid"]["maps_source"])
eq("read_partial_as: value", None, docs["read_partial_as"].get("value"))
eq("read_image_file: source", "image_file", docs["read_image_file"]["source"])
eq("read_src_mem: source", "proc_pid_mem", docs["read_src_mem"]["source"])
eq("read_bin_force: binary_match", "mismatch", docs["read_bin_force"].get("binary_match"))
check(any(d["deleted"] for d in docs["maps_query_delpid"]["regions"]),
      "maps_query_delpid: no deleted region")

# The schemas are strict: an undocumented key, a wrong type or a missing
# key fails.
def must_fail(schema, doc, what):
    check(errors(schema, doc), f"{schema}.json accepts a document with {what}")

for name, schema, mutate, what in [
    ("maps_text_pid", "maps", lambda d: d.update(bogus=1), "an undocumented top-level key"),
    ("maps_text_pid", "maps", lambda d: d["regions"][0].update(bogus=1), "an undocumented region key"),
    ("maps_text_pid", "maps", lambda d: d["images"][0].update(bogus=1), "an undocumented image key"),
    ("maps_text_pid", "maps", lambda d: d["process"].update(bogus=1), "an undocumented process key"),
    ("maps_text_pid", "maps", lambda d: d["regions"][0].update(start=4096), "a numeric address"),
    ("maps_text_pid", "maps", lambda d: d["regions"][0].update(kind="weird"), "an unknown region kind"),
    ("maps_text_pid", "maps", lambda d: d["images"][0].update(open_via="magic"), "an unknown open_via"),
    ("maps_text_pid", "maps", lambda d: d["images"][0].pop("build_id"), "no build_id"),
    ("read_u64", "read", lambda d: d.update(value=1), "a u64 value as a JSON number"),
    ("read_u32", "read", lambda d: d.update(value="1"), "a u32 value as a string"),
    ("read_dump", "read", lambda d: d.update(value=1), "a value without --as"),
    ("read_dump", "read", lambda d: d["region"].update(bogus=1), "an undocumented region key"),
    ("read_dump", "read", lambda d: d.update(source="magic"), "an unknown source"),
    ("read_partial", "read", lambda d: d.pop("error"), "complete false and no error"),
    ("read_partial", "read", lambda d: d["error"].update(bogus=1), "an undocumented error key"),
    ("read_str", "read", lambda d: d.update(values=["a", "b"]), "values with --as str"),
    ("err_bad_address", "error", lambda d: d.update(address="0x10"), "a read key in an error"),
    ("version", "version", lambda d: d.update(process={}), "a process object"),
]:
    d = copy.deepcopy(docs[name])
    mutate(d)
    must_fail(schema, d, what)

done()
print("ok: " + ", ".join(f"{n} {schema}.json" for schema, n in sorted(seen.items()))
      + f" documents valid (jsonschema {metadata.version('jsonschema')}"
      + f" on {sys.executable})")
PY
