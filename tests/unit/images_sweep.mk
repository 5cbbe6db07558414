# cmocka tests of the registry's system-wide upkeep: images of exited
# processes dropped by a scan, files a read found new (images.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_images_sweep: this file only adds the loader
# sources it tests, compiled per variant.

IMAGES_SWEEP_SRCS     := images proc_maps proc_files mapping_capture elf_syms
IMAGES_SWEEP_UNIT_OBJS      := $(IMAGES_SWEEP_SRCS:%=$(BUILD)/unit-objs/loader/%.o)
IMAGES_SWEEP_UNIT_OBJS_ASAN := $(IMAGES_SWEEP_SRCS:%=$(BUILD)/unit-objs-asan/loader/%.o)

$(BUILD)/tests/unit/test_images_sweep: $(IMAGES_SWEEP_UNIT_OBJS)
$(BUILD)/tests/unit/test_images_sweep-asan: $(IMAGES_SWEEP_UNIT_OBJS_ASAN)

-include $(IMAGES_SWEEP_UNIT_OBJS:.o=.d) $(IMAGES_SWEEP_UNIT_OBJS_ASAN:.o=.d)
