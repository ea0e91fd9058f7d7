/* malloc+free pairs in a loop: the per-call cost of an allocator probe (tests/bench/leak.sh).
 *
 *   mallocpair SIZE SECONDS
 *
 * Allocates SIZE bytes and frees them again, over and over for about SECONDS, then prints
 * "pairs N ns_per_pair X". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? (size_t)atol(argv[1]) : 64;
	double secs = argc > 2 ? atof(argv[2]) : 2, t0 = now(), t1 = t0;
	unsigned long pairs = 0;

	while (t1 - t0 < secs) {
		for (int i = 0; i < 1000; i++) {
			char *volatile p = malloc(size);

			free(p);
		}
		pairs += 1000;
		t1 = now();
	}
	printf("pairs %lu ns_per_pair %.1f\n", pairs, (t1 - t0) * 1e9 / (double)pairs);
	return 0;
}
