#define _GNU_SOURCE
/* Test workloads of the thread timeline, each with known behaviour:
 *   tl_work deadlock            DeadThd1 locks A then B, DeadThd2 B then A: stuck forever
 *   tl_work contend SECONDS     CompeteThd1 holds a mutex 20 ms at a time, CompeteThd2 waits
 *   tl_work file PATH N         N times write 64 KiB + fsync on PATH (FileThd)
 *   tl_work tcp PORT N          NetThd connects to 127.0.0.1:PORT (its own server thread that
 *                               reads slowly) and writes N chunks of 256 KiB
 *   tl_work sleep N MS          SleepThd calls nanosleep N times for MS ms; prints N
 *   tl_work syscalls SECS SPIN  two SysThd threads: a 1-byte write to /dev/null, then SPIN
 *                               loop iterations, for SECS seconds; prints the writes done
 *   tl_work pipe N MS           PipeThd reads N bytes from a pipe one at a time, a writer
 *                               thread writing one MS ms after the last, once the reader
 *                               blocks; prints N and the reads' total time in microseconds,
 *                               timed around each read
 *   tl_work hold N MS           HoldThd takes a mutex N times and holds it MS ms once
 *                               WaitThd blocks waiting for it; prints N and WaitThd's total
 *                               wait in pthread_mutex_lock in microseconds
 * Prints "ready" on stdout when its threads run. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static double run_s;
static int port, count, ms;
static const char *path;

static void nap_ms(long n)
{
	struct timespec ts = { n / 1000, (n % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void lock_second(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}

static void *dead1(void *arg)
{
	pthread_setname_np(pthread_self(), "DeadThd1");
	pthread_mutex_lock(&a);
	nap_ms(200);
	lock_second(&b);
	return arg;
}

static void *dead2(void *arg)
{
	pthread_setname_np(pthread_self(), "DeadThd2");
	pthread_mutex_lock(&b);
	nap_ms(200);
	lock_second(&a);
	return arg;
}

__attribute__((noinline)) void hold_lock(void)
{
	pthread_mutex_lock(&a);
	nap_ms(20);
	pthread_mutex_unlock(&a);
}

__attribute__((noinline)) void wait_lock(void)
{
	pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a);
}

static void *holder(void *arg)
{
	double end = now_s() + run_s;

	pthread_setname_np(pthread_self(), "CompeteThd1");
	while (now_s() < end) {
		hold_lock();
		sched_yield();
	}
	return arg;
}

static void *waiter(void *arg)
{
	double end = now_s() + run_s;

	pthread_setname_np(pthread_self(), "CompeteThd2");
	nap_ms(5);
	while (now_s() < end)
		wait_lock();
	return arg;
}

__attribute__((noinline)) void write_sync(int fd, const char *buf, size_t n)
{
	if (write(fd, buf, n) != (ssize_t)n)
		perror("write");
	fsync(fd);
}

static void *file_thd(void *arg)
{
	static char buf[65536];
	int fd;

	pthread_setname_np(pthread_self(), "FileThd");
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < count; i++) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			perror(path);
			exit(1);
		}
		write_sync(fd, buf, sizeof(buf));
		close(fd);
	}
	return arg;
}

static void *server(void *arg)
{
	int ls = *(int *)arg, c = accept(ls, NULL, NULL);
	static char buf[65536];

	pthread_setname_np(pthread_self(), "SrvThd");
	while (c >= 0 && read(c, buf, sizeof(buf)) > 0)
		nap_ms(1);
	return NULL;
}

__attribute__((noinline)) void send_chunk(int s, const char *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(s, buf + done, n - done);

		if (w <= 0)
			exit(1);
		done += (size_t)w;
	}
}

static void *net_thd(void *arg)
{
	static char buf[262144];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	pthread_setname_np(pthread_self(), "NetThd");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		exit(1);
	}
	for (int i = 0; i < count; i++)
		send_chunk(s, buf, sizeof(buf));
	close(s);
	return arg;
}

__attribute__((noinline)) void one_sleep(void)
{
	nap_ms(ms);
}

static void *sleep_thd(void *arg)
{
	pthread_setname_np(pthread_self(), "SleepThd");
	for (int i = 0; i < count; i++)
		one_sleep();
	return arg;
}

static int pipe_fd[2];
static volatile pid_t reader_tid, waiter_tid;

/* Returns once thread tid of this process sleeps (state S: blocked, so that each of the
 * calls the tests count does block, however late the machine's load makes it). */
static void until_blocked(volatile pid_t *tid)
{
	char path[64], buf[256], *p;
	FILE *f;

	while (!*tid)
		nap_ms(1);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)*tid);
	for (;;) {
		f = fopen(path, "r");
		if (!f)
			exit(1);
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
		nap_ms(1);
	}
}

static void *pipe_writer(void *arg)
{
	for (int i = 0; i < count; i++) {
		nap_ms(ms);
		until_blocked(&reader_tid);
		if (write(pipe_fd[1], "x", 1) != 1)
			exit(1);
	}
	return arg;
}

