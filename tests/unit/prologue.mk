# cmocka tests of the entry-probe placement (src/loader/attach/prologue.c).
#
#   make prologue-unit-bins   build/tests/unit/test_prologue and -asan
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_prologue: this file only adds the loader
# source it tests, compiled per variant like unit.mk's report objects (under
# build/unit-objs*/loader/, so the main build's objects are never touched).
# The tests read Debian's allocator libraries and their own executable, and
# check the skipped instructions with capstone.

PROLOGUE_UNIT_OBJ      := $(BUILD)/unit-objs/loader/prologue.o
PROLOGUE_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/prologue.o

.PHONY: prologue-unit-bins
prologue-unit-bins: $(BUILD)/tests/unit/test_prologue \
	$(BUILD)/tests/unit/test_prologue-asan

$(BUILD)/tests/unit/test_prologue: $(PROLOGUE_UNIT_OBJ)
$(BUILD)/tests/unit/test_prologue-asan: $(PROLOGUE_UNIT_OBJ_ASAN)
# capstone: an independent decoder the answers on real libraries are checked with.
$(BUILD)/tests/unit/test_prologue $(BUILD)/tests/unit/test_prologue-asan: UNIT_LIBS += -lcapstone

-include $(PROLOGUE_UNIT_OBJ:.o=.d) $(PROLOGUE_UNIT_OBJ_ASAN:.o=.d)
