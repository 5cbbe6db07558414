# cmocka tests of the pure parts of --http: listen addresses and CIDR
# blocks (src/loader/common/net_addr.c), the Prometheus text of /metrics
# (src/loader/serve/http_metrics.c) and the snapshot ring
# (src/loader/serve/snapshot_ring.c).  Included at the end of tests/unit/unit.mk,
# whose rule for every tests/unit/test_*.c builds test_http.

HTTP_UNIT_MODS := net_addr decimal http_metrics snapshot_ring

$(BUILD)/tests/unit/test_http: $(HTTP_UNIT_MODS:%=$(BUILD)/unit-objs/loader/%.o)
$(BUILD)/tests/unit/test_http-asan: $(HTTP_UNIT_MODS:%=$(BUILD)/unit-objs-asan/loader/%.o)
$(BUILD)/tests/unit/test_http $(BUILD)/tests/unit/test_http-asan: UNIT_LIBS += -lpthread

-include $(HTTP_UNIT_MODS:%=$(BUILD)/unit-objs/loader/%.d) \
         $(HTTP_UNIT_MODS:%=$(BUILD)/unit-objs-asan/loader/%.d)
