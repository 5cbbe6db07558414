# cmocka tests of the batched BPF hash-map walk (src/loader/bpf/map_walk.c).
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_map_walk: this file only adds the loader
# source it tests, compiled per variant (under build/unit-objs*/loader/),
# and libbpf.  The tests create BPF hash maps: they need root (or
# CAP_BPF); without it they are skipped, or fail with MEMTRACE_REQUIRE_BPF.

MAP_WALK_UNIT_OBJ      := $(BUILD)/unit-objs/loader/map_walk.o
MAP_WALK_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/map_walk.o

$(BUILD)/tests/unit/test_map_walk: $(MAP_WALK_UNIT_OBJ)
$(BUILD)/tests/unit/test_map_walk-asan: $(MAP_WALK_UNIT_OBJ_ASAN)
$(BUILD)/tests/unit/test_map_walk $(BUILD)/tests/unit/test_map_walk-asan: UNIT_LIBS += -lbpf

-include $(MAP_WALK_UNIT_OBJ:.o=.d) $(MAP_WALK_UNIT_OBJ_ASAN:.o=.d)
