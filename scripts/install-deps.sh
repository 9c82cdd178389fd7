#!/bin/sh
# Installs the Debian 12 packages vigil builds, tests and benchmarks with.
# Idempotent: asks apt only for what dpkg says is missing, so a second run is instant.
set -eu

packages="build-essential pkg-config meson ninja-build clang libclang-rt-14-dev libbpf-dev bpftool
libelf-dev libdw-dev libdebuginfod-dev libzydis-dev libcjson-dev libcmocka-dev
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev liblzma-dev libiberty-dev
libc6-dbg llvm-14 debuginfod xz-utils dwz
python3 python3-jsonschema util-linux mount coreutils binutils elfutils linux-perf time
bpftrace gdb scanmem ltrace golang-go libxml2-utils chromium"

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: run as root (or: sudo $0)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
