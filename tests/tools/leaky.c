/* Known leaks from known stacks while threads churn: the workload of the leak probe's tests
 * (tests/record/test_leak.sh) and bench (tests/bench/leak.sh).
 *
 *   leaky SECONDS [CHURN_THREADS [DELAY [CHURN_US]]]
 *
 * CHURN_THREADS threads (default 4) allocate blocks of 16 B to 64 KiB and hand them to the
 * next thread, which frees them (churn_alloc), for SECONDS, each pausing CHURN_US
 * microseconds after each block (default 0). After DELAY seconds (default 0; -1: once it
 * gets SIGUSR1, so that a probe attached to the running process sees them) it leaks,
 * from one function each: small blocks (leak_small), 1 MiB blocks through glibc's mmap path
 * (leak_big), realloc chains grown to 2 MiB (leak_realloc), aligned blocks (posix_memalign,
 * aligned_alloc, memalign, valloc: leak_aligned) and calloc'ed blocks (leak_calloc), printing
 * each function's bytes as "truth NAME BYTES", then "ready". Everything churned is freed
 * before it exits, so only the leaks are left; "churned N" then says how many blocks churned.
 * SIGUSR2 ends it before its time (after the leaks). */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SMALL_N 100000
#define SMALL_SIZE 64
#define BIG_N 8
#define BIG_SIZE (1 << 20)
#define CHAINS 4
#define CHAIN_END (2 << 20)
#define CALLOC_N 2048
#define RING 256

static void *kept[SMALL_N + 4096];
static size_t nkept;

static void keep(void *p)
{
	if (p && nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
}

static size_t leak_small(void)
{
	for (int i = 0; i < SMALL_N; i++)
		keep(malloc(SMALL_SIZE));
	return (size_t)SMALL_N * SMALL_SIZE;
}

static size_t leak_big(void)
{
	for (int i = 0; i < BIG_N; i++) {
		char *p = malloc(BIG_SIZE);

		if (p)
			p[0] = 1;
		keep(p);
	}
	return (size_t)BIG_N * BIG_SIZE;
}

static size_t leak_realloc(void)
{
	for (int c = 0; c < CHAINS; c++) {
		char *p = malloc(16), *q;

		for (size_t n = 32; p && n <= CHAIN_END; n *= 2) {
			q = realloc(p, n);
			if (!q)
				break;
			p = q;
			p[n - 1] = 1;
		}
		keep(p);
	}
	return (size_t)CHAINS * CHAIN_END;
}

static size_t leak_aligned(void)
{
	size_t total = 0;
	void *p;

	for (int i = 0; i < 256; i++)
		if (!posix_memalign(&p, 64, 4096)) {
			keep(p);
			total += 4096;
		}
	for (int i = 0; i < 64; i++) {
		keep(p = aligned_alloc(4096, 16384));
		total += p ? 16384 : 0;
	}
	for (int i = 0; i < 1024; i++) {
		keep(p = memalign(256, 1024));
		total += p ? 1024 : 0;
	}
	for (int i = 0; i < 128; i++) {
		keep(p = valloc(8192));
		total += p ? 8192 : 0;
	}
	return total;
}

static size_t leak_calloc(void)
{
	for (int i = 0; i < CALLOC_N; i++)
		keep(calloc(32, 32));
	return (size_t)CALLOC_N * 32 * 32;
}

/* One thread's hand-over ring: its producer is the previous thread. */
struct ring {
	pthread_mutex_t lock;
	void *slot[RING];
	unsigned head, len;
};

static struct ring *rings;
static int nthreads;
static volatile int stop;
static volatile sig_atomic_t go;
static unsigned churn_us;
static unsigned long churned[64];

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void *churn_alloc(unsigned *seed)
{
	unsigned r = next_rand(seed);
	size_t size = r % 64 ? 16 + r % 4081 : 65536;

	return malloc(size);
}

static void *churn(void *arg)
{
	int me = (int)(long)arg;
	struct ring *out = &rings[(me + 1) % nthreads], *in = &rings[me];
	unsigned seed = 12345u + (unsigned)me;

	while (!stop) {
		void *p = churn_alloc(&seed), *old = NULL;

		churned[me]++;
		pthread_mutex_lock(&out->lock);
		if (out->len < RING)
			out->slot[(out->head + out->len++) % RING] = p;
		else
			old = p;
		pthread_mutex_unlock(&out->lock);
		free(old);
		old = NULL;
		pthread_mutex_lock(&in->lock);
		if (in->len) {
			old = in->slot[in->head];
			in->head = (in->head + 1) % RING;
			in->len--;
		}
		pthread_mutex_unlock(&in->lock);
		free(old);
		if (churn_us)
			usleep(churn_us);
	}
	return NULL;
}

static void on_usr1(int sig)
{
	go = 1;
}

static volatile sig_atomic_t end_now;

static void on_usr2(int sig)
{
	end_now = 1;
}

static void sleep_s(double secs)
{
	struct timespec t = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, delay = argc > 3 ? atof(argv[3]) : 0;
	pthread_t th[64];

	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	nthreads = argc > 2 ? atoi(argv[2]) : 4;
	churn_us = argc > 4 ? (unsigned)atoi(argv[4]) : 0;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 4;
	setvbuf(stdout, NULL, _IOLBF, 0);
	rings = calloc((size_t)nthreads, sizeof(*rings));
	for (int i = 0; i < nthreads; i++)
		pthread_mutex_init(&rings[i].lock, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, churn, (void *)(long)i);
	while (delay < 0 && !go)
		usleep(10000);
	sleep_s(delay > 0 ? delay : 0);
	printf("truth leak_small %zu\n", leak_small());
	printf("truth leak_big %zu\n", leak_big());
	printf("truth leak_realloc %zu\n", leak_realloc());
	printf("truth leak_aligned %zu\n", leak_aligned());
	printf("truth leak_calloc %zu\n", leak_calloc());
	printf("ready\n");
	for (double left = delay >= 0 && secs > delay ? secs - delay : delay < 0 ? secs : 0;
	     left > 0 && !end_now; left -= 0.01)
		sleep_s(left < 0.01 ? left : 0.01);
	stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nthreads; i++)
		while (rings[i].len) {
			free(rings[i].slot[rings[i].head]);
			rings[i].head = (rings[i].head + 1) % RING;
			rings[i].len--;
		}
	free(rings);
	for (int i = 1; i < nthreads; i++)
		churned[0] += churned[i];
	printf("churned %lu\n", churned[0]);
	return 0;
}
