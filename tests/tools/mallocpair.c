/* malloc+free pairs in a loop: the per-call cost of an allocator probe (tests/bench/leak.sh).
 *
 *   mallocpair SIZE SECONDS
 *
 * Allocates SIZE bytes and frees them again, over and over for about SECONDS, then prints
 * "pairs N ns_per_pair X". */
#include <stdio.h>
#include <stdlib.h>

#include "pairs.h"

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? (size_t)atol(argv[1]) : 64;
	double secs = argc > 2 ? atof(argv[2]) : 2, ns;
	unsigned long pairs;

	ns = pairs_run(size, secs, &pairs);
	printf("pairs %lu ns_per_pair %.1f\n", pairs, ns);
	return 0;
}
