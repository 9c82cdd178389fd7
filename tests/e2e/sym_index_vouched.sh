#!/bin/bash
# sym_index_vouched: a persistent index written from the debug file that a
# search opens first answers without that file being opened, while it is
# still that file (device, inode, size and mtime, recorded in the index);
# the answers are byte-identical to the cold ones whichever way they come.
#
# libc, whose DWARF and .symtab are libc6-dbg's file in the build-id
# directory, at 60 addresses inside its functions (those of the debug
# file's .symtab: names libc's own .dynsym lacks):
#  1. --bin with the index `sym --index` wrote: strace shows the debug
#     file not opened (VIGIL_VERBOSE says so too) and the answers are
#     --no-cache's;
#  2. a live sleep, `sym PID ADDR` through /proc/PID/root: not opened
#     either, the answer --bin's at that offset;
#  3. the index's recorded origin one nanosecond off (header checksum
#     redone): the file is opened, the answers are the same, the index is
#     not rebuilt but restamped, and the next run opens nothing again,
#     the index then byte-identical to the one first written;
#  4. a symbol record flipped in a chunk the lookup reads: the stand-in
#     gives way to the file (opened), the answer is the cold one, the
#     index is rebuilt byte-identical.
source "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || harness_error "strace not installed (scripts/install-deps.sh test)"
libc=/lib/x86_64-linux-gnu/libc.so.6
bid=$(readelf -n "$libc" | sed -n 's/^ *Build ID: *//p')
[[ ${#bid} -ge 4 ]] || harness_error "no build-id in $libc"
dbgfile=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[[ -f $dbgfile ]] || harness_error "no $dbgfile: libc6-dbg is not installed (scripts/install-deps.sh test)"
cache=$T/cache

# 60 function symbols of the debug file, an address inside each.
mapfile -t addrs < <(nm -S --defined-only "$dbgfile" | "$PYTHON" -c "
import sys
fs = []
for line in sys.stdin:
    f = line.split()
    if len(f) == 4 and f[2] in 'tT' and int(f[1], 16) >= 8:
        fs.append((int(f[0], 16), int(f[1], 16)))
fs = sorted(set(fs))
step = max(1, len(fs) // 60)
for a, s in fs[::step][:60]:
    print(hex(a + s // 2))")
(( ${#addrs[@]} == 60 )) || harness_error "found ${#addrs[@]} function symbols in $dbgfile, not 60"

VIGIL_NO_CACHE=1 "$VIGIL" sym --bin "$libc" "${addrs[@]}" >"$T/cold.out" 2>"$T/cold.err" ||
	{ cat "$T/cold.err" >&2; fail "cold run exited $?"; }
VIGIL_CACHE_DIR=$cache "$VIGIL" sym --index "$libc" >"$T/build.out" 2>&1 ||
	{ cat "$T/build.out" >&2; fail "sym --index $libc failed"; }
idx=$cache/$bid.vsx
[[ -f $idx ]] || { cat "$T/build.out" >&2; fail "--index wrote no $idx"; }
cp "$idx" "$T/first.vsx"

# traced NAME ARGS...: vigil ARGS with the index, verbose, under strace
# (LeakSanitizer cannot run under ptrace: off there, the other tests keep
# it); NAME.out, NAME.err, NAME.trace.
traced() {
	local name=$1 rc=0
	shift
	VIGIL_CACHE_DIR=$cache VIGIL_VERBOSE=1 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -qq -e trace=open,openat,openat2 -o "$T/$name.trace" \
		"$VIGIL" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	(( rc == 0 )) || { cat "$T/$name.err" >&2; fail "$name: vigil ${1:-} ... exited $rc"; }
	grep -q 'openat' "$T/$name.trace" || harness_error "$name: strace recorded no openat"
}
opened() { grep -q "\.build-id/${bid:0:2}/${bid:2}\.debug\"" "$T/$1.trace"; }
said_vouched() { grep -q "written from .*${bid:2}\.debug as it is now: that file not opened" "$T/$1.err"; }
same_as_cold() {
	cmp -s "$T/cold.out" "$T/$1.out" || { diff "$T/cold.out" "$T/$1.out" | head >&2; fail "$1: answers differ from the cold ones"; }
}

# 1. --bin.
traced bin sym --bin "$libc" "${addrs[@]}"
same_as_cold bin
opened bin && fail "bin: the debug file was opened though the index was written from it"
said_vouched bin || { cat "$T/bin.err" >&2; fail "bin: VIGIL_VERBOSE did not say the index stood for the file"; }
grep -q "rebuilding\|restamped\|now written from" "$T/bin.err" && { cat "$T/bin.err" >&2; fail "bin: a good index was rewritten"; }
cmp -s "$idx" "$T/first.vsx" || fail "bin: the index changed"

# 2. A live process, through its root.
sleep 600 &
sleeper=$!
track_pid "$sleeper"
base=
for _ in $(seq 100); do
	base=$(awk '$6 ~ /\/libc\.so\.6$/ && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' "/proc/$sleeper/maps")
	[[ -n $base ]] && break
	sleep 0.02
done
[[ -n $base ]] || harness_error "sleep maps no libc.so.6"
live_addr=$(printf '0x%x' $((0x$base + ${addrs[0]})))
traced live sym "$sleeper" "$live_addr"
opened live && fail "live: the debug file was opened though the index was written from it"
grep -q "written from /proc/$sleeper/root/usr/lib/debug/\.build-id/.*as it is now" "$T/live.err" ||
	{ cat "$T/live.err" >&2; fail "live: VIGIL_VERBOSE did not say the index stood for the target's file"; }
# The frames (indented lines) of the first address, as --bin gives them.
diff <(sed -n '2,/^0x/p' "$T/cold.out" | grep '^ ') <(grep '^ ' "$T/live.out") >&2 ||
	fail "live: the frames of $live_addr differ from --bin's at ${addrs[0]}"
[[ $(head -1 "$T/live.out") == "$live_addr  "*"+0x"*"[build-id-dir]" ]] ||
	{ head -1 "$T/live.out" >&2; fail "live: the first line does not name the symbol and its source"; }

# 3. Another origin recorded: the file is opened, then the index restamped.
"$PYTHON" - "$idx" <<'PY' || harness_error "cannot rewrite the origin of $idx"
import struct, sys
def crc32c(crc, data, table=[]):
    if not table:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
# symindex.c's struct sx_header (its _Static_asserts): version at 8, crc
# at 24, sections from 288, the origin's source at 536 and mtime_nsec at
# 576, 584 bytes; the checksum covers it (crc zero) and the ranges, cus
# and str_crc sections (0, 1, 8).
d = bytearray(open(sys.argv[1], "rb").read())
assert struct.unpack_from("<II", d, 8) == (6, 584), struct.unpack_from("<II", d, 8)
assert struct.unpack_from("<I", d, 536)[0] == 2, "origin: not the build-id directory"
struct.pack_into("<q", d, 576, struct.unpack_from("<q", d, 576)[0] + 1)
c = crc32c(0, d[0:24])
c = crc32c(c, b"\0\0\0\0")
c = crc32c(c, d[28:584])
for s in (0, 1, 8):
    off, size = struct.unpack_from("<QQ", d, 288 + 16 * s)
    c = crc32c(c, d[off:off + size])
struct.pack_into("<I", d, 24, c)
open(sys.argv[1], "wb").write(d)
PY
cp "$idx" "$T/stale.vsx"
traced stale sym --bin "$libc" "${addrs[@]}"
same_as_cold stale
opened stale || fail "stale: the index records another file, yet the debug file was not opened"
said_vouched stale && fail "stale: an index recording another file stood for this one"
grep -q "rebuilding" "$T/stale.err" && { cat "$T/stale.err" >&2; fail "stale: the index was rebuilt, not restamped"; }
grep -q "symbol index $idx: now written from $dbgfile" "$T/stale.err" ||
	{ cat "$T/stale.err" >&2; fail "stale: the index was not restamped"; }
cmp -s "$idx" "$T/first.vsx" || fail "stale: the restamped index is not the one first written"
traced again sym --bin "$libc" "${addrs[@]}"
same_as_cold again
opened again && fail "again: the debug file was opened after the restamp"
said_vouched again || fail "again: the restamped index did not stand for the file"

# 4. A symbol record flipped where the lookup reads: the file after all.
read -r flip_at < <("$PYTHON" - "$idx" "${addrs[0]}" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
want = int(sys.argv[2], 16)
off, size = struct.unpack_from("<QQ", d, 288 + 16 * 9)  # SEC_SYMS: {vaddr, size, ...} of 32 bytes
for i in range(size // 32):
    vaddr, sz = struct.unpack_from("<QQ", d, off + 32 * i)
    if vaddr <= want < vaddr + sz:
        print(off + 32 * i + 8)
        break
PY
)
[[ -n ${flip_at:-} ]] || harness_error "no symbol record holds ${addrs[0]} in $idx"
printf '\x5a\x5a\x5a' | dd of="$idx" bs=1 seek="$flip_at" conv=notrunc status=none
traced flipped sym --bin "$libc" "${addrs[0]}"
[[ $(cat "$T/flipped.out") == "$(sed -n '1,/^0x/p' "$T/cold.out" | sed '$d')" ]] ||
	{ cat "$T/flipped.out" >&2; fail "flipped: the answer is not the cold one"; }
said_vouched flipped || fail "flipped: the index did not stand for the file before its check"
grep -q "checksum.*rebuilding it" "$T/flipped.err" || { cat "$T/flipped.err" >&2; fail "flipped: the bad chunk was not reported"; }
opened flipped || fail "flipped: the debug file was not opened to answer instead"
cmp -s "$idx" "$T/first.vsx" || fail "flipped: the index was not rebuilt identical"

echo "ok: libc at ${#addrs[@]} addresses answered from the index without its debug file (--bin and live), as cold; another origin opened it and was restamped; a flipped symbol chunk opened it and rebuilt the index"
