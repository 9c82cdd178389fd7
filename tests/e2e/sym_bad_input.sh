#!/bin/bash
# sym_bad_input: files vigil sym cannot use get one clear error line and a
# documented exit code (2: not a usable ELF file; 4: the process is gone),
# never a crash; corrupt DWARF still answers from the symbol table, with a
# warning that the DWARF is damaged.
source "$(dirname "$0")/lib.sh"

src=$TARGETS/tgt_inline
main_hex=$(nm "$src" | awk '$3 == "main" { print $1 }')
[[ -n $main_hex ]] || harness_error "no main in $src"
main_addr=$(printf '0x%x' "0x$main_hex")

# Truncated inside its loadable segments.
head -c 3000 "$src" >"$T/trunc"
vg trunc sym --bin "$T/trunc" "$main_addr"
assert_rc 2
assert_one_error_line
grep -q "truncated" "$T/trunc.err" || { show_last; fail "truncated file: the error must say so"; }
[[ ! -s $T/trunc.out ]] || { show_last; fail "truncated file: nothing may reach stdout"; }

# Not ELF at all.
echo "just text" >"$T/text"
vg text sym --bin "$T/text" "$main_addr"
assert_rc 2
assert_one_error_line
grep -q "not an ELF file" "$T/text.err" || { show_last; fail "text file: the error must say it is not ELF"; }

# ELF32: the class byte says 32-bit; nothing past it may be trusted.
vg_py "$src" "$T/elf32" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[4] = 1  # EI_CLASS = ELFCLASS32
open(sys.argv[2], 'wb').write(b)
PY
vg elf32 sym --bin "$T/elf32" "$main_addr"
assert_rc 2
assert_one_error_line
grep -q "ELFCLASS32" "$T/elf32.err" || { show_last; fail "ELF32: the error must name the class"; }

# A directory and a missing file.
vg dir sym --bin "$T" "$main_addr"
assert_rc 2
assert_one_error_line
vg missing sym --bin "$T/nosuchfile" "$main_addr"
assert_rc 2
assert_one_error_line

# Corrupt DWARF: every 500th byte of .debug_info flipped.  The answer
# still names main from .symtab at its exact address, and a warning says
# the DWARF is damaged instead of presenting a short answer as complete.
vg_py "$src" "$T/corrupt" <<'PY'
import re, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
b = bytearray(open(src, 'rb').read())
out = subprocess.run(['readelf', '-SW', src], capture_output=True, text=True).stdout
m = re.search(r'\]\s+\.debug_info\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)', out)
if not m:
    sys.exit('HARNESS ERROR: no .debug_info in ' + src)
off, size = int(m.group(1), 16), int(m.group(2), 16)
for i in range(off + 11, off + size, 500):
    b[i] ^= 0xff
open(dst, 'wb').write(b)
PY
vg corrupt sym --bin "$T/corrupt" "$main_addr" --json
assert_rc 0
assert_eq "corrupt DWARF: symbol" main "$(jget "$T/corrupt.out" 'd["results"][0]["symbol"]')"
assert_eq "corrupt DWARF: symbol address" "$main_addr" "$(jget "$T/corrupt.out" 'd["results"][0]["symbol_address"]')"
jget "$T/corrupt.out" '"\n".join(d["warnings"])' | grep -q "corrupt" ||
	{ show_last; fail "corrupt DWARF: a warning must say the DWARF is corrupt"; }

# An unmapped and a kernel address offline: answered, with the reason.
vg outside sym --bin "$src" 0x7fff00000000 --json
assert_rc 0
jget "$T/outside.out" 'd["results"][0]["why"]' | grep -q "outside every PT_LOAD" ||
	{ show_last; fail "address outside the file: why must say so"; }

# A process that is gone: exit 4 and one line.
true &
dead=$!
wait "$dead" || true
vg dead sym "$dead" 0x1000
assert_rc 4
assert_one_error_line

echo "ok: truncated, text, ELF32, directory, missing file, corrupt DWARF, outside address, dead pid"

# A standard input line with a NUL byte: "ADDR\0junk" is not ADDR.  It is
# answered with an error in its place (the line before the NUL, then
# "the line contains a NUL byte"), the next line is answered, and the run
# exits 2 (it used to answer ADDR, exit 0).
set +e
printf '%s\0junk\n%s\n' "$main_addr" "$main_addr" | "$VIGIL" sym --bin "$src" >"$T/nul.out" 2>"$T/nul.err"
RC=$?
set -e
LAST=nul LAST_CMD="printf 'ADDR\\0junk\\nADDR\\n' | vigil sym --bin $src"
assert_rc 2
grep -q "^$main_addr  error: the line contains a NUL byte" "$T/nul.out" || { show_last; fail "$LAST_CMD: the NUL line is not refused"; }
[[ $(grep -c "^$main_addr  main+0x0 " "$T/nul.out") == 1 ]] || { show_last; fail "$LAST_CMD: not exactly the second line answered with main"; }
echo "ok: a standard input line with a NUL byte is refused in place (exit 2)"
