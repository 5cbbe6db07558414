# cmocka tests of --delta (src/loader/outputs/delta.c): each report's alloc values
# the change since the previous one, matched by process and stack.
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_delta: this file only adds the loader
# source it tests, compiled per variant.

DELTA_UNIT_OBJ      := $(BUILD)/unit-objs/loader/delta.o
DELTA_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/delta.o

$(BUILD)/tests/unit/test_delta: $(DELTA_UNIT_OBJ)
$(BUILD)/tests/unit/test_delta-asan: $(DELTA_UNIT_OBJ_ASAN)

-include $(DELTA_UNIT_OBJ:.o=.d) $(DELTA_UNIT_OBJ_ASAN:.o=.d)
