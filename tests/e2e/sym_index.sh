#!/bin/bash
# sym_index: the persistent symbol index (sym/symcache.h) answers exactly
# as the DWARF does, and a bad index file is rebuilt, never believed.
#
# tgt_inline (inline chains, several CUs) is symbolized --bin at every
# 3rd byte of its .text (lines, padding, inline frames): cold with
# --no-cache (nothing may be written), then after `sym --index` (which
# must say where it wrote and how much, 0600 in a 0700 directory), then
# with the index truncated, with a byte flipped in the CU table, in the
# line rows and in the strings (the last two are checked lazily, at the
# first lookup that reads them), and replaced by the index
# of another file (libvgsym_a.so: a foreign build-id).  Every answer must
# be byte-identical to the cold one; every bad file must be reported
# (VIGIL_VERBOSE=1) and rewritten byte-identical to the good one.  A run
# with a good index must use it: same inode (not rewritten), mtime touched
# (the eviction clock).  Last, the bound: with VIGIL_CACHE_MAX too small
# for all three indexes, writing one removes the least recently used.
# At a terminal, the first run's index is written after the answers by a
# detached process, not before the command returns.
source "$(dirname "$0")/lib.sh"

bin=$TARGETS/tgt_inline
other=$TARGETS/libvgsym_a.so
cache=$VIGIL_CACHE_DIR
[[ $cache == "$T"/* ]] || fail "lib.sh must point VIGIL_CACHE_DIR into the test's directory"

read -r lo size < <(readelf -SW "$bin" | awk '$2 == ".text" { print $4, $6 }')
[[ -n ${lo:-} ]] || harness_error "no .text in $bin"
mapfile -t addrs < <("$PYTHON" -c "
lo, size = int('$lo', 16), int('$size', 16)
for a in range(lo, lo + size, 3): print('0x%x' % a)")
(( ${#addrs[@]} > 100 )) || harness_error "only ${#addrs[@]} addresses"

symbolize() {  # NAME [ENV=VAL...]
	local name=$1
	shift
	env "$@" "$VIGIL" sym --bin "$bin" "${addrs[@]}" >"$T/$name.out" 2>"$T/$name.err" || {
		cat "$T/$name.err" >&2
		fail "$name: vigil sym exited $?"
	}
	cmp -s "$T/cold.out" "$T/$name.out" || {
		diff "$T/cold.out" "$T/$name.out" | head -20 >&2
		fail "$name: answers differ from the cold ones"
	}
}

# Cold: no index read or written.
"$VIGIL" --no-cache sym --bin "$bin" "${addrs[@]}" >"$T/cold.out" 2>"$T/cold.err" ||
	fail "cold run exited $?"
grep -q ' at .*:[0-9]' "$T/cold.out" || grep -q '#1' "$T/cold.out" || fail "cold answers have no frames"
[[ ! -e $cache ]] || fail "--no-cache wrote $(ls -R "$cache")"
VIGIL_NO_CACHE=1 "$VIGIL" sym --bin "$bin" 0x0 >/dev/null 2>&1 || true
[[ ! -e $cache ]] || fail "VIGIL_NO_CACHE=1 wrote into $cache"

# Built ahead.
vg build sym --index "$bin"
assert_rc 0
read -r idx bytes < <(sed -n 's/^.*: wrote \(.*\) (\([0-9]*\) bytes)$/\1 \2/p' "$T/build.out")
[[ -n ${idx:-} && -f $idx ]] || { show_last; fail "--index did not say what it wrote"; }
[[ $(stat -c %s "$idx") == "$bytes" ]] || fail "--index said $bytes bytes, $idx has $(stat -c %s "$idx")"
[[ $(stat -c %a "$idx") == 600 ]] || fail "$idx is mode $(stat -c %a "$idx"), not 600"
[[ $(stat -c %a "$cache") == 700 ]] || fail "$cache is mode $(stat -c %a "$cache"), not 700"
cp "$idx" "$T/good.vsx"
vg again sym --index "$bin"
assert_rc 0
grep -q "up to date: $idx ($bytes bytes)" "$T/again.out" || { show_last; fail "a second --index rebuilt"; }

# Warm: the index is used (not rewritten: same inode; touched).
inode=$(stat -c %i "$idx")
touch -d '2001-01-01' "$idx"
symbolize warm
[[ $(stat -c %i "$idx") == "$inode" ]] || fail "a good index was rewritten"
(( $(stat -c %Y "$idx") > $(date -d 2001-01-02 +%s) )) || fail "using the index did not touch its mtime"

# The index answers the symbol table too (.symtab is neither read nor
# sorted): a copy with one symbol renamed (objcopy keeps the build-id, so
# the index is the original's) still says the original name with the
# index, the new one without.
die_at=$(nm "$bin" | awk '$3 == "die" { print "0x" $1 }')
[[ -n $die_at ]] || harness_error "no symbol die in $bin"
objcopy --redefine-sym die=die_renamed "$bin" "$T/renamed" || harness_error "objcopy failed"
"$VIGIL" sym --bin "$T/renamed" "$die_at" >"$T/renamed_warm.out" 2>&1 || fail "renamed, warm: exited $?"
grep -q "  die+0x0  " "$T/renamed_warm.out" ||
	{ cat "$T/renamed_warm.out" >&2; fail "the index did not answer the symbol (the ELF's was read)"; }
"$VIGIL" sym --no-cache --bin "$T/renamed" "$die_at" >"$T/renamed_cold.out" 2>&1 || fail "renamed, cold: exited $?"
grep -q "  die_renamed+0x0  " "$T/renamed_cold.out" ||
	{ cat "$T/renamed_cold.out" >&2; fail "without the index, the renamed symbol was not read"; }

# At a terminal (a pty from script(1)) the first run's index is written by
# a detached process after the answers (VG_SYM_DETACH_INDEX): it appears,
# identical to the one --index wrote.
tty_cache=$T/tty-cache
VIGIL_CACHE_DIR=$tty_cache script -qec "$VIGIL sym --bin $bin ${addrs[0]}" /dev/null >"$T/tty.out" 2>&1 ||
	{ cat "$T/tty.out" >&2; fail "the run at a terminal exited $?"; }
grep -q "^${addrs[0]} " "$T/tty.out" || { cat "$T/tty.out" >&2; fail "the run at a terminal printed no answer"; }
for _ in $(seq 300); do
	[[ -f $tty_cache/${idx##*/} ]] && break
	sleep 0.1
