# cmocka tests of the loader's walk of a copied stack
# (src/loader/unwind/deferred_walk.c, with bpf/unwind_step.h).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_deferred_walk: this file only adds the
# loader source it tests, compiled per variant.

DEFERRED_WALK_UNIT_OBJ      := $(BUILD)/unit-objs/loader/deferred_walk.o
DEFERRED_WALK_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/deferred_walk.o

$(BUILD)/tests/unit/test_deferred_walk: $(DEFERRED_WALK_UNIT_OBJ)
$(BUILD)/tests/unit/test_deferred_walk-asan: $(DEFERRED_WALK_UNIT_OBJ_ASAN)

-include $(DEFERRED_WALK_UNIT_OBJ:.o=.d) $(DEFERRED_WALK_UNIT_OBJ_ASAN:.o=.d)
