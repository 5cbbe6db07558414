# cmocka tests of --http's admission checks (src/loader/serve/http_guard.c): the
# Host values that name the server, cross-site Origins, the token (Bearer,
# compared whole) and its file, and unix:PATH as a listen address.
# Included at the end of tests/unit/unit.mk.

HTTP_GUARD_UNIT_MODS := http_guard net_addr decimal

$(BUILD)/tests/unit/test_http_guard: $(HTTP_GUARD_UNIT_MODS:%=$(BUILD)/unit-objs/loader/%.o)
$(BUILD)/tests/unit/test_http_guard-asan: $(HTTP_GUARD_UNIT_MODS:%=$(BUILD)/unit-objs-asan/loader/%.o)

-include $(HTTP_GUARD_UNIT_MODS:%=$(BUILD)/unit-objs/loader/%.d) \
         $(HTTP_GUARD_UNIT_MODS:%=$(BUILD)/unit-objs-asan/loader/%.d)
