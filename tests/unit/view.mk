# cmocka tests of pprof's views (src/report/model/view.c), which report --growth
# (growth_series.c, in unit.mk's library) applies too: view.o for both,
# compiled per variant by unit.mk's rules for report sources.

VIEW_UNIT_OBJS      := $(BUILD)/unit-objs/view.o
VIEW_UNIT_OBJS_ASAN := $(BUILD)/unit-objs-asan/view.o

# options.c checks the views' expressions as it parses them (test_options).
$(BUILD)/tests/unit/test_view $(BUILD)/tests/unit/test_growth $(BUILD)/tests/unit/test_options: $(VIEW_UNIT_OBJS)
$(BUILD)/tests/unit/test_view-asan $(BUILD)/tests/unit/test_growth-asan $(BUILD)/tests/unit/test_options-asan: $(VIEW_UNIT_OBJS_ASAN)

-include $(VIEW_UNIT_OBJS:.o=.d) $(VIEW_UNIT_OBJS_ASAN:.o=.d)
