/* Test workload: a storm of short processes, RATE fork+exec of PROG (default /bin/true) a
 * second for SECS seconds, each waited for. Usage: forkstorm RATE SECS [PROG [ARGS]] */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 1000, secs = argc > 2 ? atof(argv[2]) : 5;
	char *def[] = { "/bin/true", NULL };
	char **prog = argc > 3 ? argv + 3 : def;
	double t0 = now(), t;
	long n = 0;

	while ((t = now()) - t0 < secs) {
		pid_t pid;

		if (n >= (t - t0) * rate) {
			struct timespec pause = { 0, 200000 };

			nanosleep(&pause, NULL);
			continue;
		}
		pid = fork();
		if (pid == 0) {
			execv(prog[0], prog);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		n++;
	}
	return 0;
}
