# memtrace: heap profiler for running Linux processes (eBPF + libdw).
#
#   make          build ./memtrace (the BPF object is embedded through a skeleton)
#   make demo     install what is missing, build, trace the bundled leaky demo
#   make check    install what is missing, build, run every test
#   make bench    cost per traced call: untraced, trap floor, full tracing
#   make lint     clang-tidy and cppcheck over the userspace sources
#   make vmlinux  regenerate vmlinux/vmlinux.h from the running kernel's BTF
#   make install  memtrace, its man page and bash completion under
#                 $(DESTDIR)$(PREFIX) (PREFIX=/usr/local by default);
#                 make uninstall removes them

CC      ?= cc
CLANG   ?= clang
BPFTOOL ?= bpftool
PYTHON  ?= python3

BUILD   := build
VERSION := 0.1.0

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += $(WARN) -std=gnu11 -fno-omit-frame-pointer
# The loader and the reporter are folders of parts (src/loader/cli/,
# src/report/readers/, ...: doc/design.md); each folder is on the include
# path, so an #include names a header alone.  A source left at src/loader/
# or src/report/ builds too (the root comes last: a rule per folder finds a
# source in a folder first).  $(call report_src,NAME): src/report/.../NAME.c.
LOADER_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard src/loader/*/*.[ch])))) src/loader
REPORT_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard src/report/*/*.[ch])))) src/report
report_src   = $(firstword $(wildcard $(REPORT_DIRS:%=%/$(1).c)))
PROFILE_H   := $(firstword $(wildcard $(REPORT_DIRS:%=%/profile.h)))

CPPFLAGS += -D_GNU_SOURCE -DMEMTRACE_VERSION=\"$(VERSION)\" \
            -Ibpf -Isrc $(LOADER_DIRS:%=-I%) $(REPORT_DIRS:%=-I%) -I$(BUILD) -I$(BUILD)/proto
LDLIBS   += -lbpf -ldw -lelf -lz -lcap -lprotobuf-c -lmicrohttpd -lpthread -lstdc++ -lm

LOADER_SRCS := $(sort $(wildcard $(LOADER_DIRS:%=%/*.c)))
REPORT_SRCS := $(sort $(wildcard $(REPORT_DIRS:%=%/*.c)))
LOADER_OBJS := $(LOADER_SRCS:%.c=$(BUILD)/%.o)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(BUILD)/%.o)

# pprof's profile.proto, compiled by protoc-c into C the reporter links.
PROTO_C  := $(BUILD)/proto/profile.pb-c.c
PROTO_H  := $(BUILD)/proto/profile.pb-c.h
PROTO_O  := $(BUILD)/proto/profile.pb-c.o

BPF_OBJ  := $(BUILD)/memleak.bpf.o
BPF_SKEL := $(BUILD)/memleak.skel.h

.PHONY: all deps demo check bench lint vmlinux clean install uninstall

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL    ?= install

all: memtrace

memtrace: $(LOADER_OBJS) $(REPORT_OBJS) $(PROTO_O)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(PROTO_C) $(PROTO_H) &: proto/profile.proto
	@mkdir -p $(BUILD)/proto
	protoc-c --c_out=$(BUILD)/proto --proto_path=proto $<

$(PROTO_O): $(PROTO_C)
	$(CC) $(CPPFLAGS) -O2 -g -c $< -o $@

$(BPF_OBJ): bpf/memleak.bpf.c bpf/memleak.h bpf/sampling.h bpf/size_class.h bpf/unwind.h bpf/unwind_step.h bpf/unwind_defer.h bpf/vma_dump.h bpf/stack_segs.h bpf/stack_key.h bpf/proc_totals.h bpf/thread_slots.h vmlinux/vmlinux.h | $(BUILD)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror \
		-Ivmlinux -Ibpf -c $< -o $@

$(BPF_SKEL): $(BPF_OBJ)
	$(BPFTOOL) gen skeleton $< name memleak_bpf > $@.tmp && mv $@.tmp $@

# The loader includes the skeleton, the reporter the protobuf code.
$(LOADER_OBJS): $(BPF_SKEL) $(PROTO_H)
$(REPORT_OBJS): $(PROTO_H)
$(BUILD)/%.o: %.c bpf/memleak.h $(PROFILE_H) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD):
	mkdir -p $@

-include $(LOADER_OBJS:.o=.d) $(REPORT_OBJS:.o=.d)

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

deps:
	@scripts/install-deps.sh

demo: deps
	@$(MAKE) --no-print-directory memtrace tests-progs
	@scripts/demo.sh

check: deps
	@$(MAKE) --no-print-directory memtrace tests-progs unit-bins memtrace-asan memtrace-tsan
	@scripts/run-tests.sh

bench: deps
	@scripts/install-deps.sh bench
	@$(MAKE) --no-print-directory memtrace
	@scripts/bench.sh

include tests/tests.mk

lint: $(BPF_SKEL) $(PROTO_H)
	@scripts/lint.sh

install: memtrace
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 0755 memtrace $(DESTDIR)$(BINDIR)/memtrace
	$(INSTALL) -m 0644 doc/memtrace.1 $(DESTDIR)$(MANDIR)/man1/memtrace.1
	$(INSTALL) -m 0644 completions/memtrace $(DESTDIR)$(BASHCOMPDIR)/memtrace

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/memtrace $(DESTDIR)$(MANDIR)/man1/memtrace.1 \
		$(DESTDIR)$(BASHCOMPDIR)/memtrace

clean:
	rm -rf $(BUILD) memtrace
