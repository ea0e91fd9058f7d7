/* The malloc+free loop both allocator cost tools time (mallocpair, uprobe_cost). */
#ifndef GALATOP_TOOLS_PAIRS_H
#define GALATOP_TOOLS_PAIRS_H

#include <stdlib.h>
#include <time.h>

static double pairs_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Allocates size bytes and frees them again for about secs seconds; the pairs done in *n,
 * the ns per pair returned. */
static double pairs_run(size_t size, double secs, unsigned long *n)
{
	double t0 = pairs_now(), t1 = t0;
	unsigned long pairs = 0;

	while (t1 - t0 < secs) {
		for (int i = 0; i < 1000; i++) {
			char *volatile p = malloc(size);

			free(p);
		}
		pairs += 1000;
		t1 = pairs_now();
	}
	if (n)
		*n = pairs;
	return (t1 - t0) * 1e9 / (double)pairs;
}

#endif
