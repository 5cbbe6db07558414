# cmocka tests of memtrace's own allocator code moved out of reach of its
# probes (src/loader/registry/private_text.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_private_text: this file only adds the
# loader source it tests, compiled per variant.

PRIVATE_TEXT_SRCS := private_text proc_maps
PRIVATE_TEXT_UNIT_OBJ      := $(PRIVATE_TEXT_SRCS:%=$(BUILD)/unit-objs/loader/%.o)
PRIVATE_TEXT_UNIT_OBJ_ASAN := $(PRIVATE_TEXT_SRCS:%=$(BUILD)/unit-objs-asan/loader/%.o)

$(BUILD)/tests/unit/test_private_text: $(PRIVATE_TEXT_UNIT_OBJ)
$(BUILD)/tests/unit/test_private_text-asan: $(PRIVATE_TEXT_UNIT_OBJ_ASAN)

-include $(PRIVATE_TEXT_UNIT_OBJ:.o=.d) $(PRIVATE_TEXT_UNIT_OBJ_ASAN:.o=.d)