__attribute__((noinline)) double read_byte(int fd)
{
	double t0 = now_s();
	char c;

	if (read(fd, &c, 1) != 1)
		exit(1);
	return now_s() - t0;
}

static void *pipe_reader(void *arg)
{
	double *total = arg;

	pthread_setname_np(pthread_self(), "PipeThd");
	reader_tid = gettid();
	for (int i = 0; i < count; i++)
		*total += read_byte(pipe_fd[0]);
	return NULL;
}

/* Round i: the holder takes the lock and says so; the waiter says it is about to wait and
 * waits; the holder holds the lock ms more, lets it go and waits for the waiter to have taken
 * and released it. The flags are spun on (no system call besides the lock's and the sleep). */
static volatile int hold_round, wait_round, done_round;

static void spin_until(volatile int *flag, int value)
{
	while (*flag != value)
		__builtin_ia32_pause();
}

static void *hold_thd(void *arg)
{
	pthread_setname_np(pthread_self(), "HoldThd");
	for (int i = 1; i <= count; i++) {
		pthread_mutex_lock(&a);
		hold_round = i;
		spin_until(&wait_round, i);
		until_blocked(&waiter_tid);
		nap_ms(ms);
		pthread_mutex_unlock(&a);
		spin_until(&done_round, i);
	}
	return arg;
}

__attribute__((noinline)) double wait_mutex(void)
{
	double t0 = now_s();

	pthread_mutex_lock(&a);
	return now_s() - t0;
}

static void *wait_thd(void *arg)
{
	double *total = arg;

	pthread_setname_np(pthread_self(), "WaitThd");
	waiter_tid = gettid();
	for (int i = 1; i <= count; i++) {
		spin_until(&hold_round, i);
		wait_round = i;
		*total += wait_mutex();
		pthread_mutex_unlock(&a);
		done_round = i;
	}
	return NULL;
}

static volatile int stop_spin;
static long spin;
static long done[2];

static void *sys_thd(void *arg)
{
	long *n = arg;
	int fd = open("/dev/null", O_WRONLY);

	pthread_setname_np(pthread_self(), "SysThd");
	while (!stop_spin) {
		if (write(fd, "x", 1) != 1)
			break;
		for (volatile long i = 0; i < spin; i++)
			;
		(*n)++;
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;
	int ls = -1;

	if (argc < 2)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "deadlock")) {
		pthread_create(&t1, NULL, dead1, NULL);
		pthread_create(&t2, NULL, dead2, NULL);
		printf("ready\n");
		pthread_join(t1, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "contend") && argc > 2) {
		run_s = atof(argv[2]);
		pthread_create(&t1, NULL, holder, NULL);
		pthread_create(&t2, NULL, waiter, NULL);
		printf("ready\n");
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "file") && argc > 3) {
		path = argv[2];
		count = atoi(argv[3]);
		nap_ms(300); /* the probes attach meanwhile when the test starts us first */
		pthread_create(&t1, NULL, file_thd, NULL);
		printf("ready\n");
		pthread_join(t1, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "tcp") && argc > 3) {
		struct sockaddr_in sa = { .sin_family = AF_INET };
		int one = 1;

		port = atoi(argv[2]);
		count = atoi(argv[3]);
		ls = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sa.sin_port = htons((uint16_t)port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1)) {
			perror("bind");
			return 1;
		}
		nap_ms(300);
		pthread_create(&t2, NULL, server, &ls);
		pthread_create(&t1, NULL, net_thd, NULL);
		printf("ready\n");
		pthread_join(t1, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "syscalls") && argc > 3) {
		spin = atol(argv[3]);
		pthread_create(&t1, NULL, sys_thd, &done[0]);
		pthread_create(&t2, NULL, sys_thd, &done[1]);
		nap_ms((long)(atof(argv[2]) * 1000));
		stop_spin = 1;
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		printf("%ld\n", done[0] + done[1]);
		return 0;
	}
	if (!strcmp(argv[1], "pipe") && argc > 3) {
		double total = 0;

		count = atoi(argv[2]);
		ms = atoi(argv[3]);
		if (pipe(pipe_fd))
			return 1;
		nap_ms(300);
		pthread_create(&t1, NULL, pipe_reader, &total);
		pthread_create(&t2, NULL, pipe_writer, NULL);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		printf("%d %.0f\n", count, total * 1e6);
		return 0;
	}
	if (!strcmp(argv[1], "hold") && argc > 3) {
		double total = 0;

		count = atoi(argv[2]);
		ms = atoi(argv[3]);
		nap_ms(300);
		pthread_create(&t1, NULL, hold_thd, NULL);
		pthread_create(&t2, NULL, wait_thd, &total);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		printf("%d %.0f\n", count, total * 1e6);
		return 0;
	}
	if (!strcmp(argv[1], "sleep") && argc > 3) {
		count = atoi(argv[2]);
		ms = atoi(argv[3]);
		nap_ms(300);
		pthread_create(&t1, NULL, sleep_thd, NULL);
		pthread_join(t1, NULL);
		printf("%d\n", count);
		return 0;
	}
	return 2;
}
