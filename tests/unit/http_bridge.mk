# cmocka tests of the HTTP bridge's reference counts (src/loader/serve/http_bridge.c,
# included by the test with the loop, tracer and collection stubbed): the
# process copies shared between reads, one read shared by the requests that
# asked for it, released exactly once (ASan's leak and use-after-free checks).
# Included at the end of tests/unit/unit.mk.  The source includes the BPF
# skeleton's header through tracer.h.

$(BUILD)/tests/unit/test_http_bridge $(BUILD)/tests/unit/test_http_bridge-asan: $(BPF_SKEL) $(PROTO_H)
$(BUILD)/tests/unit/test_http_bridge $(BUILD)/tests/unit/test_http_bridge-asan: UNIT_LIBS += -lpthread
