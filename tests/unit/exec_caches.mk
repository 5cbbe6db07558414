# cmocka tests of what an exec stop reuses: the probe plans per file
# (src/loader/attach/plan_cache.c) and the files of each executable
# (src/loader/registry/libs_cache.c, over proc_files.c and proc_maps.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_exec_caches: this file only adds the
# loader sources it tests, compiled per variant, and libelf.

EXEC_CACHES_SRCS := plan_cache libs_cache proc_files proc_maps images
EXEC_CACHES_OBJS      := $(EXEC_CACHES_SRCS:%=$(BUILD)/unit-objs/loader/%.o)
EXEC_CACHES_OBJS_ASAN := $(EXEC_CACHES_SRCS:%=$(BUILD)/unit-objs-asan/loader/%.o)

$(BUILD)/tests/unit/test_exec_caches: $(EXEC_CACHES_OBJS)
$(BUILD)/tests/unit/test_exec_caches-asan: $(EXEC_CACHES_OBJS_ASAN)

-include $(EXEC_CACHES_OBJS:.o=.d) $(EXEC_CACHES_OBJS_ASAN:.o=.d)
