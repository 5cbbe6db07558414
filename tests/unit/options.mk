# cmocka tests of the command line (src/loader/options/options.c), with what it
# checks values against: listen addresses and CIDR blocks (net_addr.c,
# decimal.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_options: this file only adds the loader
# sources it needs, compiled per variant.

OPTIONS_UNIT_MODS := options net_addr decimal top_sort

$(BUILD)/tests/unit/test_options: $(OPTIONS_UNIT_MODS:%=$(BUILD)/unit-objs/loader/%.o)
$(BUILD)/tests/unit/test_options-asan: $(OPTIONS_UNIT_MODS:%=$(BUILD)/unit-objs-asan/loader/%.o)

-include $(OPTIONS_UNIT_MODS:%=$(BUILD)/unit-objs/loader/%.d) \
         $(OPTIONS_UNIT_MODS:%=$(BUILD)/unit-objs-asan/loader/%.d)
