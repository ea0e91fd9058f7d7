/* Test workload: main -> mid -> leaf_alpha | leaf_beta | leaf_gamma -> spin, spending 60/30/10
 * of its CPU in the three leaves, in rounds of about 100 ms (long enough that sampling cannot
 * alias with them). Usage: burn SECONDS [-c], -c printing the rounds done (benchmarks). */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

static unsigned long unit = 10000000; /* BURN_SCALE=N divides it: finer rounds for counting */

__attribute__((noinline)) void leaf_alpha(void) { spin(6 * unit); }
__attribute__((noinline)) void leaf_beta(void) { spin(3 * unit); }
__attribute__((noinline)) void leaf_gamma(void) { spin(unit); }

__attribute__((noinline)) void mid(void)
{
	leaf_alpha();
	leaf_beta();
	leaf_gamma();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	unsigned long rounds = 0;
	const char *scale = getenv("BURN_SCALE");

	if (scale && atol(scale) > 0)
		unit /= (unsigned long)atol(scale);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		mid();
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	if (argc > 2 && !strcmp(argv[2], "-c"))
		printf("%lu\n", rounds);
	return 0;
}
