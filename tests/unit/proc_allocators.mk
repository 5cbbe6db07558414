# cmocka tests of the allocator line's per-process naming
# (src/loader/attach/proc_allocators.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_proc_allocators: this file only adds the
# loader source it tests, compiled per variant.

PROC_ALLOCS_UNIT_OBJ      := $(BUILD)/unit-objs/loader/proc_allocators.o
PROC_ALLOCS_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/proc_allocators.o

$(BUILD)/tests/unit/test_proc_allocators: $(PROC_ALLOCS_UNIT_OBJ)
$(BUILD)/tests/unit/test_proc_allocators-asan: $(PROC_ALLOCS_UNIT_OBJ_ASAN)

-include $(PROC_ALLOCS_UNIT_OBJ:.o=.d) $(PROC_ALLOCS_UNIT_OBJ_ASAN:.o=.d)
