# Sanitizer builds of memtrace itself, for the tests that drive them
# (included by tests/tests.mk):
#
#   make memtrace-asan   build/memtrace-asan  (AddressSanitizer + UBSan)
#   make memtrace-tsan   build/memtrace-tsan  (ThreadSanitizer)
#
# Every loader and report source is compiled again per variant under
# build/asan/ and build/tsan/ (-O1: quicker to build, still optimised), so
# the main build's objects are never touched.  The generated protobuf code
# is linked uninstrumented from the main build.  -Wno-tsan: the fences
# that order memory shared with the BPF program (which TSan cannot see
# anyway) are not instrumented, and gcc says so.

SAN_CFLAGS_asan := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_CFLAGS_tsan := -O1 -g -fsanitize=thread -Wno-tsan

SAN_SRCS := $(LOADER_SRCS) $(REPORT_SRCS)
SAN_OBJS_asan := $(SAN_SRCS:%.c=$(BUILD)/asan/%.o)
SAN_OBJS_tsan := $(SAN_SRCS:%.c=$(BUILD)/tsan/%.o)

.PHONY: memtrace-asan memtrace-tsan
memtrace-asan: $(BUILD)/memtrace-asan
memtrace-tsan: $(BUILD)/memtrace-tsan

$(SAN_OBJS_asan) $(SAN_OBJS_tsan): $(BPF_SKEL) $(PROTO_H)

$(BUILD)/asan/%.o: %.c bpf/memleak.h $(PROFILE_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_CFLAGS_asan) -MMD -MP -c $< -o $@

$(BUILD)/tsan/%.o: %.c bpf/memleak.h $(PROFILE_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_CFLAGS_tsan) -MMD -MP -c $< -o $@

$(BUILD)/memtrace-asan: $(SAN_OBJS_asan) $(PROTO_O)
	$(CC) $(CFLAGS) $(SAN_CFLAGS_asan) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/memtrace-tsan: $(SAN_OBJS_tsan) $(PROTO_O)
	$(CC) $(CFLAGS) $(SAN_CFLAGS_tsan) $(LDFLAGS) -o $@ $^ $(LDLIBS)

-include $(SAN_OBJS_asan:.o=.d) $(SAN_OBJS_tsan:.o=.d)