done
cmp -s "$tty_cache/${idx##*/}" "$T/good.vsx" ||
	fail "the detached writer left no index identical to --index's in $tty_cache: $(ls -la "$tty_cache" 2>&1)"

# Bad files: told (verbose), answers unchanged, rebuilt.
bad_case() {  # NAME EXPECTED-REASON
	symbolize "$1" VIGIL_VERBOSE=1
	grep -q "symbol index $idx: .*$2.*rebuilding it" "$T/$1.err" ||
		{ cat "$T/$1.err" >&2; fail "$1: not reported as '$2'"; }
	cmp -s "$idx" "$T/good.vsx" || fail "$1: the index was not rebuilt identical"
}
truncate -s $((bytes / 2)) "$idx"
bad_case truncated "truncated"
# A flipped byte in the middle of a section (offset, size at 288 + 16 * i
# of the header, symindex.c): 1 the CU table (checked at load), 5 the
# line rows, 7 the strings and 9 the ELF symbols (checked by chunk at the
# first lookup that reads them: these addresses read every row and
# string).
# In the rows (12-byte records: file, line, column), the line of the
# middle row: nothing but a checksum can tell that one is wrong.
flip() {  # SECTION [RECORD-SIZE FIELD-OFFSET]
	local at
	at=$("$PYTHON" -c "
import struct, sys
off, size = struct.unpack_from('<QQ', open(sys.argv[1], 'rb').read(), 288 + 16 * $1)
rec, field = int(sys.argv[2]), int(sys.argv[3])
print(off + (size // rec // 2) * rec + field)" "$idx" "${2:-1}" "${3:-0}")
	printf '\x5a' | dd of="$idx" bs=1 seek="$at" conv=notrunc status=none
	cmp -s "$idx" "$T/good.vsx" && harness_error "the flip in section $1 changed nothing"
	return 0
}
flip 1
bad_case flip_cus "checksum"
flip 5 12 4
bad_case flip_rows "checksum"
flip 7
bad_case flip_strings "checksum"
# 9: the ELF symbol table (32-byte records: vaddr, size, limit, name),
# the size of the middle symbol: checked at the first symbol lookup.
flip 9 32 8
bad_case flip_syms "checksum"
vg other sym --index "$other"
assert_rc 0
other_idx=$(sed -n 's/^.*: wrote \(.*\) ([0-9]* bytes)$/\1/p' "$T/other.out")
cp "$other_idx" "$idx"
bad_case foreign "built for another file"
: >"$idx"
bad_case empty "empty, or not a regular file"

# The bound: three indexes, room for two: the least recently used goes.
small=$TARGETS/libvgsym_b.so
vg small sym --index "$small"
assert_rc 0
small_idx=$(sed -n 's/^.*: wrote \(.*\) ([0-9]* bytes)$/\1/p' "$T/small.out")
touch -d '2001-01-01' "$other_idx"   # oldest
touch -d '2002-01-01' "$small_idx"
rm "$idx"
max=$(( bytes + $(stat -c %s "$small_idx") + 100 ))
VIGIL_CACHE_MAX=$max "$VIGIL" sym --index "$bin" >"$T/bound.out" 2>&1 || fail "--index under a bound failed"
[[ -f $idx && -f $small_idx ]] || fail "the bound removed a recent index: $(ls "$cache")"
[[ ! -e $other_idx ]] || fail "the least recently used index was kept over VIGIL_CACHE_MAX=$max"
VIGIL_CACHE_MAX=100 "$VIGIL" sym --index "$bin" >"$T/toobig.out" 2>&1 && true
grep -q "up to date" "$T/toobig.out" || fail "an index found valid must not be judged by the bound"
rm "$idx"
VIGIL_CACHE_MAX=100 "$VIGIL" sym --index "$bin" >"$T/toobig.out" 2>&1 && fail "an index over the bound was written"
grep -q "exceeds VIGIL_CACHE_MAX" "$T/toobig.out" || { cat "$T/toobig.out" >&2; fail "no reason for the refused index"; }
[[ ! -e $idx ]] || fail "an index over the bound exists"
# A byte string flipped at FLIP_AT in libc's index, in a chunk that a
# lookup of NEAR reads and one of FAR does not: FAR answers from the index
# as it is (unchanged, no rebuild), NEAR reports the checksum, answers as
# the DWARF does and rebuilds the index identical to the good one.
flipped_chunk() {  # NAME NEAR FAR FLIP_AT BYTES
	local name=$1 near=$2 far=$3 at=$4 bytes=$5 a
	for a in near far; do
		VIGIL_CACHE_DIR=$libc_cache "$VIGIL" --no-cache sym --bin "$libc" "${!a}" \
			>"$T/libc-$name-$a.cold" 2>&1 || fail "$name: cold answer for $a (${!a}) failed"
	done
	printf %b "$bytes" | dd of="$libc_idx" bs=1 seek="$at" conv=notrunc status=none
	cp "$libc_idx" "$T/libc-$name-flipped.vsx"
	VIGIL_CACHE_DIR=$libc_cache VIGIL_VERBOSE=1 "$VIGIL" sym --bin "$libc" "$far" \
		>"$T/libc-$name-far.out" 2>"$T/libc-$name-far.err" || fail "$name: the far lookup failed"
	cmp -s "$T/libc-$name-far.cold" "$T/libc-$name-far.out" ||
		fail "$name: far ($far): the answer with the index differs from the cold one"
	grep -q "rebuilding" "$T/libc-$name-far.err" &&
		{ cat "$T/libc-$name-far.err" >&2; fail "$name: far ($far): a chunk it does not read made the index rebuilt"; }
	cmp -s "$libc_idx" "$T/libc-$name-flipped.vsx" || fail "$name: far ($far): the index changed"
	VIGIL_CACHE_DIR=$libc_cache VIGIL_VERBOSE=1 "$VIGIL" sym --bin "$libc" "$near" \
		>"$T/libc-$name-near.out" 2>"$T/libc-$name-near.err" || fail "$name: the near lookup failed"
	cmp -s "$T/libc-$name-near.cold" "$T/libc-$name-near.out" ||
		fail "$name: near ($near): the answer differs from the cold one"
	grep -q "symbol index $libc_idx: .*checksum.*rebuilding it" "$T/libc-$name-near.err" ||
		{ cat "$T/libc-$name-near.err" >&2; fail "$name: near ($near): the flipped chunk it reads was not reported"; }
	cmp -s "$libc_idx" "$T/libc-good.vsx" || fail "$name: near ($near): the index was not rebuilt identical"
}

# By chunk: libc's symbol table has thousands of records, checksummed
# 32 to a chunk (and its strings 1 KiB to one).  A record flipped in one
# chunk is caught by the lookup that reads it; a lookup that reads other
# chunks answers from the index as it is, which stays unchanged.
libc=/lib/x86_64-linux-gnu/libc.so.6
libc_cache=$T/libc-cache
VIGIL_CACHE_DIR=$libc_cache "$VIGIL" sym --index "$libc" >"$T/libc-build.out" 2>&1 ||
	{ cat "$T/libc-build.out" >&2; fail "sym --index $libc failed"; }
read -r libc_idx < <(sed -n 's/^.*: wrote \(.*\) ([0-9]* bytes)$/\1/p' "$T/libc-build.out")
[[ -n ${libc_idx:-} && -f $libc_idx ]] || { cat "$T/libc-build.out" >&2; fail "--index $libc said nothing"; }
cp "$libc_idx" "$T/libc-good.vsx"
# Two sized symbols: one in the third chunk, one in the last but one;
# an address in the middle of each; the file offset of the first one's
# size field.
read -r near far flip_at < <("$PYTHON" -c "
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, size = struct.unpack_from('<QQ', d, 288 + 16 * 9)
n, chunk = size // 32, 32
assert n > 6 * chunk, n
def pick(first):
    for i in range(first, n):
        vaddr, sz = struct.unpack_from('<QQ', d, off + 32 * i)
        if sz >= 16:
            return i, vaddr + sz // 2
i, near = pick(2 * chunk + 10)
_, far = pick((n // chunk - 1) * chunk + 10)
print(hex(near), hex(far), off + 32 * i + 8)" "$libc_idx") ||
	harness_error "cannot read the symbol table of $libc_idx"
flipped_chunk sym "$near" "$far" "$flip_at" '\x5a\x5a\x5a'

# The CUs' tables likewise, 1 KiB to a chunk (format 6): the line of a
# row in the middle of a large CU flipped; the lookup of that row's
# address reads it, one of a row in another CU far away does not.  The
# CU table (section 1: 40-byte records {scope0, n_scopes, seg0, n_segs,
# row0, n_rows, ...}), the row addresses (4) and the rows (5: {file,
# line, colend}, end of sequence in colend's top bit).
read -r near far flip_at < <("$PYTHON" -c "
import struct, sys
d = open(sys.argv[1], 'rb').read()
sec = [struct.unpack_from('<QQ', d, 288 + 16 * s) for s in range(14)]
cus = [struct.unpack_from('<6I', d, sec[1][0] + 40 * k) for k in range(sec[1][1] // 40)]
def row(i):
    addr, = struct.unpack_from('<Q', d, sec[4][0] + 8 * i)
    f, line, colend = struct.unpack_from('<III', d, sec[5][0] + 12 * i)
    return addr, line, colend
def pick(cu):
    row0, n = cu[4], cu[5]
    for i in range(row0 + n // 2, row0 + n - 1):
        a, line, colend = row(i)
        if not colend >> 31 and line and row(i + 1)[0] > a:
            return i, a
big = [cu for cu in cus if cu[5] >= 2000]
assert len(big) >= 2, len(big)
i, near = pick(big[len(big) // 2])
j, far = pick(big[0] if abs(big[0][4] - i) > abs(big[-1][4] - i) else big[-1])
assert abs(i - j) * 12 > 3 * 1024, (i, j)
print(hex(near), hex(far), sec[5][0] + 12 * i + 4)" "$libc_idx") ||
	harness_error "cannot read the line rows of $libc_idx"
cmp -s "$libc_idx" "$T/libc-good.vsx" || harness_error "the libc index was not left as first written"
flipped_chunk row "$near" "$far" "$flip_at" '\x5a\x5a'

echo "ok: ${#addrs[@]} addresses identical cold, warm, truncated, detached write at a terminal, flipped (cus, rows, strings, symbols), the symbols from the index, foreign, empty; LRU bound; libc's symbol table and line rows checked by chunk"
