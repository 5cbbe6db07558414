# cmocka tests of pprof's views (src/report/view.c), which report --growth
# (growth.c, in unit.mk's library) applies too: view.o for both, compiled
# per variant like unit.mk's report objects.

VIEW_UNIT_OBJS      := $(BUILD)/unit-objs/view.o
VIEW_UNIT_OBJS_ASAN := $(BUILD)/unit-objs-asan/view.o

$(VIEW_UNIT_OBJS): $(BUILD)/unit-objs/%.o: src/report/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(UNIT_CFLAGS) -MMD -MP -c $< -o $@

$(VIEW_UNIT_OBJS_ASAN): $(BUILD)/unit-objs-asan/%.o: src/report/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(UNIT_CFLAGS) $(UNIT_SANITIZE) -MMD -MP -c $< -o $@

# options.c checks the views' expressions as it parses them (test_options).
$(BUILD)/tests/unit/test_view $(BUILD)/tests/unit/test_growth $(BUILD)/tests/unit/test_options: $(VIEW_UNIT_OBJS)
$(BUILD)/tests/unit/test_view-asan $(BUILD)/tests/unit/test_growth-asan $(BUILD)/tests/unit/test_options-asan: $(VIEW_UNIT_OBJS_ASAN)

-include $(VIEW_UNIT_OBJS:.o=.d) $(VIEW_UNIT_OBJS_ASAN:.o=.d)
