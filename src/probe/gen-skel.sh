#!/bin/sh
# gen-skel.sh CLANG BPFTOOL SRC.bpf.c OUT.bpf.o OUT.skel.h NAME
# Compiles one eBPF program in C and writes its libbpf skeleton: used by
# src/probe/meson.build and by tests/fuzz/run.sh, so both build the same
# header.  Debian's libbpf-dev gives <bpf/bpf_helpers.h>; <linux/types.h>
# includes <asm/types.h>, which is under the host's multiarch directory.
set -eu
clang=$1 bpftool=$2 src=$3 obj=$4 skel=$5 name=$6
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
"$clang" -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
	-I"/usr/include/$multiarch" -c "$src" -o "$obj"
"$bpftool" gen skeleton "$obj" name "$name" > "$skel.tmp"
mv "$skel.tmp" "$skel"
