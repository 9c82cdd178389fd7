#!/bin/bash
# open_routes: the routes by which vigil opens a mapped ELF when
# /proc/PID/map_files is closed to it.  vigil runs as root with CAP_SYS_PTRACE
# but without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE (dropped from the
# bounding set, so from its permitted and effective sets too), which is what
# map_files needs.  Then:
#  1. ordinary images open via "proc_root", with the exact bias and build-id;
#  2. a deleted library opens via "target_memory" (exact bias, build-id, its
#     global read by address and by IMAGE:SYMBOL); a small one has all of its
#     file mapped, .symtab included;
#  3. a deleted library padded so that its section headers lie past what is
#     mapped: IMAGE:SYMBOL still works through the .dynsym that PT_DYNAMIC
#     points at, a warning says only dynamic symbols are available, and a
#     .symtab-only symbol (frame_dummy) is unknown (exit 2);
#  4. overlayfs copy-up: the file at the mapped path keeps device and inode
#     but gets new bytes (a changed build-id); the mapping keeps the lower
#     file.  Both map_files (full root) and proc_root open the NEW file, so
#     the kernel's build-id (PROCMAP_QUERY) must make vigil refuse them with
#     a warning and read the image from memory, with the old build-id;
#  5. in-place rewrite (dd conv=notrunc) of a mapped library on an ordinary
#     file system: the page cache changes, so the file, map_files, the
#     kernel's build-id and the target's own unmodified pages all show the
#     new build-id.  Nothing can tell, and vigil reports the new one without
#     a warning; the test checks that the target's memory agrees.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root (uid 0 with CAP_SYS_PTRACE, minus two capabilities)"

# nocaps CMD...: run without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE.
if setpriv --inh-caps=-sys_admin,-checkpoint_restore \
	--bounding-set=-sys_admin,-checkpoint_restore -- true 2>"$T/drop.err"; then
	nocaps() {
		setpriv --inh-caps=-sys_admin,-checkpoint_restore \
			--bounding-set=-sys_admin,-checkpoint_restore -- "$@"
	}
elif capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c true 2>>"$T/drop.err"; then
	nocaps() {
		capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c '"$@"' vigil "$@"
	}
else
	skip "neither setpriv nor capsh can drop cap_sys_admin/cap_checkpoint_restore: $(cat "$T/drop.err")"
fi
nocaps grep '^Cap' /proc/self/status >"$T/caps"
vg_py "$T/caps" <<'PY'
import sys
caps = dict(l.split(":\t") for l in open(sys.argv[1]).read().splitlines())
for k in ("CapPrm", "CapEff", "CapBnd"):
    v = int(caps[k], 16)
    for bit, name in ((21, "cap_sys_admin"), (40, "cap_checkpoint_restore")):
        if v >> bit & 1:
            sys.exit(f"FAIL: {name} still in {k} ({caps[k]}) under the capability drop")
    if not v >> 19 & 1:
        sys.exit(f"FAIL: cap_sys_ptrace missing from {k} ({caps[k]})")
PY

# vgnc NAME ARGS...: vg without the two capabilities.
vgnc() {
	local name=$1
	shift
	LAST=$name
	LAST_CMD="(caps dropped) vigil $*"
	set +e
	nocaps "$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
	set -e
}

# map_files must really be closed: listing works, opening must not.
map_files_closed() {
	local pid=$1 f
	f=$(ls "/proc/$pid/map_files" | head -n1)
	[[ -n $f ]] || harness_error "/proc/$pid/map_files is empty"
	if nocaps head -c4 "/proc/$pid/map_files/$f" >/dev/null 2>&1; then
		skip "/proc/$pid/map_files/$f still opens without cap_sys_admin and cap_checkpoint_restore"
	fi
}

