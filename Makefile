# Thin front door: the real build is Meson (meson.build).  Every target
# first installs the Debian packages it needs that are missing, and only
# those (scripts/install-deps.sh: the build set for make and make demo, the
# test set too for make test, the bench set too for make bench); with
# nothing missing it needs no root.
#
#   make          build ./build/vigil
#   make test     ASan+UBSan build with -Werror: unit + end-to-end tests; then
#                 the end-to-end tests again on ./build, the binary `make`
#                 gives users (no sanitizer, -O2: what ASan's allocator and
#                 -O0 hide shows there); a short fuzz run; ends with one
#                 "N passed, N failed, N skipped" line counting all of them
#   make demo     build, start the bundled demo server and look at it with vigil
#   make bench    benchmarks against cat, dd, addr2line, perf, gdb, scanmem
#                 (see bench/README.md)
#   make install  install the binary, the man page and the bash and zsh
#                 completions under PREFIX (default /usr/local), staged
#                 under DESTDIR when given

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_SECONDS ?= 15
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps deps-test deps-bench test demo bench install clean

all: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@./scripts/install-deps.sh build

deps-test:
	@./scripts/install-deps.sh build test

deps-bench:
	@./scripts/install-deps.sh build test bench

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=debugoptimized

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) --buildtype=debug -Db_sanitize=address,undefined -Dwerror=true

test: deps-test $(ASAN_BUILD)/build.ninja $(BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ninja -C $(BUILD)
	./scripts/run-tests.sh $(ASAN_BUILD) $(FUZZ_SECONDS) $(BUILD)

demo: all
	./scripts/demo.sh $(BUILD)

bench: deps-bench all
	VIGIL=$(BUILD)/vigil ./bench/maps.sh
	VIGIL=$(BUILD)/vigil ./bench/read.sh
	VIGIL=$(BUILD)/vigil ./bench/sym.sh
	VIGIL=$(BUILD)/vigil ./bench/watch.sh
	VIGIL=$(BUILD)/vigil ./bench/scan.sh
	VIGIL=$(BUILD)/vigil ./bench/profile.sh
	VIGIL=$(BUILD)/vigil ./bench/probe.sh
	VIGIL=$(BUILD)/vigil ./bench/stack.sh
	VIGIL=$(BUILD)/vigil ./bench/print.sh

# The same files as `meson install` (meson.build), laid out by PREFIX at
# install time as a Makefile user expects, not at configure time as meson's
# prefix would be.
install: all
	install -D -m 0755 $(BUILD)/vigil $(DESTDIR)$(PREFIX)/bin/vigil
	install -D -m 0644 docs/vigil.1 $(DESTDIR)$(PREFIX)/share/man/man1/vigil.1
	install -D -m 0644 completions/vigil.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/vigil
	install -D -m 0644 completions/_vigil $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_vigil

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
