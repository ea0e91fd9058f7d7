/* What the tests' own clients (httpclient, h2client, kafkaclient) share: their clock, a TCP
 * connection without Nagle's delay, each request's clock readings for the tests to pair with
 * galatop's (nested in tests/record/l7_lib.sh), and the report of the
 * figures the L7 tests compare galatop's with (client_p50 in tests/record/l7_lib.sh): the count,
 * the median of the n latencies in lat (sorted here), the client's CPU time (ns) and how often
 * it was preempted (involuntary context switches). */
#ifndef GALATOP_TESTS_TOOLS_CLIENT_TIMING_H
#define GALATOP_TESTS_TOOLS_CLIENT_TIMING_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Notes one request's clock readings, before its first system call and after its last: a line
 * "T0 T1" in the file $GT_CLIENT_TIMES names, when set (written at exit). */
static void log_times(uint64_t t0, uint64_t t1)
{
	static FILE *f;
	static int opened;

	if (!opened) {
		const char *path = getenv("GT_CLIENT_TIMES");

		opened = 1;
		if (path && !(f = fopen(path, "w")))
			perror(path);
	}
	if (f)
		fprintf(f, "%llu %llu\n", (unsigned long long)t0, (unsigned long long)t1);
}

/* A TCP connection to the IPv4 address host, port port, with TCP_NODELAY; its fd, or -1 (said
 * on standard error as who's). */
static int tcp_connect(const char *host, const char *port, const char *who)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	int fd, one = 1;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "%s: %s is not an IPv4 address\n", who, host);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror(who);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
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
