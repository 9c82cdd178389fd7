#!/bin/sh
# gen-skel.sh CLANG BPFTOOL SRC.bpf.c OUT.bpf.o OUT.skel.h NAME [light]
# Compiles one eBPF program in C and writes its libbpf skeleton: used by
# src/probe/meson.build, src/stack/meson.build and tests/fuzz/run.sh, so
# all build the same header.  Debian's libbpf-dev gives
# <bpf/bpf_helpers.h>; <linux/types.h> includes <asm/types.h>, which is
# under the host's multiarch directory.
#
# "light" writes a light skeleton (bpftool gen skeleton -L,
# <bpf/skel_internal.h>): a loader program the kernel runs does the CO-RE
# relocations against the kernel's own BTF and finds the attach target,
# so libbpf never reads /sys/kernel/btf/vmlinux (src/stack/capture.c says
# why vigil stack wants that).
set -eu
clang=$1 bpftool=$2 src=$3 obj=$4 skel=$5 name=$6 kind=${7:-}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
"$clang" -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
	-I"/usr/include/$multiarch" -c "$src" -o "$obj"
case $kind in
'') "$bpftool" gen skeleton "$obj" name "$name" > "$skel.tmp" ;;
light) "$bpftool" gen skeleton -L "$obj" name "$name" > "$skel.tmp" ;;
*) echo "gen-skel.sh: unknown skeleton kind '$kind' (light)" >&2; exit 2 ;;
esac
mv "$skel.tmp" "$skel"
