# cmocka tests of the operator new/delete forwarding analysis
# (src/loader/attach/forwarders.c), on Debian's libstdc++ and libjemalloc.
#
# Included at the end of tests/unit/unit.mk, whose rule for every
# tests/unit/test_*.c builds test_forwarders: this file adds the loader
# sources it tests (per variant, under build/unit-objs*/loader/); libcapstone
# is opened by capstone_lazy.c (dlopen, in libc).

FORWARDERS_UNIT_OBJ      := $(BUILD)/unit-objs/loader/forwarders.o \
			    $(BUILD)/unit-objs/loader/capstone_lazy.o
FORWARDERS_UNIT_OBJ_ASAN := $(BUILD)/unit-objs-asan/loader/forwarders.o \
			    $(BUILD)/unit-objs-asan/loader/capstone_lazy.o

$(BUILD)/tests/unit/test_forwarders: $(FORWARDERS_UNIT_OBJ)
$(BUILD)/tests/unit/test_forwarders-asan: $(FORWARDERS_UNIT_OBJ_ASAN)
-include $(FORWARDERS_UNIT_OBJ:.o=.d) $(FORWARDERS_UNIT_OBJ_ASAN:.o=.d)
