# SPDX-License-Identifier: Apache-2.0
# Porthole: one Makefile drives the whole build (docs/building.md says why
# plain Make).  Outputs: build/bin/, build/lib/ (DESIGN.md section 2).
#
#   make            build everything (after `make deps`)
#   make test       everything, plain and sanitized, and the one summary line
#   make test SAN=1 only the ASan+UBSan pass
#   make demo       the README's first command (UI=1: the live timeline)
#   make bench [GROUP=json|agent|host|mcp|ui|trace|heap|iotrace]
#   make bench-table   the README's performance table from the last bench run
#   make fuzz / fuzz-smoke [FUZZ_SECONDS=20] / format / format-check / deps
#   make cross ARCH=aarch64   the tree for arm64 into build/aarch64/
#   make musl       the agent and its unit tests with musl-gcc, build/musl/
#   make install / uninstall [PREFIX=/usr/local] [DESTDIR=...]
#   make spdx-check / docs-check

# gcc by default; `make CC=clang` must build too.
ifeq ($(origin CC),default)
CC := gcc
endif
CLANG ?= clang
O ?= build

WARN := -Wall -Wextra -Wformat=2 -Wshadow -Werror \
	-Werror=implicit-function-declaration -Wno-missing-field-initializers
OPT ?= -O2 -g
CPPFLAGS += -Isrc/core -Isrc/wire -Isrc -Iinclude -Itests/lib
CFLAGS += -std=c11 $(OPT) $(WARN) -fPIC -fvisibility=hidden \
	-fno-strict-aliasing -pthread -MMD -MP
LDFLAGS += -pthread
# Every library the host and tests link; all from Debian (make deps).
LDLIBS := -lm -lz -ldeflate -lzstd -lsqlite3 -lyaml -lcivetweb

ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(FUZZ),1)
CFLAGS += -fsanitize=address,undefined,fuzzer-no-link \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif
ifeq ($(TSAN),1)
CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif

