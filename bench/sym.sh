#!/usr/bin/env bash
# bench/sym.sh: how fast does `vigil sym --bin` turn addresses into inline
# chains and file:line, against addr2line, eu-addr2line and llvm-symbolizer?
#
#   bench/sym.sh                  VIGIL=path/to/vigil  (default: build/vigil)
#                                 ADDRS=100000  EU_ADDRS=2000  RUNS=3  FUNCS=20000
#
# Two binaries, random addresses inside their function symbols (any byte
# offset, fixed seed):
#   generated  bench/out/gen_funcs/gen_funcs: FUNCS functions written by
#              bench/targets/gen_funcs.py over 10 files, every one inlining
#              static inline helpers of a shared header, built cc -O2 -g
#              (DWARF 5); built once, rebuilt when gen_funcs.py or FUNCS change
#   libc       /lib/x86_64-linux-gnu/libc.so.6 with libc6-dbg's debug file
# Each tool reads the addresses on stdin, one process for all of them:
#   addr2line -f -i -e FILE
#   eu-addr2line -f -i -e FILE          (cold only, on EU_ADDRS of them: it
#                                        walks DIE scopes per address, ~100/s)
#   llvm-symbolizer-14 --inlining --obj=FILE
#   vigil sym --bin FILE --style llvm   (llvm-symbolizer's output format), with
#                                       --no-cache, and again with the persistent
#                                       index that `vigil sym --index` wrote first
#                                       (into a temporary VIGIL_CACHE_DIR)
# Throughput two ways, medians of RUNS: cold = ADDRS / wall time of one run
# over ADDRS addresses (startup and index build included); steady =
# 2*ADDRS / median over runs of (wall(3*ADDRS) - wall(ADDRS)), the two run
# back to back: the marginal cost per address of a long-running symbolizer.
# Ratios vigil/fastest other for both.  Also peak RSS (/usr/bin/time -f %M
# over one more cold run, not timed), first-answer latency (one address on
# stdin, time to the first output line, median of 11 after 3 not timed,
# fastest-slowest shown, beside a floor: bench/targets/echo_line.c, a C
# program that echoes its line, timed in the same slots), and vigil's
# answers against llvm-symbolizer's:
# byte-identical blocks, and blocks identical modulo function-name aliases by
# tests/e2e/sym_oracle.py's rules (file:line:column of every frame exact),
# up to 5 other differences shown.  The measuring is
# bench/sym_bench.py; this script checks the tools and builds the generated
# program.  Goals (issue 3): >= 5x the fastest other tool and >= 500,000
# addresses/s, identical answers, no more peak memory.  With the index
# (issue 20): >= 20x the fastest other tool's cold throughput, >= 2,000,000
# addresses/s, first answer <= 5 ms and 10x sooner than addr2line's; and
# the first answer of `vigil sym PID ADDR` on a running sleep(1), one libc
# address, with and without the index.
# Runtime: ~80 s (+ a few minutes the first time, compiling FUNCS functions).
set -euo pipefail

bench_name=sym.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
naddrs=${ADDRS:-100000}
eu_addrs=${EU_ADDRS:-2000}
runs=${RUNS:-3}
funcs=${FUNCS:-20000}
libc=/lib/x86_64-linux-gnu/libc.so.6
[[ $naddrs =~ ^[1-9][0-9]*$ && $eu_addrs =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] ||
    die "ADDRS, EU_ADDRS and RUNS must be positive integers"
[[ $funcs =~ ^[1-9][0-9]*$ ]] && (( funcs >= 20000 )) || die "FUNCS must be >= 20000"

for tool in addr2line eu-addr2line llvm-symbolizer-14 readelf cc; do
    command -v "$tool" >/dev/null || die "$tool is required (scripts/install-deps.sh)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time is required for peak RSS (apt-get install time)"
"$vigil" sym --help >/dev/null 2>&1 || die "$vigil has no working 'sym' command"
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: *//p')
[[ -f /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] ||
    die "no debug file for $libc (build-id $bid): apt-get install libc6-dbg"

# ---- the generated program (built once per gen_funcs.py version and FUNCS) ----
gen=$out/gen_funcs
stamp="$(sha256sum "$root/bench/targets/gen_funcs.py" | cut -d' ' -f1) $funcs"
if [[ ! -x $gen/gen_funcs || "$(cat "$gen/stamp" 2>/dev/null)" != "$stamp" ]]; then
    rm -rf "$gen"
    mkdir -p "$gen/src"
    python3 "$root/bench/targets/gen_funcs.py" "$gen/src" "$funcs"
    echo "sym.sh: compiling $funcs generated functions with cc -O2 -g on $(nproc) cores" \
         "(once; a few minutes)" >&2
    t0=$SECONDS
    ( cd "$gen/src" && ls gf_*.c | xargs -P "$(nproc)" -I{} \
        cc -O2 -g -Wall -Wextra -Wmissing-prototypes -c {} -o "$gen/{}.o" ) \
        >"$gen/build.log" 2>&1 || { tail -n 30 "$gen/build.log" >&2; die "compiling the generated program failed"; }
    cc -o "$gen/gen_funcs" "$gen"/gf_*.o >>"$gen/build.log" 2>&1 ||
        { tail -n 30 "$gen/build.log" >&2; die "linking the generated program failed"; }
    "$gen/gen_funcs" >/dev/null || die "the generated program does not run"
    echo "sym.sh: built in $((SECONDS - t0)) s" >&2
    echo "$stamp" >"$gen/stamp"
fi

compile_target echo_line

echo
echo "vigil sym benchmark: cold $naddrs and long $((3 * naddrs)) addresses per binary" \
     "(eu-addr2line: $eu_addrs, cold only), median of $runs runs, page cache warm"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
print_system
echo "tools: $(addr2line --version | head -n1); $(eu-addr2line --version | head -n1);" \
     "llvm-symbolizer-14 $(llvm-symbolizer-14 --version | sed -n 's/.*LLVM version //p' | head -n1)"

python3 "$root/bench/sym_bench.py" --vigil "$vigil" --tmp "$tmp" --addrs "$naddrs" \
    --eu-addrs "$eu_addrs" --runs "$runs" --floor "$out/echo_line" "generated:$gen/gen_funcs" "libc:$libc" ||
    die "a symbolizer failed (see above)"
