# cmocka tests of memtrace top's frames (src/loader/outputs/top_frame.c): growth
# per process and per stack between two snapshots, peaks, sort orders.
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_top_frame: this file only adds the loader
# source it tests, compiled per variant.

TOP_FRAME_UNIT_OBJ      := $(BUILD)/unit-objs/loader/top_frame.o \
                           $(BUILD)/unit-objs/loader/top_sort.o
TOP_FRAME_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/top_frame.o \
                           $(BUILD)/unit-objs-asan/loader/top_sort.o

$(BUILD)/tests/unit/test_top_frame: $(TOP_FRAME_UNIT_OBJ)
$(BUILD)/tests/unit/test_top_frame-asan: $(TOP_FRAME_UNIT_OBJ_ASAN)

-include $(TOP_FRAME_UNIT_OBJ:.o=.d) $(TOP_FRAME_UNIT_OBJ_ASAN:.o=.d)
