# cmocka tests of the unwind tables kept on disk (src/loader/unwind/unwind_cache.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_unwind_cache: this file adds the loader
# sources it needs (compiled per variant under build/unit-objs*/loader/).
# build_id.c and file_id.c come with the report library.

UNWIND_CACHE_UNIT_OBJS      := $(BUILD)/unit-objs/loader/unwind_cache.o \
                               $(BUILD)/unit-objs/loader/unwind_table.o
UNWIND_CACHE_UNIT_OBJS_ASAN := $(BUILD)/unit-objs-asan/loader/unwind_cache.o \
                               $(BUILD)/unit-objs-asan/loader/unwind_table.o

$(BUILD)/tests/unit/test_unwind_cache: $(UNWIND_CACHE_UNIT_OBJS)
$(BUILD)/tests/unit/test_unwind_cache-asan: $(UNWIND_CACHE_UNIT_OBJS_ASAN)

-include $(UNWIND_CACHE_UNIT_OBJS:.o=.d) $(UNWIND_CACHE_UNIT_OBJS_ASAN:.o=.d)