CORE_SRC := $(wildcard src/core/*.c)
WIRE_SRC := $(wildcard src/wire/*.c)
AGENT_SRC := $(wildcard src/agent/*.c src/agent/collectors/*.c)
ENGINE_SRC := $(wildcard src/host/*.c src/host/findings/*.c src/host/io/*.c \
	src/mcp/*.c src/mcp/tools/*.c src/ui/*.c src/trace/*.c \
	src/heap/*.c src/iotrace/*.c)
CMD_SRC := $(wildcard src/cmd/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
BENCH_SRC := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(O)/obj/%.o,$(1))

LIBPH := $(O)/lib/libph.a
# The agent: core + wire + agent, with only PORTHOLE_API symbols exported.
# It finds SQLite and libcurl in the app's process at run time (dlsym), so
# linking it pulls in neither; libdw symbolizes stacks off the main thread.
AGENT_OBJ := $(call obj,$(CORE_SRC) $(WIRE_SRC) $(AGENT_SRC))
# Every event call reads the thread's emitter (thread-local).  In a shared
# library the default TLS model calls __tls_get_addr for that; TLS
# descriptors make it a load when the library came with the program, and
# stay correct when it is dlopen'd.  gcc on x86-64 only: clang 14 lacks
# the flag, and arm64 (Android) uses descriptors already.
TLS_DIALECT := $(shell echo 'int x;' | $(CC) -x c -c -mtls-dialect=gnu2 \
	-o /dev/null - 2>/dev/null && echo -mtls-dialect=gnu2)
$(AGENT_OBJ): CFLAGS += $(TLS_DIALECT)
AGENT_LIBS := -ldw -lz -ldl -pthread -lm
# musl (make musl): no libdw or zlib to link (src/agent/platform.h), and
# ph_inflate.c, the host's, is left out of the agent.
ifeq ($(MUSL),1)
AGENT_OBJ := $(filter-out %/ph_inflate.o,$(AGENT_OBJ))
AGENT_LIBS := -ldl -pthread -lm
# musl-gcc's link spec drops gcc's --eh-frame-hdr, without which the
# unwinder finds no frame's tables (ph_platform_unwind walks nothing).
LDFLAGS += -Wl,--eh-frame-hdr
MUSL_UNIT_SRC := tests/unit/test_core.c tests/unit/test_agent.c \
	tests/unit/test_agent_methods.c tests/unit/test_agent_config.c \
	tests/unit/test_tclock.c
endif
# The version is include/porthole.h's; the soname carries its major
# (libporthole.so.1), and libporthole.so.1 and libporthole.so link to the
# file named by the full version.
ph_version_part = $(shell sed -n 's/^\#define PORTHOLE_VERSION_$(1)[[:space:]]*//p' \
	include/porthole.h)
VERSION := $(call ph_version_part,MAJOR).$(call ph_version_part,MINOR).$(call ph_version_part,PATCH)
SOMAJOR := $(call ph_version_part,MAJOR)
SONAME := libporthole.so.$(SOMAJOR)
LIBPORTHOLE := $(O)/lib/libporthole.a $(O)/lib/libporthole.so \
	$(O)/lib/$(SONAME) $(O)/lib/pkgconfig/porthole.pc
PROGRAMS := $(O)/bin/porthole $(O)/bin/porthole-sample
TEST_BIN := $(O)/tests/unit-tests

.PHONY: all tests clean deps test demo bench bench-table fuzz fuzz-smoke format \
	format-check spdx-check docs-check check-clang help cross check-cross \
	musl check-musl musl-all
all: $(PROGRAMS) $(LIBPORTHOLE)
tests: $(TEST_BIN) $(O)/tests/ph-record $(O)/tests/explicit-calls \
	$(O)/tests/signal-chain $(O)/tests/forked $(O)/tests/fds
# The emit probe interposes malloc: plain builds only (a sanitizer brings
# its own allocator); tests/e2e/agent_emit.sh always runs the plain one.
ifeq ($(SAN)$(TSAN)$(FUZZ),)
tests: $(O)/tests/emit-probe
endif

# V=1 shows the full commands.
ifneq ($(V),1)
Q := @
endif

$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Everything but the agent and the command line, for the host and tests.
$(LIBPH): $(call obj,$(CORE_SRC) $(WIRE_SRC) $(ENGINE_SRC))
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# The UI's page (src/ui/assets/) is compiled into libph as byte arrays, so
# `porthole ui` needs no files at run time (scripts/embed.sh, od only).
UI_ASSETS := $(sort $(wildcard src/ui/assets/*))
$(O)/gen/ui_assets.c: $(UI_ASSETS) scripts/embed.sh
	@mkdir -p $(@D)
	$(Q)scripts/embed.sh ui $@ $(UI_ASSETS)
$(LIBPH): $(call obj,$(O)/gen/ui_assets.c)

# The trace engine's detectors likewise: ./detectors/ overrides them when
# present (a project's own), and the built-in copy is the default.
DETECTORS := $(sort $(wildcard detectors/*.sql))
$(O)/gen/detectors.c: $(DETECTORS) scripts/embed.sh
	@mkdir -p $(@D)
	$(Q)scripts/embed.sh detectors $@ $(DETECTORS)
$(LIBPH): $(call obj,$(O)/gen/detectors.c)

$(O)/lib/libporthole.a: $(AGENT_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/lib/libporthole.so.$(VERSION): $(AGENT_OBJ)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined \
		$(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

$(O)/lib/$(SONAME) $(O)/lib/libporthole.so: $(O)/lib/libporthole.so.$(VERSION)
	$(Q)ln -sf $(<F) $@

# porthole.pc: the build tree's points into build/ and include/ (for apps
# built against an uninstalled tree); `make install` writes its own.
ph_pc = sed 's|@PREFIX@|$(1)|; s|@LIBDIR@|$(2)|; s|@INCLUDE@|$(3)|; \
	s|@VERSION@|$(VERSION)|' scripts/porthole.pc.in
$(O)/lib/pkgconfig/porthole.pc: scripts/porthole.pc.in include/porthole.h
	@mkdir -p $(@D)
	$(Q)$(call ph_pc,$(abspath $(O)),$${prefix}/lib,$(abspath include)) > $@

$(O)/bin/porthole: $(call obj,$(CMD_SRC)) $(LIBPH)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The sample app: a real app, linked the way an app links the agent
# (libporthole before libcurl, so the agent sees curl_easy_perform).
SAMPLE_SRC := $(wildcard sample/*.c)
$(O)/obj/sample/%.o: CFLAGS += -DPORTHOLE_DEBUG_BUILD -fno-omit-frame-pointer
$(O)/bin/porthole-sample: $(call obj,$(SAMPLE_SRC)) $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcurl -lsqlite3 $(AGENT_LIBS)

$(O)/gen/unit-tests.c: $(UNIT_SRC) scripts/collect-tests.sh
	@mkdir -p $(@D)
	$(Q)scripts/collect-tests.sh $(UNIT_SRC) > $@

TEST_LIB := $(call obj,tests/lib/harness.c tests/lib/ph_client.c \
	tests/lib/ph_threads.c)
# --wrap: test_agent.c runs its own code inside the writer's look at the
# queues (ph_queue_next), to publish events at the one moment a race
# would, every time.
ifneq ($(MUSL),1)
$(TEST_BIN): $(call obj,$(UNIT_SRC)) $(TEST_LIB) $(O)/gen/unit-tests.c \
		$(LIBPH) $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) \
		$(AGENT_LIBS) -ljansson -Wl,--wrap=ph_queue_next
else
# musl: the agent's unit tests alone, with no host library (make musl).
$(TEST_BIN): $(call obj,$(MUSL_UNIT_SRC)) $(TEST_LIB) \
		$(O)/gen/musl-unit-tests.c $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ \
		$(AGENT_LIBS) -Wl,--wrap=ph_queue_next
endif

# Test tools: a recording client, and the emit probe (which interposes
# malloc itself, so it never gets a sanitizer).
$(O)/tests/ph-record: $(call obj,tests/agent/record.c tests/lib/ph_client.c) \
		$(LIBPH)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The explicit HTTP and DB calls, for the trace-marker test.
$(O)/obj/tests/agent/explicit_calls.o: CFLAGS += -DPORTHOLE_DEBUG_BUILD
$(O)/tests/explicit-calls: $(call obj,tests/agent/explicit_calls.c) \
		$(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

# An app with signal handlers of its own, for the exits test.
$(O)/obj/tests/agent/signal_chain.o: CFLAGS += -DPORTHOLE_DEBUG_BUILD
$(O)/tests/signal-chain: $(call obj,tests/agent/signal_chain.c) \
		$(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

# An app that forks a child while the agent serves it, for the exits test.
$(O)/obj/tests/agent/forked.o: CFLAGS += -DPORTHOLE_DEBUG_BUILD
$(O)/tests/forked: $(call obj,tests/agent/forked.c) $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

# An app hard on its file descriptors, for the exits test.
$(O)/obj/tests/agent/fds.o: CFLAGS += -DPORTHOLE_DEBUG_BUILD
$(O)/tests/fds: $(call obj,tests/agent/fds.c) $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

$(O)/tests/emit-probe: tests/agent/emit_probe.c $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -DPORTHOLE_DEBUG_BUILD \
		-Iinclude -o $@ $< $(O)/lib/libporthole.a $(AGENT_LIBS)

# --- install ---------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=staging]: the library (static
# and shared, with its soname links), both public headers, the host
# binary and porthole.pc naming PREFIX.  make uninstall removes exactly
# those files.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALLED := $(BINDIR)/porthole $(LIBDIR)/libporthole.a \
	$(LIBDIR)/libporthole.so.$(VERSION) $(LIBDIR)/$(SONAME) \
	$(LIBDIR)/libporthole.so $(INCLUDEDIR)/porthole.h \
	$(INCLUDEDIR)/porthole_noop.h $(PKGCONFIGDIR)/porthole.pc

.PHONY: install uninstall
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(O)/bin/porthole $(DESTDIR)$(BINDIR)/porthole
	install -m 644 $(O)/lib/libporthole.a $(DESTDIR)$(LIBDIR)/libporthole.a
	install -m 755 $(O)/lib/libporthole.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/libporthole.so.$(VERSION)
	ln -sf libporthole.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf libporthole.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libporthole.so
	install -m 644 include/porthole.h include/porthole_noop.h \
		$(DESTDIR)$(INCLUDEDIR)
	$(call ph_pc,$(PREFIX),$(LIBDIR),$(INCLUDEDIR)) \
		> $(DESTDIR)$(PKGCONFIGDIR)/porthole.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/porthole.pc

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

# --- set-up ----------------------------------------------------------------
# `make deps` installs what is missing; every entry point below runs it
# first, so a fresh Debian 12 machine needs nothing but the README commands.
deps:
	@scripts/deps.sh

# --- tests -----------------------------------------------------------------
# The plain pass, the ASan+UBSan pass, the TSan pass (threaded unit tests
# and the servers' concurrency e2e checks, tests/run-threaded.sh),
# the clang build, fuzz smoke and format check; each appends its counts to
# build/test-results, and tests/summary.sh prints the one closing line.
RESULTS := build/test-results
ifeq ($(SAN),1)
test: deps
	@mkdir -p build && rm -f $(RESULTS)
	$(MAKE) --no-print-directory O=build/san SAN=1 all tests
	-tests/run-suites.sh build/san asan $(RESULTS)
	@tests/summary.sh $(RESULTS)
else
test: deps
	@mkdir -p build && rm -f $(RESULTS)
	$(MAKE) --no-print-directory all tests
	-tests/run-suites.sh build plain $(RESULTS)
	$(MAKE) --no-print-directory O=build/san SAN=1 all tests
	-tests/run-suites.sh build/san asan $(RESULTS)
	$(MAKE) --no-print-directory O=build/tsan TSAN=1 all tests
	-tests/run-threaded.sh build/tsan $(RESULTS)
	-$(MAKE) --no-print-directory check-clang
	-$(MAKE) --no-print-directory check-cross
	-$(MAKE) --no-print-directory check-musl
	-$(MAKE) --no-print-directory fuzz-smoke
	-$(MAKE) --no-print-directory format-check
	-$(MAKE) --no-print-directory spdx-check docs-check
	@tests/summary.sh $(RESULTS)
endif

# The whole tree must build with clang as well as gcc.
check-clang:
	@mkdir -p build
	@if $(MAKE) --no-print-directory O=build/clang CC=$(CLANG) all tests \
		> build/clang.log 2>&1; then \
		echo "[clang-build] 1 passed, 0 failed" | tee -a $(RESULTS); \
	else tail -30 build/clang.log; \
		echo "[clang-build] 0 passed, 1 failed" | tee -a $(RESULTS); fi

# --- arm64 and musl ---------------------------------------------------------
# `make cross ARCH=aarch64`: the whole tree for arm64 with Debian's cross
# compiler and its multiarch libraries (make deps), into build/aarch64/.
# check-cross builds it and runs it under qemu (tests/run-cross.sh); each
# pass appends its lines to the results.
CROSS_ARCHES := aarch64
ARCH ?= aarch64
cross:
	@case " $(CROSS_ARCHES) " in *" $(ARCH) "*) ;; *) \
		echo "make cross: ARCH=$(ARCH) is not one of: $(CROSS_ARCHES)" \
		>&2; exit 2;; esac
	$(MAKE) --no-print-directory O=build/$(ARCH) \
		CC=$(ARCH)-linux-gnu-gcc all tests

check-cross:
	@mkdir -p build
	@if $(MAKE) --no-print-directory cross ARCH=aarch64 \
		> build/cross.log 2>&1; then \
		tests/run-cross.sh build/aarch64 $(RESULTS); \
	else tail -30 build/cross.log; \
		echo "[aarch64:build] 0 passed, 1 failed" | tee -a $(RESULTS); fi

# `make musl`: the agent, its unit tests and the test apps with musl-gcc
# against musl, into build/musl/; check-musl builds it and runs them
# (tests/run-musl.sh).  Debian builds SQLite, libcurl, zlib, libdw and
# jansson for glibc only, so neither the host nor porthole-sample is built
# here, and the unit tests are those of core and the agent that need none
# of them (PH_TEST_GLIBC_LIBS=0 leaves the others out; docs/building.md,
# "musl").
musl:
	$(MAKE) --no-print-directory O=build/musl CC=musl-gcc MUSL=1 musl-all

check-musl:
	@mkdir -p build
	@if $(MAKE) --no-print-directory musl > build/musl.log 2>&1; then \
		tests/run-musl.sh build/musl $(RESULTS); \
	else tail -30 build/musl.log; \
		echo "[musl:build] 0 passed, 1 failed" | tee -a $(RESULTS); fi

ifeq ($(MUSL),1)
# musl-gcc searches musl's headers alone.  The agent names SQLite's and
# libcurl's types (it finds their functions in the app at run time) and
# the tests include the kernel's uapi headers: those headers, and nothing
# else of /usr/include, are linked into $(O)/include.
MUSL_HEADERS := /usr/include/sqlite3.h /usr/include/$(shell gcc \
	-print-multiarch)/curl /usr/include/linux /usr/include/asm-generic \
	/usr/include/$(shell gcc -print-multiarch)/asm
CPPFLAGS += -idirafter $(O)/include -DPH_TEST_GLIBC_LIBS=0
$(O)/include/.linked:
	@mkdir -p $(@D)
	$(Q)for h in $(MUSL_HEADERS); do ln -sfn $$h $(@D)/; done && touch $@
$(AGENT_OBJ) $(call obj,$(MUSL_UNIT_SRC) tests/agent/explicit_calls.c \
	tests/agent/signal_chain.c tests/agent/forked.c \
	tests/agent/fds.c $(TEST_LIB)): \
	$(O)/include/.linked

musl-all: $(O)/lib/libporthole.a $(O)/lib/libporthole.so $(O)/lib/$(SONAME) \
	$(O)/tests/unit-tests $(O)/tests/explicit-calls $(O)/tests/signal-chain \
	$(O)/tests/forked $(O)/tests/fds

# The cases PH_TEST_GLIBC_LIBS=0 leaves out are not in the table: it is
# drawn from the preprocessed files.
$(O)/gen/musl-unit-tests.c: $(MUSL_UNIT_SRC) scripts/collect-tests.sh \
		$(O)/include/.linked
	@mkdir -p $(@D)
	$(Q)for f in $(MUSL_UNIT_SRC); do \
		$(CC) $(CPPFLAGS) -E -P $$f || exit 1; done > $(@D)/musl-unit.i
	$(Q)scripts/collect-tests.sh $(@D)/musl-unit.i > $@
endif

# --- fuzzing ---------------------------------------------------------------
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build/fuzz/bin/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 20

fuzz:
	$(MAKE) --no-print-directory O=build/fuzz CC=$(CLANG) FUZZ=1 $(FUZZ_BIN)

build/fuzz/bin/%: tests/fuzz/%.c $(LIBPH)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS) -ljansson

# The agent's reader of exit records: the agent's objects, not the host's.
build/fuzz/bin/fuzz_exit_record: tests/fuzz/fuzz_exit_record.c \
		$(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(AGENT_LIBS)

# The agent's request handler needs the agent itself, not the host library.
build/fuzz/bin/fuzz_agent_methods: tests/fuzz/fuzz_agent_methods.c $(AGENT_OBJ)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ -lsqlite3 \
		$(AGENT_LIBS)

fuzz-smoke: fuzz
	@tests/fuzz-smoke.sh $(FUZZ_SECONDS) $(RESULTS) $(FUZZ_BIN)

# --- style -----------------------------------------------------------------
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	@mkdir -p build
	@if clang-format --dry-run --Werror $(FORMAT_FILES); then \
		echo "[format] 1 passed, 0 failed" | tee -a $(RESULTS); \
	else echo "[format] 0 passed, 1 failed" | tee -a $(RESULTS); exit 1; fi
# Every source file carries its SPDX line (scripts/spdx.sh adds them), and
# the docs narrate no history (tests/docs-check.sh).
spdx-check:
	@mkdir -p build
	@scripts/spdx.sh --check > build/spdx.log; rc=$$?; \
		grep -v '^\[spdx\]' build/spdx.log | head -20; \
		grep '^\[spdx\]' build/spdx.log | tee -a $(RESULTS); exit $$rc
docs-check:
	@mkdir -p build
	@tests/docs-check.sh $(RESULTS)

# --- bench and demo --------------------------------------------------------
GROUP ?=
BENCH_BIN := $(patsubst bench/bench_%.c,$(O)/bin/bench-%,$(BENCH_SRC))
bench: deps
	$(MAKE) --no-print-directory OPT="-O2 -g -DNDEBUG" all $(BENCH_BIN)
	@bench/run.sh $(O) $(GROUP)

# The README's table is drawn from the saved run, never typed by hand.
bench-table:
	bench/table.sh $(O)/bench.jsonl README.md

# The agent's bench links the agent's archive into the program, as an app
# that links it statically does; docs/agent.md gives what the shared
# library costs on top.
$(O)/bin/bench-agent: bench/bench_agent.c \
		$(call obj,tests/lib/ph_client.c tests/lib/ph_threads.c) \
		$(LIBPH) $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) \
		$(AGENT_LIBS)

# The UI's bench streams from the real agent to the page, as an app does.
$(O)/bin/bench-ui: bench/bench_ui.c $(LIBPH) $(O)/lib/libporthole.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) \
		$(AGENT_LIBS)

$(O)/bin/bench-%: bench/bench_%.c $(LIBPH)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) -ljansson

demo: deps
	$(MAKE) --no-print-directory all
	@UI=$(UI) scripts/demo.sh $(O)

clean:
	rm -rf build

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
