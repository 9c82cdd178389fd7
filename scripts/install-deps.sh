#!/bin/sh
# install-deps.sh [SET...]: installs the Debian 12 packages of the named sets
# (default: build), and only those dpkg says are missing.
#
#   build   compile vigil and its eBPF programs, run `make demo` (the -dev
#           packages of libdebuginfod and libcurl give headers only: vigil
#           dlopens those libraries when a run needs them)
#   test    what the tests run besides vigil: python3, the reference tools
#           vigil is compared with (eu-addr2line, llvm-symbolizer, perf,
#           debuginfod, dwz), the libFuzzer runtime, zsh (its completion),
#           strace (the order of vigil's own system calls)
#   bench   the tools the benchmarks race (gdb, bpftrace, scanmem, ltrace,
#           GNU time) and the heavy real consumers of vigil's outputs:
#           Chromium renders the flame graph, Go's pprof reads the profile
#           (tests that use them skip without them; .ci/run installs this
#           set so CI runs them)
#
# Split so that `make demo` on a fresh machine fetches what it needs and not
# a browser and a Go toolchain.  With nothing missing it says nothing and
# needs no root, so `make` works as any user once the packages are there;
# with something missing it names it, and without root it stops there.
set -eu

build="build-essential pkg-config meson ninja-build clang bpftool libbpf-dev
libelf-dev libdw-dev libdebuginfod-dev libcurl4-openssl-dev libzydis-dev libcjson-dev libcmocka-dev
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev liblzma-dev libdeflate-dev libbz2-dev libiberty-dev
binutils xz-utils libc6-dbg systemtap-sdt-dev"
test="python3 python3-jsonschema libclang-rt-14-dev llvm-14 elfutils
debuginfod curl dwz linux-perf libxml2-utils util-linux mount coreutils zsh nodejs strace"
bench="gdb bpftrace scanmem ltrace time golang-go chromium python3-drgn"

[ $# -gt 0 ] || set -- build
wanted=""
for set in "$@"; do
	case $set in
	build) wanted="$wanted $build" ;;
	test) wanted="$wanted $test" ;;
	bench) wanted="$wanted $bench" ;;
	*)
		echo "install-deps: unknown set '$set' (build, test, bench)" >&2
		exit 2
		;;
	esac
done

# One dpkg-query for all: the packages it lists as installed are present.
# shellcheck disable=SC2086
installed=$(dpkg-query -W -f='${Package} ${Status}\n' $wanted 2>/dev/null |
	awk '$NF == "installed" { printf " %s", $1 }')
missing=""
for p in $wanted; do
	case "$installed " in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0

echo "install-deps: missing for $*:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: installing them needs root; run: sudo $0 $*" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
