/* What the tests' own clients (httpclient, h2client) share: their clock and the report of the
 * figures the L7 tests compare galatop's with (client_p50 in tests/record/l7_lib.sh): the count,
 * the median of the n latencies in lat (sorted here), the client's CPU time (ns) and how often
 * it was preempted (involuntary context switches). */
#ifndef GALATOP_TESTS_TOOLS_CLIENT_TIMING_H
#define GALATOP_TESTS_TOOLS_CLIENT_TIMING_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(uint64_t *lat, int n)
{
	struct rusage ru;

	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	printf("requests %d\np50_ns %llu\n", n, (unsigned long long)lat[(n - 1) / 2]);
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("cpu_ns %llu\nnivcsw %ld\n",
		       (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
			       (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull,
		       ru.ru_nivcsw);
}

#endif
