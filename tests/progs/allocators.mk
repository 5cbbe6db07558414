# Test programs for the allocators memtrace chooses besides glibc's
# (included by tests/progs/progs.mk; tests: tests/integration/test_allocators.py).
#
#   alloc_jemalloc, alloc_jewait   run under LD_PRELOAD of libjemalloc.so.2
#                                  (not linked with it: jemalloc's own API is
#                                  declared weak in the sources)
#   alloc_tcmalloc                 linked with -ltcmalloc
#   alloc_tcmalloc_minimal         the same source, -ltcmalloc_minimal
#   alloc_static                   gcc -static: the executable defines malloc
#   alloc_cxx                      every operator new/delete (libstdc++'s)
#   alloc_cxx_tcmalloc             the same source, linked with -ltcmalloc
#
# Same conventions as progs.mk: -O0, frame pointers, fixed flags.
# Needs libjemalloc-dev and libgoogle-perftools-dev (scripts/install-deps.sh).

ALLOC_CXXFLAGS := -std=gnu++17 -fsized-deallocation -faligned-new

PROGS_ALLOC := alloc_jemalloc alloc_jewait alloc_tcmalloc alloc_tcmalloc_minimal \
	alloc_static alloc_cxx alloc_cxx_tcmalloc

tests-progs: $(addprefix $(PROGS_DIR)/,$(PROGS_ALLOC))

$(PROGS_DIR)/alloc_jemalloc $(PROGS_DIR)/alloc_jewait: $(PROGS_DIR)/%: $(PROGS_SRC)/%.c tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -o $@ $<

$(PROGS_DIR)/alloc_tcmalloc: $(PROGS_SRC)/alloc_tcmalloc.c tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -o $@ $< -ltcmalloc

$(PROGS_DIR)/alloc_tcmalloc_minimal: $(PROGS_SRC)/alloc_tcmalloc.c tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -o $@ $< -ltcmalloc_minimal

$(PROGS_DIR)/alloc_static: $(PROGS_SRC)/alloc_static.c tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -static -o $@ $<

$(PROGS_DIR)/alloc_cxx: $(PROGS_SRC)/alloc_cxx.cpp tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CXX) $(PROGS_O0) $(ALLOC_CXXFLAGS) -o $@ $<

$(PROGS_DIR)/alloc_cxx_tcmalloc: $(PROGS_SRC)/alloc_cxx.cpp tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CXX) $(PROGS_O0) $(ALLOC_CXXFLAGS) -o $@ $< -ltcmalloc

# --mmap and dlopen (tests/integration/test_mmap_dlopen.py).
tests-progs: $(PROGS_DIR)/mmapper $(PROGS_DIR)/dlopener $(PROGS_DIR)/libplugin.so

$(PROGS_DIR)/mmapper: $(PROGS_SRC)/mmapper.c tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -o $@ $<

$(PROGS_DIR)/dlopener: $(PROGS_SRC)/dlopener.c tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -o $@ $< -ldl

$(PROGS_DIR)/libplugin.so: $(PROGS_SRC)/plugin.cpp tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CXX) $(PROGS_O0) -shared -fPIC -o $@ $<

# An allocator whose functions carry a prefix (--symbol-prefix je_).
tests-progs: $(PROGS_DIR)/prefixed

$(PROGS_DIR)/libprefixed.so: $(PROGS_SRC)/prefixed_alloc.c tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -shared -fPIC -o $@ $<

$(PROGS_DIR)/prefixed: $(PROGS_SRC)/prefixed.c $(PROGS_DIR)/libprefixed.so tests/progs/allocators.mk | $(PROGS_DIR)
	$(PROGS_CC) $(PROGS_O0) -o $@ $< -L$(PROGS_DIR) -lprefixed -Wl,-rpath,$(abspath $(PROGS_DIR))