# --- 1. proc_root ---------------------------------------------------------
truth=$T/globals
start_target tgt_globals_pie "$truth"
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
map_files_closed "$pid"
exe=$(truth_get "$truth" "obj main" | cut -d' ' -f3-)
vgnc root_maps maps "$pid" --json
assert_rc 0
vgnc root_read read "$pid" "$(basename "$exe"):vg_magic" --as u64 --json
assert_rc 0
vg_py "$truth" <<'PY'
import os, sys
from vgcheck import *
T = os.environ["T"]
truth = Truth(sys.argv[1])
m = load_json(f"{T}/root_maps.out")
check_header(m, "maps", truth.pid, "proc_root maps")
eq("proc_root maps: warnings", [], m["process"]["warnings"])
for o in truth.files():
    im = [i for i in get(m, "images") if i.get("path") == o["path"]]
    if not check(len(im) == 1, f"proc_root: one image {o['path']} expected, got {len(im)}"):
        continue
    im, w = im[0], f"proc_root: image {o['path']}"
    eq(f"{w} open_via", "proc_root", im.get("open_via"))
    eq(f"{w} opened_path", f"/proc/{truth.pid}/root{o['path']}", im.get("opened_path"))
    eq_addr(f"{w} load_bias", o["bias"], addr(w, im.get("load_bias")))
    eq(f"{w} bias_method", "exact", im.get("bias_method"))
    eq(f"{w} build_id", o["build_id"], im.get("build_id"))
r = load_json(f"{T}/root_read.out")
check_header(r, "read", truth.pid, "proc_root read")
sym = truth.syms["vg_magic"]
eq_addr("proc_root read: address", sym["runtime"], addr("address", r.get("address")))
eq("proc_root read: hex", sym["hex"][:16], r.get("hex"))
eq("proc_root read: value", str(int.from_bytes(bytes.fromhex(sym["hex"][:16]), "little")), str(r.get("value")))
done()
PY
echo "ok: proc_root"

# --- 2, 3. target_memory ----------------------------------------------------
head -c 65536 /dev/zero >"$T/pad"
objcopy --add-section .vgpad="$T/pad" --set-section-flags .vgpad=contents,readonly \
	"$TARGETS/libvgtestlib.so" "$T/libvgpad.so" 2>"$T/objcopy.err" ||
	harness_error "objcopy cannot pad the library: $(cat "$T/objcopy.err")"

for variant in small padded; do
	lib=$TARGETS/libvgtestlib.so
	[[ $variant == padded ]] && lib=$T/libvgpad.so
	truth=$T/deleted_$variant
	copy=$T/libvgdel_$variant.so
	start_target tgt_deleted "$truth" "$lib" "$copy"
	wait_truth "$truth" deleted
	pid=$(truth_get "$truth" pid)
	map_files_closed "$pid"
	rt=$(truth_sym "$truth" vglib_counter runtime)
	vgnc "mem_maps_$variant" maps "$pid" --json
	assert_rc 0
	vgnc "mem_img_$variant" read "$pid" "$(basename "$copy"):vglib_counter" --as u64 --json
	assert_rc 0
	vgnc "mem_rt_$variant" read "$pid" "$rt" 8 --json
	assert_rc 0
	vgnc "mem_local_$variant" read "$pid" "$(basename "$copy"):frame_dummy" 1 --json
	if [[ $variant == small ]]; then assert_rc 0; else assert_rc 2; fi
	vg_py "$truth" "$copy" "$variant" <<'PY'
import os, sys
from vgcheck import *
T = os.environ["T"]
truth, copy, variant = Truth(sys.argv[1]), sys.argv[2], sys.argv[3]
w = f"target_memory/{variant}"
m = load_json(f"{T}/mem_maps_{variant}.out")
check_header(m, "maps", truth.pid, w)
im = check_image(m, truth.obj(copy), w, deleted=True, open_via=("target_memory",))
if im:
    eq(f"{w}: opened_path", f"pid {truth.pid} memory at {im['low']}", im.get("opened_path"))
warn = [x for x in m["process"]["warnings"] if copy in x]
if variant == "small":
    eq(f"{w}: warnings about {copy} (its whole file is mapped, .symtab too)", [], warn)
else:
    check(len(warn) == 1 and "only its dynamic symbols (.dynsym)" in warn[0],
          f"{w}: expected one warning that only .dynsym is available, got {warn!r}")
