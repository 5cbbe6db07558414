# Test programs and unit-test binaries (included by the top Makefile).
include tests/unit/unit.mk
include tests/progs/progs.mk
include tests/sanitize.mk
