#!/bin/bash
# sym_debuginfod: `vigil sym --bin` of a stripped program whose debug file
# only a real debuginfod server has.  With DEBUGINFOD_URLS pointing at it,
# the answer comes from "debuginfod" with the exact file:line of a known
# function; without it, there is no line.  The program is built here, in the
# test's temp dir: its build-id is new (the DWARF holds the temp path), so
# no /usr/lib/debug file or earlier cache can answer for it, and it has no
# .gnu_debuglink.
source "$(dirname "$0")/lib.sh"

for tool in gcc objcopy strip nm curl debuginfod; do
	command -v "$tool" >/dev/null || harness_error "$tool not installed"
done

mkdir -p "$T/src" "$T/bin" "$T/srv" "$T/cache"
cat >"$T/src/prog.c" <<'EOF'
#include <stdio.h>

__attribute__((noipa)) int dbgd_work(const volatile int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i] * 7 + (s >> 3); return s; } /* DBGD_WORK_LINE */

int main(int argc, char **argv)
{
	volatile int v[3] = { argc, 5, 9 };

	(void)argv;
	printf("%d\n", dbgd_work(v, 3));
	return 0;
}
EOF
gcc -O2 -g -Wl,--build-id=sha1 -o "$T/full" "$T/src/prog.c" ||
	harness_error "cannot build the test program"
objcopy --only-keep-debug "$T/full" "$T/srv/prog.debug"
strip --strip-debug --strip-unneeded -o "$T/bin/prog" "$T/full"

want_line=$(grep -n 'DBGD_WORK_LINE' "$T/src/prog.c" | cut -d: -f1)
addr=0x$(nm "$T/full" | awk '$3 == "dbgd_work" { print $1 }')
[[ $addr != 0x ]] || harness_error "no dbgd_work in nm output"
build_id=$(readelf -n "$T/bin/prog" | sed -n 's/^ *Build ID: *//p')
[[ -n $build_id ]] || harness_error "the test program has no build-id"
[[ ! -e /usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug ]] ||
	harness_error "/usr/lib/debug already has the debug file of $build_id"

# A free port: bind port 0, read it back, release it for debuginfod.  Another
# process may take it in between; then debuginfod exits and we try again.
free_port() {
	"$PYTHON" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

start_debuginfod() {
	local try
	for ((try = 0; try < 5; try++)); do
		PORT=$(free_port)
		rm -f "$T/db.sqlite"
		# -t 0 -g 0: one scan at startup, no rescan or groom.
		debuginfod -F -p "$PORT" -d "$T/db.sqlite" -t 0 -g 0 -c 1 \
			"$T/srv" >"$T/debuginfod.log" 2>&1 </dev/null &
		DPID=$!
		track_pid "$DPID"
		sleep 0.3
		kill -0 "$DPID" 2>/dev/null && return 0
	done
	cat "$T/debuginfod.log" >&2
	harness_error "debuginfod did not start"
}
start_debuginfod

url=http://127.0.0.1:$PORT
for ((i = 0; ; i++)); do
	curl -sf -o "$T/fetched.debug" "$url/buildid/$build_id/debuginfo" && break
	kill -0 "$DPID" 2>/dev/null || { cat "$T/debuginfod.log" >&2; harness_error "debuginfod exited"; }
	((i < 300)) || { tail -20 "$T/debuginfod.log" >&2; harness_error "debuginfod did not index $T/srv within 30 s"; }
	sleep 0.1
done
cmp -s "$T/fetched.debug" "$T/srv/prog.debug" ||
	harness_error "debuginfod served another file for $build_id"

DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/cache \
	vg with sym --bin "$T/bin/prog" "$addr" --json
assert_rc 0
r='d["results"][0]'
assert_eq "source" debuginfod "$(jget "$T/with.out" "$r['source']")"
assert_eq "file" "$T/src/prog.c" "$(jget "$T/with.out" "$r['file']")"
assert_eq "line" "$want_line" "$(jget "$T/with.out" "$r['line']")"
assert_eq "function" dbgd_work "$(jget "$T/with.out" "$r['frames'][-1]['function']")"
assert_eq "frames[0].line" "$want_line" "$(jget "$T/with.out" "$r['frames'][0]['line']")"

# Without a server: same file, no line, and not from debuginfod.  A fresh
# cache, so the copy fetched above cannot answer.
DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$T/cache2 \
	vg without sym --bin "$T/bin/prog" "$addr" --json
assert_rc 0
src=$(jget "$T/without.out" "$r['source']")
case $src in
none | symtab | dynsym | eh_frame) ;;
*) show_last; fail "without DEBUGINFOD_URLS: source must be none, symtab, dynsym or eh_frame, got '$src'" ;;
esac
assert_eq "line without DEBUGINFOD_URLS" 0 "$(jget "$T/without.out" "$r['line']")"
assert_eq "file without DEBUGINFOD_URLS" None "$(jget "$T/without.out" "str($r['file'])")"

# vigil loads libdebuginfod only when asked (dlopen, as libdw does): without
# the library, DEBUGINFOD_URLS set, vigil still answers, without the line,
# and says why (the note on a debug-file search comes with an address no
# symbol or CFI names: the start of .init).  The library is hidden by a bind mount of /dev/null in a
# mount namespace of this run only.
lib=$(readlink -f "$(ldconfig -p | awk '$1 == "libdebuginfod.so.1" { print $NF; exit }')")
[[ -f $lib ]] || harness_error "no libdebuginfod.so.1 in the ld.so cache"
ldd "$VIGIL" | grep -q libdebuginfod && fail "vigil links libdebuginfod: it must load it on demand"
init=0x$(readelf -SW "$T/bin/prog" | awk '$2 == ".init" { print $4 }')
[[ $init != 0x ]] || harness_error "the test program has no .init"
rc=0
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/cache3 unshare -m sh -c \
	'mount --bind /dev/null "$1" && shift && exec "$@"' _ "$lib" \
	"$VIGIL" sym --bin "$T/bin/prog" "$addr" "$init" >"$T/nolib.out" 2>"$T/nolib.err" || rc=$?
(( rc == 0 )) || { cat "$T/nolib.err" >&2; fail "without libdebuginfod: exit $rc, want 0"; }
grep -q 'prog.c' "$T/nolib.out" && fail "without libdebuginfod: a line was found: $(cat "$T/nolib.out")"
grep -q 'cannot load libdebuginfod.so.1' "$T/nolib.out" ||
	fail "without libdebuginfod: no reason given: $(cat "$T/nolib.out")"
echo "ok: line $want_line of prog.c through debuginfod at $url, none without it or without the library"
