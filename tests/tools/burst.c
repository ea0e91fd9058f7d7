/* Test workload for trigger mode: quiet (asleep) for QUIET seconds, then THREADS threads spin
 * in burst_hot() for BURST seconds, then quiet again for QUIET seconds. Prints the UNIX time
 * the burst started and ended ("burst START END") when done.
 * Usage: burst QUIET BURST [THREADS] (default 2 threads: both CPUs of a small machine). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double burst_s;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burst_hot(double until)
{
	while (now() < until)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

static void *spinner(void *arg)
{
	burst_hot(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double quiet = argc > 1 ? atof(argv[1]) : 3, start, until;
	int n = argc > 3 ? atoi(argv[3]) : 2;
	pthread_t t[64];

	burst_s = argc > 2 ? atof(argv[2]) : 3;
	if (n < 1 || n > 64)
		n = 2;
	usleep((useconds_t)(quiet * 1e6));
	start = now();
	until = start + burst_s;
	for (int i = 1; i < n; i++)
		pthread_create(&t[i], NULL, spinner, &until);
	burst_hot(until);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	printf("burst %.3f %.3f\n", start, now());
	fflush(stdout);
	usleep((useconds_t)(quiet * 1e6));
	return 0;
}
