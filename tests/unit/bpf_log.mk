# cmocka tests of how libbpf's messages are shown (src/loader/bpf/bpf_log.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_bpf_log: this file only adds the loader
# source it needs, compiled per variant (under build/unit-objs*/loader/),
# and libbpf.

BPF_LOG_UNIT_OBJ      := $(BUILD)/unit-objs/loader/bpf_log.o
BPF_LOG_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/bpf_log.o

$(BUILD)/tests/unit/test_bpf_log: $(BPF_LOG_UNIT_OBJ)
$(BUILD)/tests/unit/test_bpf_log-asan: $(BPF_LOG_UNIT_OBJ_ASAN)
$(BUILD)/tests/unit/test_bpf_log $(BUILD)/tests/unit/test_bpf_log-asan: UNIT_LIBS += -lbpf

-include $(BPF_LOG_UNIT_OBJ:.o=.d) $(BPF_LOG_UNIT_OBJ_ASAN:.o=.d)
