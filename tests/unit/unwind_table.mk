# cmocka tests of the unwind table compiler (src/loader/unwind/unwind_table.c).
#
#   make unwind-table-unit-bins   build/tests/unit/test_unwind_table and -asan
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_unwind_table: this file adds the loader
# source it tests (compiled per variant under build/unit-objs*/loader/) and
# its fixture, build/unit-objs/libunwind_fixture.so from unwind_fixture.S
# (not in build/tests/unit/, whose every executable is run as a test).

UNWIND_UNIT_OBJ      := $(BUILD)/unit-objs/loader/unwind_table.o
UNWIND_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/unwind_table.o
UNWIND_FIXTURE       := $(BUILD)/unit-objs/libunwind_fixture.so

.PHONY: unwind-table-unit-bins
unwind-table-unit-bins: $(BUILD)/tests/unit/test_unwind_table \
	$(BUILD)/tests/unit/test_unwind_table-asan

$(BUILD)/tests/unit/test_unwind_table: $(UNWIND_UNIT_OBJ) | $(UNWIND_FIXTURE)
$(BUILD)/tests/unit/test_unwind_table-asan: $(UNWIND_UNIT_OBJ_ASAN) | $(UNWIND_FIXTURE)

$(UNWIND_FIXTURE): tests/unit/unwind_fixture.S tests/unit/unwind_table.mk
	@mkdir -p $(dir $@)
	$(CC) -shared -nostdlib -Wl,-z,noexecstack -o $@ $<

-include $(UNWIND_UNIT_OBJ:.o=.d) $(UNWIND_UNIT_OBJ_ASAN:.o=.d)
