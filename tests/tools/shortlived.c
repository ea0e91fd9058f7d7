/* Test workload: burns CPU in short_burst() (called from main through burst_caller) for about
 * 50 ms, or for the milliseconds given as its argument, then exits. Usage: shortlived [MS] */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void short_burst(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ms * 1000000L);
}

__attribute__((noinline)) void burst_caller(long ms)
{
	short_burst(ms);
	sink++;
}

int main(int argc, char **argv)
{
	burst_caller(argc > 1 ? atol(argv[1]) : 50);
	return 0;
}
