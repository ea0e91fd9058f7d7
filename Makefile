# galatop — see README.md. Quiet unless V=1; -Werror when CI is set.
PREFIX    ?= /usr/local
DESTDIR   ?=
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
FUZZ_TIME ?= 10
ARGS      ?=
O         ?= build
BIN       ?= galatop
# A BPF object from C (galatop's bpf/*.bpf.c and the benchmarks' own), vmlinux.h from $(O)/bpf.
BPF_CC     = $(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(O)/bpf -Ibpf

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1)
LIBS_PC := libbpf libelf libdw ncursesw jansson zlib libnghttp2 libbson-1.0
# Headers only: symbols/go_tls.c loads capstone when it first disassembles (its relocations
# would cost every start a millisecond).
DLOPEN_PC := capstone
# Only the node agent's library (libgalatop-agent.so) links these: other commands start
# without them and their dozens of dependencies.
AGENT_PC := libmicrohttpd libcurl rdkafka
PC_CFLAGS := $(shell pkg-config --cflags $(LIBS_PC) $(DLOPEN_PC) $(AGENT_PC) 2>/dev/null)
# Linked from their archives (in the same -dev packages; liblzma-dev and libbz2-dev for
# libdw's): loading them as eleven shared libraries cost every start 0.7 ms of CPU, half of
# `galatop --version` and a share of a perf.data file's read (docs/perfdata.md). libc, libm
# and the agent's libraries stay shared.
STATIC_PC := libbpf libelf libdw ncursesw jansson zlib libnghttp2 libbson-static-1.0
PC_LIBS   := -Wl,-Bstatic $(filter-out -pthread -lpthread -ldl -lrt %.a,$(shell pkg-config --static \
	--libs $(STATIC_PC) 2>/dev/null)) -Wl,-Bdynamic
AGENT_LIBS := $(shell pkg-config --libs $(AGENT_PC) 2>/dev/null)
LDLIBS    := $(PC_LIBS) -liberty -lm -lpthread -ldl

