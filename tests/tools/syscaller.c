/* Test workload: a tight loop of write(2) to /dev/null, so most time is in the kernel.
 * Usage: syscaller SECONDS */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void write_loop(int fd)
{
	static char buf[4096];

	for (int i = 0; i < 1000; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			exit(1);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int fd = open("/dev/null", O_WRONLY);
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		write_loop(fd);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
