/*
 * shapes.cpp: leaks from C++ methods in a namespace, with malloc (operator
 * new is not traced yet).  Names must come out demangled, e.g.
 * shapes::Grid::grow.  Expected numbers: tests/integration/programs.py.
 *
 * It calls into libstdc++ (std::set_new_handler) so that libstdc++.so is
 * linked and its start-up code runs before main: its emergency exception
 * pool is a malloc made before main that memtrace -- CMD must see too.
 */
#include <cstdlib>
#include <new>

#define NOINLINE __attribute__((noinline))

namespace shapes {

class Grid {
public:
	void grow();
	void scratch();

private:
	void *rows[16];
	int nrows = 0;
};

/* 512 bytes per call, kept. */
NOINLINE void Grid::grow() /* DEF_GRID_GROW */
{
	rows[nrows++] = std::malloc(512); /* GRID_GROW */
}

/* 2 x 64 bytes, freed. */
NOINLINE void Grid::scratch() /* DEF_GRID_SCRATCH */
{
	for (int i = 0; i < 2; i++) {
		void *p = std::malloc(64); /* GRID_SCRATCH */

		std::free(p);
	}
}

template <typename T>
struct Box {
	T *items;
	NOINLINE void fill(int n) /* DEF_BOX_FILL */
	{
		items = static_cast<T *>(std::calloc(n, sizeof(T))); /* BOX_FILL */
	}
};

} // namespace shapes

static shapes::Grid grid;
static shapes::Box<long> box;

int main()
{
	std::set_new_handler(nullptr); /* links libstdc++ (allocates nothing) */
	for (int i = 0; i < 3; i++)
		grid.grow(); /* CALL_GRID_GROW */
	grid.scratch(); /* CALL_GRID_SCRATCH */
	box.fill(7); /* CALL_BOX_FILL */
	return 0;
}
