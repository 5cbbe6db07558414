# cmocka tests of report --growth (src/report/compare/growth_series.c), which read pprof
# profiles the test writes: the pprof objects and protobuf-c, as
# tests/unit/pprof.mk gives test_pprof (included after it, by unit.mk).

$(BUILD)/tests/unit/test_growth: $(PPROF_UNIT_MODS:%=$(BUILD)/unit-objs/%.o) $(PROTO_O)
$(BUILD)/tests/unit/test_growth-asan: $(PPROF_UNIT_MODS:%=$(BUILD)/unit-objs-asan/%.o) $(PROTO_O)
$(BUILD)/tests/unit/test_growth $(BUILD)/tests/unit/test_growth-asan: UNIT_LIBS += -lprotobuf-c
