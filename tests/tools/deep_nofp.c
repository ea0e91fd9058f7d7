/* Test workload, built without frame pointers: main -> descend x 80 (a 160-byte frame each,
 * about 13 KB of stack) -> bottom, spinning at the bottom. Deeper than an 8 KB stack copy,
 * within a 16 KB one. Usage: deep_nofp SECONDS */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static double secs;

__attribute__((noinline)) void bottom(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

__attribute__((noinline)) void descend(int depth)
{
	volatile char pad[160];

	memset((char *)pad, depth, sizeof(pad));
	if (depth > 0)
		descend(depth - 1);
	else
		bottom();
	sink += pad[depth % sizeof(pad)];
}

int main(int argc, char **argv)
{
	secs = argc > 1 ? atof(argv[1]) : 2;
	descend(80);
	return 0;
}
