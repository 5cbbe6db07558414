# test_sym_alias dlopens a shared object with glibc-style aliases, built
# without debug information from tests/unit/sym_alias_lib.c (it finds it
# from its own path: build/tests/unit/../../unit-objs/).
SYM_ALIAS_LIB := $(BUILD)/unit-objs/libsym_alias.so

$(SYM_ALIAS_LIB): tests/unit/sym_alias_lib.c tests/unit/sym_alias.map
	@mkdir -p $(dir $@)
	$(CC) -O2 -fPIC -shared -Wall -Wextra -Werror \
		-Wl,--version-script=tests/unit/sym_alias.map $< -o $@

$(BUILD)/tests/unit/test_sym_alias: $(BUILD)/unit-objs/self_profile.o $(SYM_ALIAS_LIB)
$(BUILD)/tests/unit/test_sym_alias-asan: $(BUILD)/unit-objs-asan/self_profile.o \
	$(SYM_ALIAS_LIB)

# test_sym_index compares the symbol index's address lookup with libdwfl's
# over every address of a shared object of symbols of every kind (built
# from tests/unit/sym_lookup_lib.S, never run), and over a stripped copy
# (.dynsym only).  It finds them as test_sym_alias finds its library.
SYM_LOOKUP_LIB := $(BUILD)/unit-objs/libsym_lookup.so
SYM_LOOKUP_STRIPPED := $(BUILD)/unit-objs/libsym_lookup-stripped.so

$(SYM_LOOKUP_LIB): tests/unit/sym_lookup_lib.S
	@mkdir -p $(dir $@)
	$(CC) -shared -nostdlib $< -o $@

$(SYM_LOOKUP_STRIPPED): $(SYM_LOOKUP_LIB)
	objcopy --strip-all $< $@

$(BUILD)/tests/unit/test_sym_index $(BUILD)/tests/unit/test_sym_index-asan: \
	$(SYM_LOOKUP_LIB) $(SYM_LOOKUP_STRIPPED)

# test_perf_map symbolises addresses of this process (self_profile.c).
$(BUILD)/tests/unit/test_perf_map: $(BUILD)/unit-objs/self_profile.o
$(BUILD)/tests/unit/test_perf_map-asan: $(BUILD)/unit-objs-asan/self_profile.o