WARN   := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2
ifneq ($(CI),)
WARN   += -Werror
endif
CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -DGALATOP_VERSION='"$(VERSION)"' \
	-DGALATOP_PREFIX='"$(PREFIX)"' \
	-I$(O)/bpf -I. $(PC_CFLAGS) -MMD -MP
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# Every C file of a room is part of the program; bpf/*.bpf.c are kernel programs, built apart.
LIB_SRCS  := $(filter-out %.bpf.c,$(wildcard cli/*.c engine/*.c model/*.c model/*/*.c util/*.c export/*.c symbols/*.c tui/*.c bpf/*.c))
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
SKELS     := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.skel.h,$(BPF_SRCS))
TEST_SRCS := $(wildcard tests/*/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(O)/asan/tests/%,$(TEST_SRCS))
FUZZ_SRCS := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRCS))
# make test builds the fuzzers unless T= selects tests other than tests/fuzz/test_fuzz.sh.
TEST_FUZZ := $(if $(T),$(if $(findstring $(T),fuzz/test_fuzz.sh),$(FUZZ_BINS)),$(FUZZ_BINS))
# Parsers of untrusted bytes outside model/ and export/ that fuzz targets link too (all of
# symbols/: the perf.data reader names frames through it).
FUZZ_EXTRA := $(wildcard symbols/*.c) tui/theme.c
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(O)/tools/%,$(TOOL_SRCS))

# JVMTI headers from Debian's openjdk-17 (DEB_PKGS).
JDK_HOME  ?= /usr/lib/jvm/java-17-openjdk-amd64
AGENT     := $(O)/libgalatop-jvmti.so
# `galatop agent` and its sinks: a library of their own (cli/agent_load.c loads it), built
# position-independent; the binary exports its symbols (-rdynamic) for it. Tests link them
# from libgalatop.a as any other module.
AGENT_SRCS := $(filter-out cli/agent_load.c,$(wildcard cli/agent*.c)) export/pyroscope_post.c \
	export/kafka.c
AGENT_LIB := $(O)/libgalatop-agent.so
# The leak probe's in-process sampler, preloaded into `-- CMD` (bpf/preload/leak.c).
LEAK_LIB  := $(O)/libgalatop-leak.so
OBJS      := $(patsubst %.c,$(O)/obj/%.o,$(filter-out $(AGENT_SRCS),$(LIB_SRCS)))
AGENT_OBJS := $(patsubst %.c,$(O)/pic/%.o,$(AGENT_SRCS))
ASAN_OBJS := $(patsubst %.c,$(O)/asan/obj/%.o,$(LIB_SRCS))
ASAN_AGENT_OBJS := $(patsubst %.c,$(O)/asan/pic/%.o,$(AGENT_SRCS))

# libc6-dbg: libc's own symbols (start_thread, ...), which Debian strips from libc.so.6; the
# unwinding tests and users' stacks through libc need them. perl runs stackcollapse-perf.pl.
# rustc, golang-go and lld (rustc's newer default linker) build the language tests' programs;
# python3 (3.11) runs test_python's.
DEB_PKGS := gcc g++ make clang llvm libclang-rt-14-dev bpftool libbpf-dev libelf-dev libdw-dev \
	liblzma-dev libbz2-dev \
	libncurses-dev libjansson-dev zlib1g-dev libcapstone-dev pkg-config libiberty-dev tmux libxml2-utils \
	linux-perf perl procps mount chromium jq nodejs strace openjdk-17-jdk-headless \
	libc6-dbg rustc golang-go lld python3 libbson-dev
# The leak probe's tests and bench compare with heaptrack; jemalloc is redis-server's allocator.
DEB_PKGS += heaptrack libjemalloc2
# The agent's HTTP servers (libmicrohttpd); tests/agent scrape it with Debian's prometheus,
# check its exposition with promtool (in prometheus) and its unit with systemd-analyze.
DEB_PKGS += libmicrohttpd-dev prometheus systemd
# Servers and clients the L7 tests run on loopback (tests/record/test_l7.sh, tests/bench/l7.sh).
DEB_PKGS += nginx redis-server redis-tools postgresql mariadb-server mariadb-client dnsmasq socat \
	dnsutils apache2-utils wrk curl openssl
# HTTP/2 and gRPC (model/l7/http2.c decodes HPACK with libnghttp2; tests/record/test_l7_h2.sh;
# gRPC-Go over Go's TLS in tests/record/test_l7_gotls.sh, built offline from Debian's sources).
DEB_PKGS += libnghttp2-dev nghttp2-server nghttp2-client python3-grpcio golang-google-grpc-dev
# The agent's sinks: libcurl (Pyroscope), librdkafka (Kafka); kcat reads the events back from
# librdkafka's mock cluster (tests/agent/).
DEB_PKGS += libcurl4-openssl-dev librdkafka-dev kcat
# Clients of the binary protocols (tests/record/test_l7_binary.sh): kcat (with librdkafka's mock
# cluster, above), pymongo, npm for the RocketMQ client ali-ons (NPM_PKGS, installed into
# $(O)/npm); libbson (above) parses MongoDB's BSON.
DEB_PKGS += python3-pymongo npm
NPM_PKGS := ali-ons@3.12.0

.PHONY: all deps test bench soak fuzz install clean run tools
# Keep generated BPF objects and skeletons between builds.
.SECONDARY:
# The libraries are goals of their own: .SECONDARY would not remake a missing one behind an
# up-to-date binary.
all: $(BIN) $(AGENT) $(AGENT_LIB) $(LEAK_LIB)

$(BIN): $(OBJS) $(O)/obj/galatop.o $(AGENT) $(AGENT_LIB) $(LEAK_LIB)
	$(call msg,LINK,$@)$(CC) $(CFLAGS) -rdynamic -o $@ $(filter %.o,$^) $(LDLIBS)

# Position-independent objects of their own (pic/), and -Bsymbolic: the library's own names
# bind inside it, never to the binary's.
$(O)/pic/%.o: %.c | $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC-PIC,$<)$(CC) $(BASE_CFLAGS) $(CFLAGS) -fPIC -c $< -o $@
$(O)/asan/pic/%.o: %.c | $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC-PIC,$<)$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -fPIC -c $< -o $@
$(AGENT_LIB): $(AGENT_OBJS)
	$(call msg,LINK,$@)$(CC) $(CFLAGS) -shared -Wl,-Bsymbolic -o $@ $^ $(AGENT_LIBS) -lpthread
$(O)/asan/libgalatop-agent.so: $(ASAN_AGENT_OBJS)
	$(call msg,LINK,$@)$(CC) $(ASAN_FLAGS) -shared -Wl,-Bsymbolic -o $@ $^ $(AGENT_LIBS) -lpthread

$(O)/obj/%.o: %.c | $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC,$<)$(CC) $(BASE_CFLAGS) $(CFLAGS) -c $< -o $@

$(O)/asan/obj/%.o: %.c | $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC-ASAN,$<)$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -c $< -o $@

$(O)/asan/libgalatop.a: $(ASAN_OBJS)
	$(call msg,AR,$@)rm -f $@; ar rcs $@ $^

# Every object, not the archive's referenced ones: the agent's library uses modules the
# binary itself may not.
$(O)/asan/galatop: $(O)/asan/obj/galatop.o $(filter-out $(patsubst %.c,$(O)/asan/obj/%.o,$(AGENT_SRCS)),$(ASAN_OBJS)) | $(AGENT) $(LEAK_LIB) \
		$(O)/asan/libgalatop-agent.so
	$(call msg,LINK,$@)$(CC) $(ASAN_FLAGS) -rdynamic -o $@ $^ $(LDLIBS)

# The JVMTI agent that symbols/java_attach.c loads into running JVMs: a library of its own.
$(AGENT): symbols/jvmti/agent.c
	@mkdir -p $(@D)
	$(call msg,AGENT,$<)$(CC) -std=gnu11 -Wall -Wextra $(CFLAGS) -fPIC -shared -I$(JDK_HOME)/include \
		-I$(JDK_HOME)/include/linux -o $@ $< -lpthread

# The leak sampler: optimized and without sanitizers in every build (it is the malloc of the
# programs it goes into); frame pointers, so that frame-pointer stacks walk through it; its own
# calls of the markers bound inside it.
$(LEAK_LIB): bpf/preload/leak.c bpf/preload/leak_hooks.c $(wildcard bpf/preload/*.h)
	@mkdir -p $(@D)
	$(call msg,LEAKLIB,$<)$(CC) -std=gnu11 $(WARN) -O2 -g -fPIC -shared -fno-omit-frame-pointer \
		-fvisibility=hidden -Wl,-Bsymbolic-functions -o $@ $(filter %.c,$^) \
		-ldl -lm -lpthread

$(O)/asan/tests/%: tests/%.c $(wildcard tests/*.h) $(O)/asan/libgalatop.a
	@mkdir -p $(@D)
	$(call msg,TEST-CC,$<)$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -Itests -o $@ $< $(O)/asan/libgalatop.a $(LDLIBS) $(AGENT_LIBS)

# Test workloads: built with frame pointers in every function (-O0: gcc 12 drops the leaf
# frame pointer at -O1 despite -mno-omit-leaf-frame-pointer) unless their name says nofp.
$(O)/tools/%nofp: tests/tools/%nofp.c
	@mkdir -p $(@D)
	$(call msg,TOOL,$<)$(CC) -O2 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls -o $@ $< -lz -lpthread -lm
$(O)/tools/%: tests/tools/%.c $(wildcard tests/tools/*.h)
	@mkdir -p $(@D)
	$(call msg,TOOL,$<)$(CC) -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
		-fno-optimize-sibling-calls -o $@ $< -lz -lpthread -lm
tools: $(TOOL_BINS)

# Benchmarks that link galatop's own code (tests/bench/l7_replay.sh builds them by name).
$(O)/bench/%: tests/bench/%.c $(OBJS)
	@mkdir -p $(@D)
	$(call msg,BENCH-LD,$<)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< $(OBJS) $(LDLIBS)

# tests/bench/l7_floor.sh's kernel-only counter: a BPF program and loader of its own, not galatop's.
$(O)/bench/l7_floor.bpf.o: tests/bench/l7_floor.bpf.c tests/bench/l7_floor.h $(O)/bpf/vmlinux.h bpf/msb.bpf.h bpf/kabi.h
	@mkdir -p $(@D)
	$(call msg,BPF,$<)$(BPF_CC) -c $< -o $@.tmp && $(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp
$(O)/bench/l7_floor.skel.h: $(O)/bench/l7_floor.bpf.o
	$(call msg,GEN-SKEL,$@)$(BPFTOOL) gen skeleton $< name l7_floor > $@.tmp && mv $@.tmp $@
$(O)/bench/l7_floor: tests/bench/l7_floor.c tests/bench/l7_floor.h $(O)/bench/l7_floor.skel.h
	$(call msg,BENCH-LD,$<)$(CC) $(BASE_CFLAGS) $(CFLAGS) -I$(O)/bench -o $@ $< $(LDLIBS)

# BPF: vmlinux.h from the running kernel's BTF, then *.bpf.c -> *.bpf.o -> *.skel.h.
$(O)/bpf/vmlinux.h:
	@mkdir -p $(@D)
	$(call msg,GEN,$@)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/bpf/vmlinux.h $(wildcard bpf/*.h)
	$(call msg,BPF,$<)$(BPF_CC) -c $< -o $@.tmp && $(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)$(BPFTOOL) gen skeleton $< name gt_$* > $@.tmp && mv $@.tmp $@

deps:
	@sh tests/deps.sh $(DEB_PKGS)
	@[ -d $(O)/npm/node_modules/ali-ons ] || npm install --silent --no-audit --no-fund \
		--prefix $(O)/npm $(NPM_PKGS) || { echo "deps: npm install $(NPM_PKGS) failed" >&2; exit 1; }

test: deps
	@$(MAKE) --no-print-directory all $(O)/asan/galatop $(O)/asan/libgalatop-agent.so $(TEST_BINS) tools \
		$(TEST_FUZZ)
	@O=$(O) BIN=$(BIN) T=$(T) FUZZ_TIME=$(FUZZ_TIME) sh tests/run.sh

bench: deps
	@$(MAKE) --no-print-directory all tools
	@O=$(O) BIN=$(BIN) sh tests/bench/run.sh

# Memory over a long run (SOAK_MIN minutes, default 4; the full test is SOAK_MIN=60).
soak: deps
	@$(MAKE) --no-print-directory all tools
	@O=$(O) BIN=$(BIN) sh tests/soak.sh

# Fuzzers: the parsers they link are compiled once (fuzzer-no-link) into one archive.
FUZZ_LIB_SRCS := $(filter model/% util/% export/% cli/record_config.c $(FUZZ_EXTRA),$(LIB_SRCS))
FUZZ_OBJS := $(patsubst %.c,$(O)/fuzz/obj/%.o,$(FUZZ_LIB_SRCS))
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined
$(O)/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$<)$(CLANG) $(BASE_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(O)/fuzz/libfuzz.a: $(FUZZ_OBJS)
	$(call msg,AR,$@)rm -f $@; ar rcs $@ $^

$(O)/fuzz/%: fuzz/%.c $(O)/fuzz/libfuzz.a $(wildcard fuzz/*.h)
	$(call msg,FUZZ-LD,$<)$(CLANG) $(filter-out -MMD -MP,$(BASE_CFLAGS)) $(FUZZ_FLAGS) -fsanitize=fuzzer \
		-o $@ $< $(O)/fuzz/libfuzz.a $(LDLIBS) $(AGENT_LIBS)

# Each fuzz/fuzz_*.c runs FUZZ_TIME seconds from its seeds (also part of `make test`).
fuzz: deps $(FUZZ_BINS)
	@O=$(O) BIN=$(BIN) T=fuzz/ FUZZ_TIME=$(FUZZ_TIME) sh tests/run.sh

# "run" starts the live view; ARGS="..." runs any galatop command instead.
run: deps all
	./$(BIN) $(ARGS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/galatop
	install -m 0644 docs/galatop.8 $(DESTDIR)$(PREFIX)/share/man/man8/galatop.8
	install -d $(DESTDIR)$(PREFIX)/share/galatop/themes
	install -m 0644 themes/*.theme $(DESTDIR)$(PREFIX)/share/galatop/themes/
	install -d $(DESTDIR)$(PREFIX)/lib/galatop
	install -m 0644 $(AGENT) $(DESTDIR)$(PREFIX)/lib/galatop/libgalatop-jvmti.so
	install -m 0644 $(AGENT_LIB) $(DESTDIR)$(PREFIX)/lib/galatop/libgalatop-agent.so
	install -m 0644 $(LEAK_LIB) $(DESTDIR)$(PREFIX)/lib/galatop/libgalatop-leak.so

clean:
	rm -rf $(O) $(BIN)

-include $(OBJS:.o=.d) $(AGENT_OBJS:.o=.d) $(ASAN_AGENT_OBJS:.o=.d) $(ASAN_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) $(O)/obj/galatop.d $(O)/asan/obj/galatop.d
