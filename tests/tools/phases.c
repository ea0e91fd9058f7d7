/* Test workload with known phases: main -> phase_one -> spin for the first A seconds, then
 * main -> phase_two -> spin for B seconds. Usage: phases A B. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void spin(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) void phase_one(double until)
{
	while (now() < until)
		spin();
}

__attribute__((noinline)) void phase_two(double until)
{
	while (now() < until)
		spin();
}

int main(int argc, char **argv)
{
	double a = argc > 1 ? atof(argv[1]) : 3, b = argc > 2 ? atof(argv[2]) : 3, t0 = now();

	phase_one(t0 + a);
	phase_two(t0 + a + b);
	return 0;
}
