/* Test workload: fault_big() touches 3 fresh pages for every one fault_small() touches.
 * Usage: faulter SECONDS [PAUSE_MS [REPORT]] (a pause of PAUSE_MS, default 20, after each
 * round; at exit the kernel's count of its minor faults is written to the file REPORT) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void touch(long pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	for (long i = 0; i < pages; i++)
		p[i * psz] = 1;
	munmap((void *)p, pages * psz);
}

__attribute__((noinline)) void fault_big(void) { touch(300); }
__attribute__((noinline)) void fault_small(void) { touch(100); }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	struct timespec t0, t, pause = { ms / 1000, ms % 1000 * 1000000 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fault_big();
		fault_small();
		if (ms > 0)
			nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	if (argc > 3) {
		struct rusage ru;
		FILE *f = fopen(argv[3], "w");

		getrusage(RUSAGE_SELF, &ru);
		if (f) {
			fprintf(f, "%ld\n", ru.ru_minflt);
			fclose(f);
		}
	}
	return 0;
}
