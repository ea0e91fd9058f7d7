/* Test workload, built without frame pointers: time spent in Debian's libz compress2 from two
 * callers, caller_a 70% and caller_b 30% (7 and 3 equal compressions per round). libz is
 * dlopen'ed after a first CPU-bound phase (warmup), so an unwinder must notice the new
 * library. Usage: zlib_nofp SECONDS [THREADS]: with THREADS > 1 the rounds run in that many
 * threads (stacks then start at start_thread instead of main). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*compress2_fn)(unsigned char *dst, unsigned long *dlen, const unsigned char *src,
			    unsigned long slen, int level);

#define SRC_LEN (64 * 1024)

static compress2_fn z_compress2;
static unsigned char src[SRC_LEN];
static double secs = 3;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) void squeeze(unsigned char *dst)
{
	unsigned long dlen = SRC_LEN + 1024;

	z_compress2(dst, &dlen, src, SRC_LEN, 6);
	sink += dlen;
}

__attribute__((noinline)) void caller_a(unsigned char *dst)
{
	for (int i = 0; i < 7; i++)
		squeeze(dst);
}

__attribute__((noinline)) void caller_b(unsigned char *dst)
{
	for (int i = 0; i < 3; i++)
		squeeze(dst);
}

__attribute__((noinline)) void *work(void *arg)
{
	unsigned char *dst = malloc(SRC_LEN + 1024);
	double end = now() + secs;

	while (dst && now() < end) {
		caller_a(dst);
		caller_b(dst);
	}
	free(dst);
	return arg;
}

__attribute__((noinline)) void warmup(double s)
{
	double end = now() + s;

	while (now() < end)
		sink++;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	unsigned seed = 1;
	pthread_t th[64];
	void *lib;

	secs = argc > 1 ? atof(argv[1]) : 3;
	for (int i = 0; i < SRC_LEN; i++) { /* compressible but not trivially so */
		seed = seed * 1103515245 + 12345;
		src[i] = "abcdefgh"[(seed >> 16) % 8];
	}
	warmup(0.3);
	lib = dlopen("libz.so.1", RTLD_NOW);
	z_compress2 = lib ? (compress2_fn)dlsym(lib, "compress2") : NULL;
	if (!z_compress2) {
		fprintf(stderr, "zlib_nofp: cannot load libz.so.1\n");
		return 1;
	}
	if (nthreads <= 1) {
		work(NULL);
		return 0;
	}
	if (nthreads > 64)
		nthreads = 64;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, work, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
