// Two inlined functions with a known split of the work (70/30 iterations of the same inlined
// template method), inside one outer function called from main: the C++ workload of
// tests/record/test_cxx.sh, built -O2 -g.
#include <cstdlib>
#include <ctime>

static volatile unsigned long sink;

namespace gt {
template <typename T> struct Acc {
	T v;
	inline __attribute__((always_inline)) void mix(T i)
	{
		for (int k = 0; k < 100; k++)
			v = v * 31 + i + k;
	}
};

static inline __attribute__((always_inline)) void inner_alpha(Acc<unsigned long> &a, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		a.mix(i);
}

static inline __attribute__((always_inline)) void inner_beta(Acc<unsigned long> &a, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		a.mix(i ^ 5);
}

__attribute__((noinline)) void outer(unsigned long n)
{
	Acc<unsigned long> a{ 0 };

	inner_alpha(a, 7 * n);
	inner_beta(a, 3 * n);
	sink += a.v;
}
} // namespace gt

int main(int argc, char **argv)
{
	time_t end = time(nullptr) + (argc > 1 ? atoi(argv[1]) : 3);

	while (time(nullptr) < end)
		gt::outer(1000);
}
