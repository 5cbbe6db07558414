# cmocka unit tests for src/report (owned by the report work).
#
#   make unit-bins   build every test twice:
#                      build/tests/unit/NAME       (-O2 -g)
#                      build/tests/unit/NAME-asan  (plus ASan/UBSan)
#
# Each tests/unit/test_*.c is one binary.  The report sources they test are
# compiled separately for each variant (build/unit-objs/, build/unit-objs-asan/)
# into a static library, so a test links only the objects it uses and the
# main build's build/src/ objects are never touched.  Run a binary with
# CMOCKA_MESSAGE_OUTPUT=tap for TAP output.

UNIT_TESTS := $(sort $(notdir $(basename $(wildcard tests/unit/test_*.c))))

# src/report modules the tests exercise (and what those depend on).
UNIT_REPORT := units profile frame itab array_grow file_id cu_index sym_index perf_map file_dwfl resolve file_addrs symbolize stacks blocks \
               text text_fmt text_funcs text_procs text_sizes text_stacks outfile \
               build_id local_elf maps_text line_scan heap_text tcmalloc_read jemalloc_read go_text_read go_text_write \
               flame_tree flame_svg flame_svg_script \
               diff filter profile_read growth_series \
               timeline_text timeline_data timeline_csv timeline_svg

UNIT_CFLAGS   := -O2 -g -Wall -Wextra -Werror -std=gnu11 -fno-omit-frame-pointer
UNIT_CXXFLAGS := -O2 -g -Wall -Wextra -Werror -fno-omit-frame-pointer
UNIT_SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer \
                 -fno-sanitize-recover=all
UNIT_LIBS     := -lcmocka -ldw -lelf -lz -lstdc++ -lm

UNIT_OBJS      := $(UNIT_REPORT:%=$(BUILD)/unit-objs/%.o)
UNIT_OBJS_ASAN := $(UNIT_REPORT:%=$(BUILD)/unit-objs-asan/%.o)
UNIT_LIB       := $(BUILD)/unit-objs/libreport.a
UNIT_LIB_ASAN  := $(BUILD)/unit-objs-asan/libreport.a
UNIT_BINS      := $(UNIT_TESTS:%=$(BUILD)/tests/unit/%)
UNIT_BINS_ASAN := $(UNIT_TESTS:%=$(BUILD)/tests/unit/%-asan)

.PHONY: unit-bins
unit-bins: $(UNIT_BINS) $(UNIT_BINS_ASAN)

# Test-side objects linked into some tests: helpers (self_profile.c), C++
# code (symbolize_cxx.cpp) and clang-built DWARF 5 (symbolize_clang.c: a
# fixture, the same uninstrumented object for both variants).
UNIT_CLANG ?= $(if $(CLANG),$(CLANG),clang)

$(BUILD)/tests/unit/test_symbolize: $(BUILD)/unit-objs/self_profile.o \
	$(BUILD)/unit-objs/symbolize_cxx.o
$(BUILD)/tests/unit/test_symbolize-asan: $(BUILD)/unit-objs-asan/self_profile.o \
	$(BUILD)/unit-objs-asan/symbolize_cxx.o
$(BUILD)/tests/unit/test_symbolize_files: $(BUILD)/unit-objs/self_profile.o
$(BUILD)/tests/unit/test_symbolize_files-asan: \
	$(BUILD)/unit-objs-asan/self_profile.o
$(BUILD)/tests/unit/test_symbolize_clang: $(BUILD)/unit-objs/self_profile.o \
	$(BUILD)/unit-objs/symbolize_clang.o
$(BUILD)/tests/unit/test_symbolize_clang-asan: \
	$(BUILD)/unit-objs-asan/self_profile.o $(BUILD)/unit-objs/symbolize_clang.o

$(BUILD)/unit-objs/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(UNIT_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/unit-objs-asan/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(UNIT_CFLAGS) $(UNIT_SANITIZE) -MMD -MP -c $< -o $@

$(BUILD)/unit-objs/symbolize_clang.o: tests/unit/symbolize_clang.c
	@mkdir -p $(dir $@)
	$(UNIT_CLANG) -O2 -g -gdwarf-5 -Wall -Wextra -Werror \
		-fno-omit-frame-pointer -c $< -o $@

$(BUILD)/unit-objs/%.o: tests/unit/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(UNIT_CXXFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/unit-objs-asan/%.o: tests/unit/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(UNIT_CXXFLAGS) $(UNIT_SANITIZE) -MMD -MP -c $< -o $@

# A report source is compiled by its file name alone (unit-objs/NAME.o),
# whichever folder of src/report holds NAME.c: one rule per folder, make
# takes the one whose source exists.
define UNIT_REPORT_RULES
$$(BUILD)/unit-objs/%.o: $(1)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) $$(UNIT_CFLAGS) -MMD -MP -c $$< -o $$@

$$(BUILD)/unit-objs-asan/%.o: $(1)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) $$(UNIT_CFLAGS) $$(UNIT_SANITIZE) -MMD -MP -c $$< -o $$@
endef
$(foreach d,$(REPORT_DIRS),$(eval $(call UNIT_REPORT_RULES,$(d))))

# A dependency file (.d) of a build made before the sources moved into
# folders names them where they were (src/loader/NAME.c): nothing to make
# there, and the object is compiled again from where its source is now.
UNIT_MOVED_FROM := $(foreach t,loader report,$(filter-out $(wildcard src/$(t)/*.c), \
                     $(addprefix src/$(t)/,$(notdir $(wildcard src/$(t)/*/*.c)))))
