/* Unit tests for util/procstat: /proc/stat, /proc/PID/stat and /proc/loadavg text, and the
 * busy share of a process that really spins, against the kernel's own accounting. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "util/procstat.h"

TEST_CASE(parses_proc_stat)
{
	const char *text = "cpu  100 10 50 800 20 5 5 10 7 0\n"
			   "cpu0 60 5 25 400 10 3 2 5 7 0\n"
			   "cpu1 40 5 25 400 10 2 3 5 0 0\n"
			   "intr 12345 0 0\nctxt 99\n";
	struct procstat_cpu all, cpus[4], a0, a1;

	CHECK_NUM(procstat_parse(text, &all, cpus, 4), 2);
	CHECK(all.busy == 100 + 10 + 50 + 5 + 5 + 10 && all.total == all.busy + 800 + 20);
	CHECK(cpus[0].busy == 100 && cpus[1].busy == 80 && cpus[2].total == 0);
	CHECK_NUM(procstat_parse("intr 1\n", &all, cpus, 4), -EINVAL);
	/* Busy share between two readings. */
	a0 = (struct procstat_cpu){ 100, 1000 };
	a1 = (struct procstat_cpu){ 175, 1100 };
	CHECK(fabs(procstat_busy_pct(&a0, &a1) - 75) < 1e-9);
	CHECK(isnan(procstat_busy_pct(&a1, &a1)));
}

TEST_CASE(parses_pid_stat_and_loadavg)
{
	uint64_t ticks;
	double load;

	/* A command name with spaces and parentheses: fields count from the last ')'. */
	CHECK(procstat_parse_pid("42 (a (b) c) R 1 42 42 0 -1 4194304 100 0 0 0 250 31 0 0 20 0 1 0",
				 &ticks) == 0);
	CHECK_NUM(ticks, 281);
	CHECK(procstat_parse_pid("42 no parens", &ticks) == -EINVAL);
	CHECK(procstat_parse_load("3.27 2.10 1.00 4/512 1234\n", &load) == 0 && load == 3.27);
	CHECK(procstat_parse_load("x", &load) == -EINVAL);
}

/* The process's own CPU ticks grow by about what it spun; the host's busy share over that
 * time is positive. */
TEST_CASE(reads_the_kernel_accounting)
{
	struct procstat_cpu a0, a1;
	uint64_t t0, t1;
	double load;
	struct timespec s, n;
	volatile unsigned long sink = 0;

	CHECK(procstat_read(&a0, NULL, 0) > 0);
	CHECK(procstat_read_pid(getpid(), &t0) == 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &s);
	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &n);
	} while ((n.tv_sec - s.tv_sec) + (n.tv_nsec - s.tv_nsec) / 1e9 < 0.3);
	CHECK(procstat_read_pid(getpid(), &t1) == 0);
	CHECK(procstat_read(&a1, NULL, 0) > 0);
	printf("  spun 0.3 s of CPU: %llu ticks of %ld per s\n", (unsigned long long)(t1 - t0),
	       sysconf(_SC_CLK_TCK));
	CHECK(t1 - t0 >= (uint64_t)(0.2 * sysconf(_SC_CLK_TCK)));
	CHECK(procstat_busy_pct(&a0, &a1) > 0);
	CHECK(procstat_read_pid(0x7ffffff0, &t0) == -ENOENT);
	CHECK(procstat_read_load(&load) == 0 && load >= 0);
}

int main(void)
{
	RUN(parses_proc_stat);
	RUN(parses_pid_stat_and_loadavg);
	RUN(reads_the_kernel_accounting);
	HARNESS_EXIT();
}
