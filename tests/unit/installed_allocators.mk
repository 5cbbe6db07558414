# cmocka tests of finding the installed allocator libraries
# (src/loader/attach/installed_allocators.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_installed_allocators: this file only adds
# the loader sources it tests, compiled per variant.

INSTALLED_ALLOCS_SRCS := installed_allocators allocator proc_files proc_maps images mapping_capture elf_syms
INSTALLED_ALLOCS_UNIT_OBJ      := $(INSTALLED_ALLOCS_SRCS:%=$(BUILD)/unit-objs/loader/%.o)
INSTALLED_ALLOCS_UNIT_OBJ_ASAN := $(INSTALLED_ALLOCS_SRCS:%=$(BUILD)/unit-objs-asan/loader/%.o)

$(BUILD)/tests/unit/test_installed_allocators: $(INSTALLED_ALLOCS_UNIT_OBJ)
$(BUILD)/tests/unit/test_installed_allocators-asan: $(INSTALLED_ALLOCS_UNIT_OBJ_ASAN)

-include $(INSTALLED_ALLOCS_UNIT_OBJ:.o=.d) $(INSTALLED_ALLOCS_UNIT_OBJ_ASAN:.o=.d)