sym = truth.syms["vglib_counter"]
for name in ("img", "rt"):
    doc = load_json(f"{T}/mem_{name}_{variant}.out")
    check_header(doc, "read", truth.pid, f"{w} {name}")
    check_value_read(doc, sym, f"{w} {name}")
doc = load_json(f"{T}/mem_img_{variant}.out")
eq(f"{w}: value as u64", str(0xc0ffee0012345678), str(doc.get("value")))
loc = load_json(f"{T}/mem_local_{variant}.out")
if variant == "small":
    eq(f"{w}: frame_dummy (.symtab) symbol", "frame_dummy", loc.get("symbol"))
else:
    check_error_doc(loc, 2, f"{w}: frame_dummy (.symtab only)")
    check("frame_dummy" in loc.get("error", {}).get("message", ""),
          f"{w}: error must name frame_dummy: {loc!r}")
done()
PY
	echo "ok: target_memory ($variant)"
done

# --- 4. overlayfs copy-up ---------------------------------------------------
ovl=$T/ovl
mkdir -p "$ovl/lower" "$ovl/upper" "$ovl/work" "$ovl/merged"
cp "$TARGETS/libvgtestlib.so" "$ovl/lower/libvgovl.so"
if ! unshare -m --propagation private sh -c \
	'mount -t overlay vgovl -o "lowerdir=$1/lower,upperdir=$1/upper,workdir=$1/work" "$1/merged"' \
	sh "$ovl" 2>"$T/ovl.err"; then
	echo "SKIP part: overlayfs copy-up (cannot mount overlay: $(cat "$T/ovl.err"))" >&2
else
	truth=$T/ovl_truth
	unshare -m --propagation private sh -c \
		'mount -t overlay vgovl -o "lowerdir=$1/lower,upperdir=$1/upper,workdir=$1/work" "$1/merged" && exec "$2" "$3" "$1/merged/libvgovl.so" now' \
		sh "$ovl" "$TARGETS/tgt_dlopen" "$truth" </dev/null &
	track_pid $!
	wait_truth "$truth" loaded
	pid=$(truth_get "$truth" pid)
	lib=$ovl/merged/libvgovl.so
	# Byte 0 of the build-id's descriptor (note header 12 + "GNU\0" 4).
	note=$(readelf -lW "$TARGETS/libvgtestlib.so" | awk '$1 == "NOTE" { print $2; exit }')
	[[ -n $note ]] || harness_error "no PT_NOTE in libvgtestlib.so"
	byte=$(od -An -tx1 -j $((note + 16)) -N1 "$TARGETS/libvgtestlib.so" | tr -d ' ')
	new=$(printf '%02x' $((0x$byte ^ 0xff)))
	printf "\\x$new" | dd of="/proc/$pid/root$lib" bs=1 seek=$((note + 16)) conv=notrunc status=none
	[[ -e $ovl/upper/libvgovl.so ]] || harness_error "no copy-up into $ovl/upper"
	vg ovl_full maps "$pid" --json
	assert_rc 0
	vgnc ovl_nocaps maps "$pid" --json
	assert_rc 0
	vg_py "$truth" "$lib" "$new" <<'PY'
import os, sys
from vgcheck import *
T = os.environ["T"]
truth, lib, new = Truth(sys.argv[1]), sys.argv[2], sys.argv[3]
o = truth.obj(lib)
changed = new + o["build_id"][2:]
for run, refused in (("full", ("map_files", "root")), ("nocaps", ("root",))):
    w = f"overlay copy-up ({run})"
    m = load_json(f"{T}/ovl_{run}.out")
    check_header(m, "maps", truth.pid, w)
    check_image(m, o, w, open_via=("target_memory",))
    warn = [x for x in m["process"]["warnings"] if lib in x]
    eq(f"{w}: number of warnings about {lib}", len(refused), len(warn))
    for x in warn:
        check(f"build-id {changed} on disk vs {o['build_id']} mapped" in x and "differs from the image mapped" in x,
              f"{w}: warning does not give both build-ids: {x!r}")
    for r in refused:
        check(any(f"/proc/{truth.pid}/{'map_files/' if r == 'map_files' else 'root' + lib}" in x for x in warn),
              f"{w}: no warning refusing the {r} route: {warn!r}")
