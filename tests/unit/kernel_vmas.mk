# cmocka tests of the mappings the kernel told of
# (src/loader/registry/kernel_vmas.c): kept per process until it is
# forgotten at its harvest.
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_kernel_vmas: this file only adds the
# loader sources it tests, compiled per variant.

KVMAS_SRCS           := kernel_vmas elf_syms
KVMAS_UNIT_OBJS      := $(KVMAS_SRCS:%=$(BUILD)/unit-objs/loader/%.o)
KVMAS_UNIT_OBJS_ASAN := $(KVMAS_SRCS:%=$(BUILD)/unit-objs-asan/loader/%.o)

$(BUILD)/tests/unit/test_kernel_vmas: $(KVMAS_UNIT_OBJS)
$(BUILD)/tests/unit/test_kernel_vmas-asan: $(KVMAS_UNIT_OBJS_ASAN)

-include $(KVMAS_UNIT_OBJS:.o=.d) $(KVMAS_UNIT_OBJS_ASAN:.o=.d)
