/* Test workload for the SLI probes: each mode does something of known cost and prints the
 * kernel's own accounting of it, measured around the work, as key=value pairs.
 *   sli_work spin SECONDS            busy loop; run_delay_ns from /proc/self/schedstat over it,
 *                                    run_delay_total_ns over the thread's life
 *   sli_work sleep N MS              N sleeps of MS; slept_ns measured around each one
 *   sli_work dio FILE N              N O_DIRECT 4 KiB overwrites of synced blocks of FILE (a
 *                                    regular file, or a block device written directly); the
 *                                    device's /sys/dev/block stat deltas (ios, ticks_ms, ...);
 *                                    the thread's voluntary context switches in the writes (vcsw)
 *                                    and in its life (vcsw_total)
 *   sli_work pagecache FILE MB SECS  writes then rereads an MB file for SECS (memcg reclaim)
 *   sli_work anon MB SECS            touches MB of anonymous memory for SECS (swap); its major
 *                                    faults (getrusage)
 * Every mode prints tid= first. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t run_delay(void)
{
	unsigned long long run, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f || fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	if (f)
		fclose(f);
	return wait;
}

/* Fields of a block device's stat file (Documentation/block/stat.rst). */
static int dev_stat(dev_t dev, unsigned long long v[17])
{
	char path[128];
	FILE *f;
	int n;

	/* A partition's own stat counts its I/O too, so the file's device is right either way. */
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat", major(dev), minor(dev));
	f = fopen(path, "r");
	if (!f)
		return -1;
	memset(v, 0, 17 * sizeof(v[0]));
	n = 0;
	while (n < 17 && fscanf(f, "%llu", &v[n]) == 1)
		n++;
	fclose(f);
	return n >= 11 ? 0 : -1;
}

static void spin(double secs)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9), t0 = now_ns(), d0 = run_delay(), d1;
	volatile uint64_t x = 0;

	while (now_ns() < end)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
	d1 = run_delay();

	printf("run_delay_ns=%llu run_delay_total_ns=%llu wall_ns=%llu\n",
	       (unsigned long long)(d1 - d0), (unsigned long long)d1,
	       (unsigned long long)(now_ns() - t0));
}

static void nap(int n, long ms)
{
	uint64_t slept = 0;

	for (int i = 0; i < n; i++) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		uint64_t t = now_ns();

		nanosleep(&ts, NULL);
		slept += now_ns() - t;
	}
	printf("slept_ns=%llu\n", (unsigned long long)slept);
}

static int dio(const char *path, int n)
{
	int fd = open(path, O_CREAT | O_RDWR, 0600), dfd, bdev;
	unsigned long long a[17], b[17];
	struct rusage r0, r1;
	struct stat st;
	void *buf;
	uint64_t t0;

	if (fd < 0 || fstat(fd, &st) || posix_memalign(&buf, 4096, 4096)) {
		perror(path);
		return 1;
	}
	/* A block device is its own device; its blocks need no allocation. A file's device is
	 * its filesystem's, which must be a block device (not overlay, btrfs or tmpfs). */
	bdev = S_ISBLK(st.st_mode);
	if (bdev)
		st.st_dev = st.st_rdev;
	/* Real blocks first (buffered, synced), unless the file has them already: the measured
	 * overwrites then need no journal and no flush, so every request is one the device's stat
	 * counts. */
	memset(buf, 0x5a, 4096);
	for (int i = bdev ? n : (int)(st.st_size / 4096); i < n; i++)
		if (pwrite(fd, buf, 4096, (off_t)i * 4096) != 4096) {
			perror("write");
			return 1;
		}
	fsync(fd);
	dfd = open(path, O_WRONLY | O_DIRECT);
	if (dfd < 0 || dev_stat(st.st_dev, a)) {
		fprintf(stderr, "no O_DIRECT or no block device stat for %s (device %u:%u)\n", path,
			major(st.st_dev), minor(st.st_dev));
		return 1;
	}
	getrusage(RUSAGE_THREAD, &r0);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		if (pwrite(dfd, buf, 4096, (off_t)i * 4096) != 4096) {
			perror("pwrite");
			return 1;
		}
	dev_stat(st.st_dev, b);
	getrusage(RUSAGE_THREAD, &r1);
	/* reads, writes, discards completed (0, 4, 11) and their ticks (3, 7, 14); flushes 15, 16. */
	printf("ios=%llu ticks_ms=%llu writes=%llu write_ticks_ms=%llu flushes=%llu "
	       "flush_ticks_ms=%llu wall_ns=%llu vcsw=%ld vcsw_total=%ld\n",
	       (b[0] - a[0]) + (b[4] - a[4]) + (b[11] - a[11]),
	       (b[3] - a[3]) + (b[7] - a[7]) + (b[14] - a[14]), b[4] - a[4], b[7] - a[7],
	       b[15] - a[15], b[16] - a[16], (unsigned long long)(now_ns() - t0),
	       r1.ru_nvcsw - r0.ru_nvcsw, r1.ru_nvcsw);
	close(dfd);
	close(fd);
	if (!bdev)
		unlink(path);
	return 0;
}

static int pagecache(const char *path, long mb, double secs)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	static char buf[1 << 16];
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	long rounds = 0;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	memset(buf, 0x33, sizeof(buf));
	for (long i = 0; i < mb * 16; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			return 1;
		}
	while (now_ns() < end) {
		lseek(fd, 0, SEEK_SET);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		rounds++;
	}
	printf("rounds=%ld\n", rounds);
	close(fd);
	unlink(path);
	return 0;
}

static int anon(long mb, double secs)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	size_t len = (size_t)mb << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rusage ru;
	long rounds = 0;

	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	while (now_ns() < end) {
		for (size_t i = 0; i < len; i += 4096)
			p[i] = (char)(p[i] + 1);
		rounds++;
	}
	getrusage(RUSAGE_THREAD, &ru);
	printf("rounds=%ld majflt=%ld\n", rounds, ru.ru_majflt);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	printf("tid=%d ", (int)gettid());
	fflush(stdout);
	if (!strcmp(mode, "spin") && argc > 2)
		spin(atof(argv[2]));
	else if (!strcmp(mode, "sleep") && argc > 3)
		nap(atoi(argv[2]), atol(argv[3]));
	else if (!strcmp(mode, "dio") && argc > 3)
		return dio(argv[2], atoi(argv[3]));
	else if (!strcmp(mode, "pagecache") && argc > 4)
		return pagecache(argv[2], atol(argv[3]), atof(argv[4]));
	else if (!strcmp(mode, "anon") && argc > 3)
		return anon(atol(argv[2]), atof(argv[3]));
	else {
		fprintf(stderr, "usage: see the comment at the top of sli_work.c (%s)\n",
			strerror(EINVAL));
		return 2;
	}
	return 0;
}
