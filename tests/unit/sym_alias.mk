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
