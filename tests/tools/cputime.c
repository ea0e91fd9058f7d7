/* cputime CMD [ARG...]: runs CMD and, when it has ended, prints on standard error the CPU time
 * (user + system) it and the children it waited for used, in ns: "cpu_ns=N". The kernel keeps
 * that total to the nanosecond (/proc/PID/stat rounds it to clock ticks, 10 ms here). Then
 * "nivcsw=N": how many times they were preempted (involuntary context switches). Exits with
 * CMD's status. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: cputime CMD [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("cputime: fork");
		return 1;
	}
	if (!pid) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("cputime: wait4");
		return 1;
	}
	fprintf(stderr, "cpu_ns=%llu\n",
		(unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
			(unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull);
	fprintf(stderr, "nivcsw=%ld\n", ru.ru_nivcsw);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
