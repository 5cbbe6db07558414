/*
 * alloc_cxx.cpp: every form of operator new and operator delete, built
 * with -std=gnu++17 -fsized-deallocation (so that aligned new and sized
 * delete are what the compiler emits):
 *
 *   new                _Znwm                    delete (sized)     _ZdlPvm
 *   new[]              _Znam                    delete[] (sized)   _ZdaPvm
 *   nothrow new        _ZnwmRKSt9nothrow_t      ::operator delete  _ZdlPv
 *   nothrow new[]      _ZnamRKSt9nothrow_t      delete[] (unsized) _ZdaPv
 *   aligned new        _ZnwmSt11align_val_t     nothrow delete     _ZdlPvRKSt9nothrow_t
 *   aligned new[]      _ZnamSt11align_val_t     nothrow delete[]   _ZdaPvRKSt9nothrow_t
 *   aligned nothrow    _ZnwmSt11align_val_tRKSt9nothrow_t
 *   aligned nothrow[]  _ZnamSt11align_val_tRKSt9nothrow_t
 *   aligned delete, unsized/sized, scalar/array, plain/nothrow:
 *                      _Zd[la]Pv[m]St11align_val_t[RKSt9nothrow_t]
 *
 * Built three ways: plain (libstdc++'s operators, glibc's malloc), run
 * under LD_PRELOAD of jemalloc (jemalloc's operators), and linked with
 * -ltcmalloc (tcmalloc's): the program's numbers are the same in all.
 *
 * Sizes are what operator new is asked for: new T[n] of a type with a
 * destructor adds an array cookie of max(sizeof(size_t), alignof(T))
 * bytes (Itanium C++ ABI), none for a trivially destructible T.
 * Expected numbers: tests/integration/test_allocators.py.
 */
#include <cstddef>
#include <new>

#define NOINLINE __attribute__((noinline))

/* 64 bytes, 64-aligned: the aligned forms; trivially destructible. */
struct alignas(64) Aligned {
	char data[64];
};

/* 64 bytes, 64-aligned, with a destructor: new[] adds a 64-byte cookie. */
struct alignas(64) AlignedD {
	char data[64];
	~AlignedD() { data[0] = 0; }
};

/* 16 bytes with a destructor: new[] adds an 8-byte cookie. */
struct Tracked {
	long a, b;
	~Tracked() { a = b = 0; }
};

static const std::align_val_t AL64 = std::align_val_t(64);

void *volatile keep[32];
static int nkeep;

/* new int (4, sized delete), ::operator new(8) (::operator delete). */
NOINLINE void cx_new_delete() /* DEF_CX_NEW_DELETE */
{
	int *p = new int(7); /* CX_NEW_DELETE */
	void *q = ::operator new(8);

	delete p;
	::operator delete(q);
}

/* new int[25] (100, unsized delete[]), new Tracked[3] (3*16+8 = 56, sized delete[]). */
NOINLINE void cx_array() /* DEF_CX_ARRAY */
{
	int *a = new int[25]; /* CX_ARRAY */
	Tracked *t = new Tracked[3];

	delete[] a;
	delete[] t;
}

/* nothrow new double (8) and char[40] (40), nothrow deletes. */
NOINLINE void cx_nothrow() /* DEF_CX_NOTHROW */
{
	double *d = new (std::nothrow) double(1.5); /* CX_NOTHROW */
	char *c = new (std::nothrow) char[40];

	::operator delete(d, std::nothrow);
	::operator delete[](c, std::nothrow);
}

/*
 * new Aligned (64, sized aligned delete), new Aligned[3] (192, unsized
 * aligned delete[]), new AlignedD[2] (2*64+64 = 192, sized aligned delete[]).
 */
NOINLINE void cx_aligned() /* DEF_CX_ALIGNED */
{
	Aligned *a = new Aligned; /* CX_ALIGNED */
	Aligned *b = new Aligned[3];
	AlignedD *c = new AlignedD[2];

	delete a;
	delete[] b;
	delete[] c;
}

/*
 * Aligned nothrow new: Aligned (64, unsized aligned delete), Aligned[2]
 * (128, aligned nothrow delete[]), Aligned (64, aligned nothrow delete).
 */
NOINLINE void cx_aligned_nothrow() /* DEF_CX_ALIGNED_NOTHROW */
{
	Aligned *a = new (std::nothrow) Aligned; /* CX_ALIGNED_NOTHROW */
	Aligned *b = new (std::nothrow) Aligned[2];
	Aligned *c = new (std::nothrow) Aligned;

	::operator delete(a, AL64);
	::operator delete[](b, AL64, std::nothrow);
	::operator delete(c, AL64, std::nothrow);
}

/* Leaks one call below main: new int[25] (100), new Aligned (64), nothrow new long (8). */
NOINLINE void cx_leak_direct() /* DEF_CX_LEAK_DIRECT */
{
	keep[nkeep++] = new int[25]; /* CX_LEAK_DIRECT */
	keep[nkeep++] = new Aligned; /* CX_LEAK_DIRECT_ALIGNED */
	keep[nkeep++] = new (std::nothrow) long(3); /* CX_LEAK_DIRECT_NOTHROW */
}

/*
 * Leaks three calls below main: new Tracked[3] (56), nothrow new
 * Aligned[2] (128), new AlignedD (64).
 */
NOINLINE void cx_leak_deep() /* DEF_CX_LEAK_DEEP */
{
	keep[nkeep++] = new Tracked[3]; /* CX_LEAK_DEEP */
	keep[nkeep++] = new (std::nothrow) Aligned[2]; /* CX_LEAK_DEEP_NOTHROW */
	keep[nkeep++] = new AlignedD; /* CX_LEAK_DEEP_ALIGNED */
}

NOINLINE void cx_deep_b() /* DEF_CX_DEEP_B */
{
	cx_leak_deep(); /* CALL_CX_LEAK_DEEP */
}

NOINLINE void cx_deep_a() /* DEF_CX_DEEP_A */
{
	cx_deep_b(); /* CALL_CX_DEEP_B */
}

int main()
{
	cx_new_delete(); /* CALL_CX_NEW_DELETE */
	cx_array(); /* CALL_CX_ARRAY */
	cx_nothrow(); /* CALL_CX_NOTHROW */
	cx_aligned(); /* CALL_CX_ALIGNED */
	cx_aligned_nothrow(); /* CALL_CX_ALIGNED_NOTHROW */
	cx_leak_direct(); /* CALL_CX_LEAK_DIRECT */
	cx_deep_a(); /* CALL_CX_DEEP_A */
	return 0;
}
