/* Memory that grows in two phases from known functions: the workload of the leak history and
 * growth tests (tests/record/test_leak.sh, tests/record/test_growth.sh).
 *
 *   grower GAP_SECONDS
 *
 * Phase one: leak_early leaks 256 blocks of 4 KiB (malloc), map_early maps 8 MiB of anonymous
 * memory and touches it. GAP_SECONDS later, phase two: leak_late leaks 768 blocks of 4 KiB,
 * map_late maps 16 MiB and touches it, unmap_part unmaps the last 4 MiB of that mapping,
 * brk_grow moves the program break up by 4 MiB (touched) and brk_shrink moves it back down by
 * 1 MiB. Each phase prints "phase N" when it starts; then each function's bytes as
 * "truth NAME BYTES" (what it holds: the unmapped and shrunk parts taken back from map_late
 * and brk_grow), RssAnon at the start and now as "rss START NOW" (KiB), and "ready"; it then
 * sleeps until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
#define MiB (1l << 20)

static void *kept[1024];
static int nkept;

static long leak_blocks(int n)
{
	for (int i = 0; i < n && nkept < 1024; i++) {
		char *p = malloc(BLOCK);

		if (p)
			memset(p, 1, BLOCK);
		kept[nkept++] = p;
	}
	return (long)n * BLOCK;
}

static long leak_early(void)
{
	return leak_blocks(256);
}

static long leak_late(void)
{
	return leak_blocks(768);
}

static char *map_anon(long bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 1, bytes);
	return p;
}

static long map_early(void)
{
	return map_anon(8 * MiB) ? 8 * MiB : 0;
}

static char *late;

static long map_late(void)
{
	late = map_anon(16 * MiB);
	return late ? 16 * MiB : 0;
}

static long unmap_part(void)
{
	return late && !munmap(late + 12 * MiB, 4 * MiB) ? 4 * MiB : 0;
}

static long brk_grow(void)
{
	char *p = sbrk(4 * MiB);

	if (p == (void *)-1)
		return 0;
	memset(p, 1, 4 * MiB);
	return 4 * MiB;
}

static long brk_shrink(void)
{
	return sbrk(-MiB) == (void *)-1 ? 0 : MiB;
}

static long rss_anon_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	double gap = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t = { (time_t)gap, (long)((gap - (time_t)gap) * 1e9) };
	long rss0, le, me, ll, ml, un, bg, bs;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rss0 = rss_anon_kib();
	printf("phase 1\n");
	le = leak_early();
	me = map_early();
	nanosleep(&t, NULL);
	printf("phase 2\n");
	ll = leak_late();
	ml = map_late();
	un = unmap_part();
	bg = brk_grow();
	bs = brk_shrink();
	printf("truth leak_early %ld\ntruth leak_late %ld\ntruth map_early %ld\n"
	       "truth map_late %ld\ntruth brk_grow %ld\n",
	       le, ll, me, ml - un, bg - bs);
	printf("rss %ld %ld\nready\n", rss0, rss_anon_kib());
	for (;;)
		pause();
}
