/* Test workload: burns CPU in short_burst() for about 50 ms, then exits. */
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void short_burst(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 50000000L);
}

int main(void)
{
	short_burst();
	return 0;
}
