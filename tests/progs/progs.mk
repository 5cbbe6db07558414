# Test programs with exactly known allocations (included by tests/tests.mk).
#
#   make tests-progs   build every program into build/tests/progs/NAME
#
# Flags are fixed here, not taken from CFLAGS: the integration tests know
# the programs' stacks and line numbers, which depend on them.  Every
# program keeps frame pointers, except the nofp ones, built as Debian
# builds (memtrace walks stacks with the call frame information).

BUILD ?= build
PROGS_DIR := $(BUILD)/tests/progs
PROGS_SRC := tests/progs

PROGS_CC  ?= $(CC)
PROGS_CXX ?= $(CXX)
PROGS_WARN := -Wall -Wextra -Werror -Wno-deprecated-declarations
PROGS_BASE := -g -fno-omit-frame-pointer $(PROGS_WARN)
PROGS_O0   := -O0 $(PROGS_BASE)
# inline.c: -O2, still with frame pointers; no sibling calls so that every
# caller keeps its frame (the program also avoids tail calls itself).
PROGS_O2   := -O2 -fno-optimize-sibling-calls $(PROGS_BASE)

# As Debian builds: -O2 without frame pointers (stacks need the CFI).
PROGS_NOFP := -O2 -g -fomit-frame-pointer $(PROGS_WARN)

# Plain C programs at -O0.
PROGS_C_O0 := leaks aligned pvalloc realloc failures waiter exit7 holder served family many \
	      sizes grower phases rss_of jit exec_later urg top_grow dlopen_alloc
PROGS_ALL  := $(PROGS_C_O0) threads thread_waves sampled shapes inline nolibc \
	      nofp libnofp_plugin.so nofp_cxx stack_edge dlopen_soon cut_stacks

.PHONY: tests-progs
tests-progs: $(addprefix $(PROGS_DIR)/,$(PROGS_ALL))

$(PROGS_DIR):
	mkdir -p $@

$(addprefix $(PROGS_DIR)/,$(PROGS_C_O0)): $(PROGS_DIR)/%: $(PROGS_SRC)/%.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -o $@ $<

$(PROGS_DIR)/threads $(PROGS_DIR)/thread_waves $(PROGS_DIR)/sampled: $(PROGS_DIR)/%: $(PROGS_SRC)/%.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -pthread -o $@ $<

$(PROGS_DIR)/shapes: $(PROGS_SRC)/shapes.cpp tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CXX) $(PROGS_O0) -o $@ $<

$(PROGS_DIR)/inline: $(PROGS_SRC)/inline.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O2) -o $@ $<

$(PROGS_DIR)/nofp: $(PROGS_SRC)/nofp.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_NOFP) -pthread -o $@ $< -ldl

$(PROGS_DIR)/dlopen_soon: $(PROGS_SRC)/dlopen_soon.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_NOFP) -o $@ $< -ldl

$(PROGS_DIR)/libnofp_plugin.so: $(PROGS_SRC)/nofp_plugin.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_NOFP) -fPIC -shared -o $@ $<

$(PROGS_DIR)/nofp_cxx: $(PROGS_SRC)/nofp_cxx.cpp tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CXX) $(PROGS_NOFP) -o $@ $<

$(PROGS_DIR)/stack_edge: $(PROGS_SRC)/stack_edge.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_NOFP) -o $@ $<

$(PROGS_DIR)/cut_stacks: $(PROGS_SRC)/cut_stacks.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_NOFP) -o $@ $<

# No libc at all: nothing for memtrace to probe.
$(PROGS_DIR)/nolibc: $(PROGS_SRC)/nolibc.c tests/progs/progs.mk | $(PROGS_DIR)
	$(PROGS_CC) -O1 -g -static -nostdlib -fno-pie -no-pie -fno-stack-protector \
		-fno-asynchronous-unwind-tables $(PROGS_WARN) -o $@ $<
include tests/progs/allocators.mk