$(UNIT_MOVED_FROM): ;

$(UNIT_LIB): $(UNIT_OBJS)
	rm -f $@ && ar rcs $@ $^

$(UNIT_LIB_ASAN): $(UNIT_OBJS_ASAN)
	rm -f $@ && ar rcs $@ $^

$(UNIT_BINS): $(BUILD)/tests/unit/%: tests/unit/%.c $(UNIT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(UNIT_CFLAGS) -MMD -MP -MF $(BUILD)/unit-objs/$*.test.d \
		-o $@ $< $(filter %.o,$^) $(UNIT_LIB) $(UNIT_LIBS)

$(UNIT_BINS_ASAN): $(BUILD)/tests/unit/%-asan: tests/unit/%.c $(UNIT_LIB_ASAN)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(UNIT_CFLAGS) $(UNIT_SANITIZE) -MMD -MP \
		-MF $(BUILD)/unit-objs-asan/$*.test.d -o $@ $< $(filter %.o,$^) \
		$(UNIT_LIB_ASAN) $(UNIT_LIBS)

# Binaries' dependency files live with the objects: build/tests/unit/ holds
# only the test executables, so a runner can execute everything in it.
-include $(UNIT_OBJS:.o=.d) $(UNIT_OBJS_ASAN:.o=.d) \
         $(foreach o,self_profile symbolize_cxx,$(BUILD)/unit-objs/$(o).d \
                                                $(BUILD)/unit-objs-asan/$(o).d) \
         $(UNIT_TESTS:%=$(BUILD)/unit-objs/%.test.d) \
         $(UNIT_TESTS:%=$(BUILD)/unit-objs-asan/%.test.d)

# Loader sources that tests link (each named by its tests/unit/NAME.mk),
# compiled per variant under build/unit-objs*/loader/, so the main build's
# objects are never touched.  An object is named by its source's file name
# alone (loader/NAME.o), whichever folder of src/loader holds NAME.c: one
# rule per folder, make takes the one whose source exists.
define UNIT_LOADER_RULES
$$(BUILD)/unit-objs/loader/%.o: $(1)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) $$(UNIT_CFLAGS) -MMD -MP -c $$< -o $$@

$$(BUILD)/unit-objs-asan/loader/%.o: $(1)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) $$(UNIT_CFLAGS) $$(UNIT_SANITIZE) -MMD -MP -c $$< -o $$@
endef
$(foreach d,$(LOADER_DIRS),$(eval $(call UNIT_LOADER_RULES,$(d))))

# tests/unit/test_pprof.c also needs the pprof objects and protobuf-c:
# tests/unit/pprof.mk adds them to the rules above (so it is included here,
# after them, and must not be included a second time elsewhere).
-include tests/unit/pprof.mk

# report --growth reads pprof profiles: the objects pprof.mk builds.
-include tests/unit/growth.mk

# The entry-probe placement tests (src/loader/attach/prologue.c) need that source.
-include tests/unit/prologue.mk

# The sampling arithmetic tests (bpf/sampling.h) need src/loader/bpf/sampling.c.
-include tests/unit/sampling.mk

# The unwind table tests need src/loader/unwind/unwind_table.c and their fixture.
-include tests/unit/unwind_table.mk

# The operator new/delete forwarding tests need src/loader/attach/forwarders.c.
-include tests/unit/forwarders.mk

# How libbpf's messages are shown (src/loader/bpf/bpf_log.c).
-include tests/unit/bpf_log.mk

# The BPF hash-map walk tests need src/loader/bpf/map_walk.c and libbpf.
-include tests/unit/map_walk.mk

# The public names of aliased functions need a shared object of aliases.
-include tests/unit/sym_alias.mk

# The pure parts of --http (addresses, /metrics, the snapshot ring).
-include tests/unit/http.mk

# The caches an exec stop reuses (plans per file, files per executable).
-include tests/unit/exec_caches.mk

# --http's Host, Origin and token checks (src/loader/serve/http_guard.c).
-include tests/unit/http_guard.mk

# pprof's views (src/report/model/view.c), which growth_series.c uses too.
-include tests/unit/view.mk

# --delta's alloc values since the previous report (src/loader/outputs/delta.c).
-include tests/unit/delta.mk

# The command line (src/loader/options/options.c).
-include tests/unit/options.mk

# The HTTP bridge's reference counts (src/loader/serve/http_bridge.c).
-include tests/unit/http_bridge.mk

# The allocator line per process (src/loader/attach/proc_allocators.c).
-include tests/unit/proc_allocators.mk

# memtrace top's frames (src/loader/outputs/top_frame.c).
-include tests/unit/top_frame.mk

# Unwind tables kept on disk (src/loader/unwind/unwind_cache.c).
-include tests/unit/unwind_cache.mk

# The loader's walk of a copied stack (src/loader/unwind/deferred_walk.c).
-include tests/unit/deferred_walk.mk

# The allocator libraries installed where ld.so looks
# (src/loader/attach/installed_allocators.c).
-include tests/unit/installed_allocators.mk

# The registry of process images and their files (src/loader/registry/images.c).
-include tests/unit/images.mk

# The registry's system-wide upkeep: exited processes' images dropped.
-include tests/unit/images_sweep.mk

# The mappings the kernel told of, forgotten at a harvest.
-include tests/unit/kernel_vmas.mk

# memtrace's own allocator code out of reach of its probes
# (src/loader/registry/private_text.c).
-include tests/unit/private_text.mk

# The file identity of the report's modules (src/loader/registry/mapping_capture.c).
-include tests/unit/module_id.mk
