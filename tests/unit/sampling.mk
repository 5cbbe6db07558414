# cmocka tests of the sampling arithmetic (bpf/sampling.h, the code the BPF
# program runs) with the tables src/loader/bpf/sampling.c fills.
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_sampling: this file only adds the loader
# source it needs, compiled per variant (under build/unit-objs*/loader/),
# and libm.

SAMPLING_UNIT_OBJ      := $(BUILD)/unit-objs/loader/sampling.o
SAMPLING_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/sampling.o

$(BUILD)/tests/unit/test_sampling: $(SAMPLING_UNIT_OBJ)
$(BUILD)/tests/unit/test_sampling-asan: $(SAMPLING_UNIT_OBJ_ASAN)
$(BUILD)/tests/unit/test_sampling $(BUILD)/tests/unit/test_sampling-asan: UNIT_LIBS += -lm

-include $(SAMPLING_UNIT_OBJ:.o=.d) $(SAMPLING_UNIT_OBJ_ASAN:.o=.d)
