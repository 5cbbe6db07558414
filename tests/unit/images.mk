# cmocka tests of the registry of process images and their files
# (src/loader/registry/images.c, over proc_maps.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_images: this file only adds the loader
# sources it tests, compiled per variant.

IMAGES_SRCS          := images proc_maps proc_files mapping_capture elf_syms
IMAGES_UNIT_OBJS      := $(IMAGES_SRCS:%=$(BUILD)/unit-objs/loader/%.o)
IMAGES_UNIT_OBJS_ASAN := $(IMAGES_SRCS:%=$(BUILD)/unit-objs-asan/loader/%.o)

$(BUILD)/tests/unit/test_images: $(IMAGES_UNIT_OBJS)
$(BUILD)/tests/unit/test_images-asan: $(IMAGES_UNIT_OBJS_ASAN)

-include $(IMAGES_UNIT_OBJS:.o=.d) $(IMAGES_UNIT_OBJS_ASAN:.o=.d)
