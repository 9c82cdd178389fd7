#!/bin/bash
# mount_namespace: the target lives in its own mount namespace and loads a
# library from a path that does not exist outside it (a bind mount, then a
# tmpfs).  vigil must still open the image (through /proc/PID/map_files or
# /proc/PID/root), with the exact bias and the build-id, and read its global.
source "$(dirname "$0")/lib.sh"

require_mount_namespace

mkdir -p "$T/a" "$T/b" "$T/c"
cp "$TARGETS/libvgtestlib.so" "$T/a/libvgns.so"

# case 1: $T/a bound on $T/b; case 2: a tmpfs on $T/c holding the library.
unshare -m --propagation private sh -c \
	'mount --bind "$1" "$2" && exec "$3" "$4" "$2/libvgns.so" now' \
	sh "$T/a" "$T/b" "$TARGETS/tgt_dlopen" "$T/truth_bind" </dev/null &
track_pid $!
unshare -m --propagation private sh -c \
	'mount -t tmpfs vgtmp "$1" && cp "$2" "$1/libvgtmp.so" && exec "$3" "$4" "$1/libvgtmp.so" now' \
	sh "$T/c" "$T/a/libvgns.so" "$TARGETS/tgt_dlopen" "$T/truth_tmpfs" </dev/null &
track_pid $!

for case in bind tmpfs; do
	truth=$T/truth_$case
	wait_truth "$truth" loaded
	pid=$(truth_get "$truth" pid)
	lib=$(truth_sym "$truth" vglib_counter path)
	[[ ! -e $lib ]] || harness_error "$lib is visible outside the target's mount namespace"
	name=$(basename "$lib")
	for src in query text; do
		export VIGIL_MAPS_SOURCE=$src
		vg "maps_${case}_$src" maps "$pid" --json
		assert_rc 0
		vg "read_${case}_$src" read "$pid" "$name:vglib_counter" 8 --json
		assert_rc 0
		vg_py "$truth" "$lib" "$T/maps_${case}_$src.out" "$T/read_${case}_$src.out" "$case/$src" <<'PY'
import sys
from vgcheck import *
truth, lib, w = Truth(sys.argv[1]), sys.argv[2], sys.argv[5]
m, r = load_json(sys.argv[3]), load_json(sys.argv[4])
check_header(m, "maps", truth.pid, w + " maps")
check_image(m, truth.obj(lib), w)
check_header(r, "read", truth.pid, w + " read")
check_value_read(r, truth.syms["vglib_counter"], w + " read")
done()
PY
		unset VIGIL_MAPS_SOURCE
		echo "ok: $case/$src"
	done
done
