# cmocka tests of the file identity the loader gives the report's modules
# (src/loader/registry/mapping_capture.c over images.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_module_id: this file only adds the loader
# sources it tests (the same as images.mk's), compiled per variant.

MODULE_ID_SRCS          := images proc_maps proc_files mapping_capture elf_syms
MODULE_ID_UNIT_OBJS      := $(MODULE_ID_SRCS:%=$(BUILD)/unit-objs/loader/%.o)
MODULE_ID_UNIT_OBJS_ASAN := $(MODULE_ID_SRCS:%=$(BUILD)/unit-objs-asan/loader/%.o)

$(BUILD)/tests/unit/test_module_id: $(MODULE_ID_UNIT_OBJS)
$(BUILD)/tests/unit/test_module_id-asan: $(MODULE_ID_UNIT_OBJS_ASAN)
