/* Test workload: one thread sleeps 300 ms in sleep_long() and 100 ms in sleep_short(),
 * alternately. Usage: sleeper SECONDS */
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void sleep_long(void) { nap(300); }
__attribute__((noinline)) void sleep_short(void) { nap(100); }

int main(int argc, char **argv)
{
	int rounds = (int)((argc > 1 ? atof(argv[1]) : 4) / 0.4);

	for (int i = 0; i < rounds; i++) {
		sleep_long();
		sleep_short();
	}
	return 0;
}
