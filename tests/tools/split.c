/* Test workload: a periodic loop (a frame loop, a poller) spending 50/35/15 of each period in
 * leaf_a, leaf_b and leaf_c, paced by CLOCK_MONOTONIC. Its period defaults to 10 periods of a
 * 997 Hz sampler (10.03 ms), the worst case for fixed-rate sampling at that frequency: every
 * sample then falls on one of 10 phases of the loop. Pinned to one CPU with -c (the sampler of
 * one CPU keeps one phase). Prints, at the end, the true split of its CPU time (thread CPU clock
 * read at each phase change) as "truth A B C cpu S": percents, then its CPU seconds.
 * Usage: split SECONDS [-p PERIOD_US] [-c CPU] */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static double cpu[3];

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Spins until until (CLOCK_MONOTONIC seconds), checking the clock every few microseconds. */
#define SPIN(until)                                                                              \
	do {                                                                                     \
		while (clock_s(CLOCK_MONOTONIC) < (until))                                       \
			for (int i_ = 0; i_ < 2000; i_++)                                        \
				sink += i_;                                                      \
	} while (0)

__attribute__((noinline)) void leaf_a(double until) { SPIN(until); }
__attribute__((noinline)) void leaf_b(double until) { SPIN(until); }
__attribute__((noinline)) void leaf_c(double until) { SPIN(until); }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, period = 10.0 / 997, t0, end, c0, c1;
	void (*const leaf[3])(double) = { leaf_a, leaf_b, leaf_c };
	static const double share[3] = { 0.50, 0.35, 0.15 };
	double total = 0;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-p"))
			period = atof(argv[i + 1]) / 1e6;
		if (!strcmp(argv[i], "-c")) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(atoi(argv[i + 1]), &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
	}
	t0 = clock_s(CLOCK_MONOTONIC);
	end = t0 + secs;
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	for (double start = t0; start < end; start += period) {
		double at = start;

		for (int k = 0; k < 3; k++) {
			at += share[k] * period;
			leaf[k](at);
			c1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
			cpu[k] += c1 - c0;
			c0 = c1;
		}
	}
	for (int k = 0; k < 3; k++)
		total += cpu[k];
	printf("truth %.2f %.2f %.2f cpu %.3f\n", 100 * cpu[0] / total, 100 * cpu[1] / total,
	       100 * cpu[2] / total, total);
	return 0;
}
