// SPDX-License-Identifier: MIT
// symbolize_cxx.cpp: C++ code for test_symbolize.c: a member function in a
// namespace, whose DWARF name comes from DW_AT_linkage_name (on the
// declaration, reached through DW_AT_specification) and must be demangled.
#include <cstdint>

extern "C" void record_return(uint64_t *ra);

namespace shapes {
struct Circle {
	void area(uint64_t *ra, int *line);
};

__attribute__((noinline)) void Circle::area(uint64_t *ra, int *line)
{
	record_return(ra); *line = __LINE__;
	__asm__ volatile("" ::: "memory");
}
} // namespace shapes

extern "C" void cxx_member_call(uint64_t *ra, int *line)
{
	shapes::Circle c;

	c.area(ra, line);
	__asm__ volatile("" ::: "memory");
}