done()
PY
	echo "ok: overlayfs copy-up refused (map_files and proc_root), read from memory"
fi

# --- 5. in-place rewrite on an ordinary file system -------------------------
truth=$T/inplace_truth
lib=$T/libvginplace.so
cp "$TARGETS/libvgtestlib.so" "$lib"
start_target tgt_dlopen "$truth" "$lib" now
wait_truth "$truth" loaded
pid=$(truth_get "$truth" pid)
note=$(readelf -lW "$lib" | awk '$1 == "NOTE" { print $2; exit }')
byte=$(od -An -tx1 -j $((note + 16)) -N1 "$lib" | tr -d ' ')
new=$(printf '%02x' $((0x$byte ^ 0xff)))
printf "\\x$new" | dd of="$lib" bs=1 seek=$((note + 16)) conv=notrunc status=none
bias=$(grep -F " $lib" "$truth" | grep '^obj' | cut -d' ' -f3)
vg inplace_full maps "$pid" --json
assert_rc 0
vgnc inplace_nocaps maps "$pid" --json
assert_rc 0
vg inplace_mem read "$pid" "$(printf 0x%x $((bias + note + 16)))" 1 --json
assert_rc 0
vg_py "$truth" "$lib" "$new" <<'PY'
import os, sys
from vgcheck import *
T = os.environ["T"]
truth, lib, new = Truth(sys.argv[1]), sys.argv[2], sys.argv[3]
o = dict(truth.obj(lib))
o["build_id"] = new + o["build_id"][2:]
eq("in-place: the target's own page shows the new byte", new, load_json(f"{T}/inplace_mem.out").get("hex"))
for run, via in (("full", "map_files"), ("nocaps", "proc_root")):
    w = f"in-place rewrite ({run})"
    m = load_json(f"{T}/inplace_{run}.out")
    check_header(m, "maps", truth.pid, w)
    check_image(m, o, w, open_via=(via,))
    eq(f"{w}: warnings about {lib}", [], [x for x in m["process"]["warnings"] if lib in x])
done()
PY
echo "ok: in-place rewrite is invisible (file, kernel and memory agree)"

# --- 6. deleted main executable: proc_exe ------------------------------------
# /proc/PID/exe reaches the deleted executable's exact inode without
# CAP_SYS_ADMIN, so its .symtab (local symbols such as vg_magic) stays
# available; the memory route would only offer .dynsym.
exe_copy=$T/exe/tgt_globals_copy
mkdir -p "$T/exe"
cp "$TARGETS/tgt_globals_pie" "$exe_copy"
truth=$T/exe.truth
"$exe_copy" "$truth" &
track_pid $!
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)
rm -f "$exe_copy"
vgnc exe_maps maps "$pid" --json
assert_rc 0
vgnc exe_read read "$pid" vg_magic 8 --json
assert_rc 0 "read of a local symbol of a deleted executable without cap_sys_admin"
vg_py "$truth" <<'PY'
import os, sys
from vgcheck import *
T = os.environ["T"]
truth = Truth(sys.argv[1])
m = load_json(f"{T}/exe_maps.out")
main = [i for i in m["images"] if i["is_main"]]
eq("deleted exe: main images", len(main), 1)
eq("deleted exe: open_via", main[0]["open_via"], "proc_exe")
eq("deleted exe: deleted", main[0]["deleted"], True)
want = [o for o in truth.objs if o["kind"] == "main"][0]
eq("deleted exe: bias", HexInt(int(main[0]["load_bias"], 16)), HexInt(want["bias"]))
eq("deleted exe: build-id", main[0]["build_id"], want["build_id"])
check_value_read(load_json(f"{T}/exe_read.out"), truth.syms["vg_magic"], "deleted exe read")
done()
PY
echo "ok: deleted main executable via proc_exe"
