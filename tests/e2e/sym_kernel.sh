#!/bin/bash
# sym_kernel: `vigil sym PID` on kernel addresses, answered from
# /proc/kallsyms.  The ground truth is the file itself, read here: the
# address of do_sys_openat2 gives do_sys_openat2+0x0 with the distance to
# the next symbol as its size, +0x10 gives +0x10, image "[kernel]"; a
# module symbol (if any module is loaded) has image "[module]"; an address below the first kernel
# symbol gets no symbol and a why.  Skips only when the kernel hides the
# addresses from this test (every address reads 0).
source "$(dirname "$0")/lib.sh"

ks=$T/kallsyms
cp /proc/kallsyms "$ks" 2>/dev/null || skip "/proc/kallsyms is not readable here"
if ! grep -qv '^0\{16\} ' "$ks"; then
	skip "/proc/kallsyms shows every address as 0 (kernel.kptr_restrict=$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null || echo '?'))"
fi

# hexaddr NAME  - address of the vmlinux text symbol NAME (lower-case hex).
hexaddr() { awk -v n="$1" '$3 == n && ($2 == "T" || $2 == "t") && NF == 3 { print $1; exit }' "$ks"; }
# next_above HEX  - the lowest address in the file above HEX, as hex.
next_above() {
	"$PYTHON" -S - "$ks" "$1" <<'PY'
import sys
a = int(sys.argv[2], 16)
above = [int(l.split()[0], 16) for l in open(sys.argv[1]) if l.strip()]
above = [x for x in above if x > a]
print(f"{min(above):x}" if above else "")
PY
}

func=do_sys_openat2
fa=$(hexaddr "$func")
[[ -n $fa ]] || harness_error "no $func in /proc/kallsyms"
fnext=$(next_above "$fa")
[[ -n $fnext ]] || harness_error "nothing above $func in /proc/kallsyms"
fsize=$((0x$fnext - 0x$fa))
((fsize > 0x10)) || harness_error "$func is only $fsize bytes"
# Another symbol at the same address would be a legitimate answer too.
(($(awk -v a="$fa" '$1 == a' "$ks" | wc -l) == 1)) ||
	harness_error "$func shares its address with another symbol"

# A module's symbol, when a module is loaded: the first one alone at its
# address.  Not BPF programs' or ftrace trampolines' ([bpf],
# [__builtin__ftrace]): other tests running beside this one load and
# unload those, so such a symbol can be gone by the time vigil reads the
# file.
mline=$(awk -F'\t' 'NF == 2 && $2 != "[bpf]" && $2 !~ /^\[__builtin__/ { split($1, f, " "); n[f[1]]++; if (!(f[1] in l)) l[f[1]] = $0; o[++k] = f[1] }
	END { for (i = 1; i <= k; i++) if (n[o[i]] == 1) { print l[o[i]]; exit } }' "$ks")
# Below the first kernel symbol: covered by nothing.
first=$(awk '$1 !~ /^0+$/ && (m == "" || $1 < m) { m = $1 } END { print m }' "$ks")
below=$(printf '%x' $((0x$first - 0x1000)))

sleep 300 </dev/null &
pid=$!
track_pid "$pid"

args=("0x$fa" "0x$(printf '%x' $((0x$fa + 0x10)))" "0x$below")
mod_addr='' mod_sym='' mod_name=''
if [[ -n $mline ]]; then
	read -r mod_addr _ mod_sym <<<"${mline%%$'\t'*}"
	mod_name=${mline##*$'\t'}   # "[module]", as vigil names the image
	args+=("0x$mod_addr")
fi

vg json sym "$pid" "${args[@]}" --json
assert_rc 0
vg_py "$T/json.out" "$fa" "$fsize" "$below" "$mod_addr" "$mod_sym" "$mod_name" <<'PY' || { show_last; fail "$LAST_CMD"; }
import sys
from vgcheck import *
doc = load_json(sys.argv[1])
fa, fsize, below = int(sys.argv[2], 16), int(sys.argv[3]), int(sys.argv[4], 16)
mod_addr, mod_sym, mod_name = sys.argv[5:8]
res = get(doc, "results")
eq("number of results", 4 if mod_addr else 3, len(res))

def kernel(r, name, sym_addr, off, size, image):
    w = f"result {r.get('input')}"
    eq(f"{w}: source", "kallsyms", r.get("source"))
    eq(f"{w}: symbol", name, r.get("symbol"))
    eq(f"{w}: symbol_raw", name, r.get("symbol_raw"))
    eq(f"{w}: symbol_address", f"{sym_addr:#x}", r.get("symbol_address"))
    eq(f"{w}: offset", f"{off:#x}", r.get("offset"))
    if size is not None:
        eq(f"{w}: symbol_size", f"{size:#x}", r.get("symbol_size"))
    eq(f"{w}: image", image, r.get("image"))
    eq(f"{w}: address", f"{sym_addr + off:#x}", r.get("address"))
    eq(f"{w}: no line", [None, 0], [r.get("file"), r.get("line")])
    fr = r.get("frames") or []
    eq(f"{w}: frames", [name], [f.get("function") for f in fr])
    eq(f"{w}: why", None, r.get("why"))
    eq(f"{w}: error", None, r.get("error"))

kernel(res[0], "do_sys_openat2", fa, 0, fsize, "[kernel]")
kernel(res[1], "do_sys_openat2", fa, 0x10, fsize, "[kernel]")
r = res[2]
eq(f"below the kernel: symbol", None, r.get("symbol"))
eq(f"below the kernel: source", "none", r.get("source"))
check(bool(r.get("why")), f"below the kernel: no why ({r!r})")
eq(f"below the kernel: error", None, r.get("error"))
if mod_addr:
    kernel(res[3], mod_sym, int(mod_addr, 16), 0, None, mod_name)
done()
PY

# The text form names the symbol, the offset and where it came from.
vg text sym "$pid" "0x$(printf '%x' $((0x$fa + 0x10)))"
assert_rc 0
grep -q "do_sys_openat2+0x10" "$T/text.out" && grep -q kallsyms "$T/text.out" ||
	{ show_last; fail "$LAST_CMD: text output lacks do_sys_openat2+0x10 or kallsyms"; }
echo "ok: $func at 0x$fa (size $fsize)${mod_addr:+, $mod_sym in $mod_name}"
