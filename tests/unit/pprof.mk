# cmocka tests of the pprof writer and reader (src/report/pprof_*.c).
#
#   make pprof-unit-bins   build/tests/unit/test_pprof and test_pprof-asan
#
# Include this after tests/unit/unit.mk (it uses BUILD, CC, CPPFLAGS, WARN
# and PROTO_O from the top Makefile).  Two cases:
#   - unit.mk's rule for every tests/unit/test_*.c already covers
#     test_pprof: this file only adds what that rule lacks (the pprof
#     objects, the protobuf-c code and library, the data directory);
#   - otherwise (test_pprof filtered out of UNIT_TESTS, or no unit.mk):
#     complete rules of its own.
# The Go heap profile under tests/data is found through an absolute path
# compiled in, so the binaries run from any directory.

PPROF_UNIT_DIR   := $(BUILD)/tests/unit
PPROF_UNIT_BIN   := $(PPROF_UNIT_DIR)/test_pprof
PPROF_UNIT_MODS  := pprof_write pprof_read pprof_facts pprof_cost profile_input
PPROF_UNIT_DEFS  := -DPPROF_TEST_DATA=\"$(CURDIR)/tests/data\"
PPROF_UNIT_FLAGS := -O2 -g -std=gnu11 -fno-omit-frame-pointer $(WARN)
PPROF_UNIT_ASAN  := -fsanitize=address,undefined -fno-omit-frame-pointer \
                    -fno-sanitize-recover=all
PPROF_UNIT_LIBS  := -lcmocka -lprotobuf-c -lz -lelf -ldw
PPROF_UNIT_HDRS  := $(wildcard $(REPORT_DIRS:%=%/*.h)) bpf/memleak.h $(PROTO_H)

.PHONY: pprof-unit-bins
pprof-unit-bins: $(PPROF_UNIT_BIN) $(PPROF_UNIT_BIN)-asan

ifneq ($(filter test_pprof,$(UNIT_TESTS)),)

# unit.mk links $(filter %.o,$^) and its libreport.a (profile, frame,
# itab, outfile): add the pprof objects and the generated protobuf code.
PPROF_UNIT_OBJS      := $(PPROF_UNIT_MODS:%=$(BUILD)/unit-objs/%.o)
PPROF_UNIT_OBJS_ASAN := $(PPROF_UNIT_MODS:%=$(BUILD)/unit-objs-asan/%.o)

$(PPROF_UNIT_BIN): $(PPROF_UNIT_OBJS) $(PROTO_O)
$(PPROF_UNIT_BIN)-asan: $(PPROF_UNIT_OBJS_ASAN) $(PROTO_O)
$(PPROF_UNIT_BIN) $(PPROF_UNIT_BIN)-asan: CPPFLAGS += $(PPROF_UNIT_DEFS)
$(PPROF_UNIT_BIN) $(PPROF_UNIT_BIN)-asan: UNIT_LIBS += -lprotobuf-c

# Compiled by unit.mk's rules for report sources (the same flags), after
# the protobuf-c header.
$(PPROF_UNIT_OBJS) $(PPROF_UNIT_OBJS_ASAN): $(PROTO_H)

-include $(PPROF_UNIT_OBJS:.o=.d) $(PPROF_UNIT_OBJS_ASAN:.o=.d)

else

# Complete rules: one compiler run per binary.  The generated protobuf
# code is linked as the top Makefile builds it (uninstrumented: it is
# descriptors and protobuf-c glue only).
PPROF_UNIT_SRCS := tests/unit/test_pprof.c \
                   $(foreach m,$(PPROF_UNIT_MODS) profile frame itab units outfile \
                                 local_elf build_id,$(call report_src,$(m)))

$(PPROF_UNIT_BIN): $(PPROF_UNIT_SRCS) $(PPROF_UNIT_HDRS) $(PROTO_O)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PPROF_UNIT_DEFS) $(PPROF_UNIT_FLAGS) -o $@ \
		$(PPROF_UNIT_SRCS) $(PROTO_O) $(PPROF_UNIT_LIBS)

$(PPROF_UNIT_BIN)-asan: $(PPROF_UNIT_SRCS) $(PPROF_UNIT_HDRS) $(PROTO_O)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PPROF_UNIT_DEFS) $(PPROF_UNIT_FLAGS) \
		$(PPROF_UNIT_ASAN) -o $@ $(PPROF_UNIT_SRCS) $(PROTO_O) \
		$(PPROF_UNIT_LIBS)

endif
