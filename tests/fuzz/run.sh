#!/bin/sh
# run.sh - build every tests/fuzz/fuzz_*.c with libFuzzer + ASan + UBSan
# against all library sources, then run each for FUZZ_SECONDS (default 20)
# on a scratch copy of its corpus tests/fuzz/corpus/<name>/.
# Prints one line per harness; exits non-zero on a build failure or a crash
# (the crash input is left in build-fuzz/<harness>/).  Works from any cwd.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/build-fuzz"
secs=${FUZZ_SECONDS:-20}
cc=${CC_FUZZ:-clang}

cd "$root"
# Harnesses that open ELF files through the symbolizer must not fill the
# user's persistent symbol index cache (sym/symcache.h).
export VIGIL_NO_CACHE=1
mkdir -p "$out"
# shellcheck disable=SC2046
libs="$(pkg-config --libs libelf libdw zlib liblzma libdeflate libprotobuf-c libbpf) -liberty -lpthread -lm"
# Zydis, cJSON and libthread_db are dlopen'ed (util/zydis.c, util/cjson.c,
# expr/thread_db.c), as in meson.build: Zydis and cJSON by the sonames of
# the libraries found here.
soname_of() {
	readelf -d "$($cc -print-file-name="$1")" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'
}
zydis_soname=$(soname_of libZydis.so)
[ -n "$zydis_soname" ] || { echo "cannot read the soname of libZydis.so (libzydis-dev)" >&2; exit 1; }
cjson_soname=$(soname_of libcjson.so)
[ -n "$cjson_soname" ] || { echo "cannot read the soname of libcjson.so (libcjson-dev)" >&2; exit 1; }
# kernel/syscalls.c includes the table meson generates, util/crc32c.c its
# tables, report/pprof.c the
# protoc-c output of profile.proto, probe/progs.c and stack/capture.c the
# libbpf skeletons of their eBPF programs (the stack's is a light one):
# make them the same way.
mkdir -p "$out/gen/kernel" "$out/gen/report" "$out/gen/probe" "$out/gen/stack" "$out/gen/util"
# shellcheck disable=SC2086
sh src/kernel/gen-syscalls.sh "$out/gen/kernel/syscall_table.h" $cc
python3 src/util/gen-crc32c.py "$out/gen/util/crc32c_tables.h"
protoc-c --proto_path=src/report --c_out="$out/gen/report" src/report/profile.proto
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
for p in probe exec_gate; do
	sh src/probe/gen-skel.sh clang "$bpftool" "src/probe/$p.bpf.c" "$out/gen/probe/$p.bpf.o" \
		"$out/gen/probe/$p.skel.h" "vg_${p}_bpf"
done
sh src/probe/gen-skel.sh clang "$bpftool" src/stack/task_regs.bpf.c "$out/gen/stack/task_regs.bpf.o" \
	"$out/gen/stack/task_regs.lskel.h" vg_task_regs_bpf light
# The *.bpf.c are eBPF programs (built into the skeletons above), not host code.
srcs="$(ls src/perf/*.c src/util/*.c src/target/*.c src/kernel/*.c src/elf/*.c src/report/*.c src/sym/*.c \
	src/watch/*.c src/scan/*.c src/profile/*.c src/probe/*.c src/unwind/*.c src/stack/*.c src/expr/*.c src/stacktrie/*.c 2>/dev/null | grep -v '\.bpf\.c$') \
	$out/gen/report/profile.pb-c.c"

status=0
found=0
for h in tests/fuzz/fuzz_*.c; do
	[ -e "$h" ] || continue
	found=1
	base=$(basename "$h" .c)
	name=${base#fuzz_}
	work="$out/$base"
	rm -rf "$work"
	mkdir -p "$work/corpus"
	# shellcheck disable=SC2086
	if ! $cc -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -D_GNU_SOURCE -std=gnu17 -Isrc -I"$out/gen" -I"$out/gen/report" \
		-DVG_VERSION='"fuzz"' -DVG_ZYDIS_SONAME="\"$zydis_soname\"" \
		-DVG_CJSON_SONAME="\"$cjson_soname\"" \
		-o "$work/$base" "$h" $srcs $libs >"$work/build.log" 2>&1; then
		echo "$base: build failed (see $work/build.log)"
		tail -20 "$work/build.log" >&2
		status=1
		continue
	fi
	if [ -d "tests/fuzz/corpus/$name" ]; then
		cp -R "tests/fuzz/corpus/$name/." "$work/corpus/"
	fi
	if (cd "$work" && "./$base" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$work/" corpus >"$work/run.log" 2>&1); then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/run.log" | tail -1)
		echo "$base: ${runs:-?} runs, no crash"
	else
		echo "$base: CRASH (input and log in $work/)"
		grep -E "ERROR|SUMMARY|Test unit written" "$work/run.log" | head -5 >&2
		status=1
	fi
done
if [ "$found" = 0 ]; then
	echo "no tests/fuzz/fuzz_*.c found" >&2
	exit 1
fi
exit $status
