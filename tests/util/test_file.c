/* Unit tests for util/file (the whole-file reader and the untrusted open). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util/file.h"

static char dir[] = "/tmp/gt-file-XXXXXX";

static const char *at(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void write_file(const char *name, const char *text, size_t len)
{
	FILE *f = fopen(at(name), "w");

	CHECK(f && fwrite(text, 1, len, f) == len);
	if (f)
		fclose(f);
}

TEST_CASE(reads_whole_files_up_to_the_cap)
{
	char *buf;
	size_t len;

	write_file("ten", "0123456789", 10);
	CHECK(file_read(at("ten"), 10, 0, &buf, &len) == 0);
	CHECK(len == 10 && buf && buf[10] == '\0' && !strcmp(buf, "0123456789"));
	free(buf);
	CHECK(file_read(at("ten"), 9, FILE_UNTRUSTED, &buf, &len) == -EFBIG && !buf && !len);
	CHECK_STR(file_strerror(-EFBIG, 9), "larger than 9 bytes");
	CHECK_STR(file_strerror(-EFBIG, 16u << 20), "larger than 16 MiB");
	write_file("empty", "", 0);
	CHECK(file_read(at("empty"), 10, FILE_UNTRUSTED, &buf, &len) == 0 && len == 0 && buf &&
	      !buf[0]);
	free(buf);
	CHECK(file_read(at("none"), 10, 0, &buf, &len) == -ENOENT);
	/* procfs says size 0: the cap holds while reading. */
	CHECK(file_read("/proc/self/maps", 64, FILE_UNTRUSTED, &buf, &len) == -EFBIG);
	CHECK(file_read("/proc/self/maps", 1u << 24, FILE_UNTRUSTED, &buf, &len) == 0 && len > 64);
	free(buf);
}

TEST_CASE(untrusted_refuses_symlinks_fifos_and_devices_without_blocking)
{
	char *buf;
	size_t len;

	CHECK(symlink("/dev/zero", at("zero")) == 0);
	CHECK(file_read(at("zero"), 1u << 20, FILE_UNTRUSTED, &buf, &len) == -ELOOP);
	CHECK_STR(file_strerror(-ELOOP, 0), "a symbolic link");
	CHECK(mkfifo(at("fifo"), 0600) == 0);
	alarm(5); /* a blocking open would hang here: fail loudly instead */
	CHECK(file_read(at("fifo"), 1u << 20, FILE_UNTRUSTED, &buf, &len) == -EFTYPE_NOTREG);
	alarm(0);
	CHECK_STR(file_strerror(-EFTYPE_NOTREG, 0), "not a regular file");
	CHECK(file_read("/dev/zero", 1u << 20, FILE_UNTRUSTED, &buf, &len) == -EFTYPE_NOTREG);
	CHECK(file_open(dir, FILE_UNTRUSTED) == -EFTYPE_NOTREG);
	/* A trusted read follows the symlink and still stops at the cap. */
	CHECK(file_read(at("zero"), 1000, 0, &buf, &len) == -EFBIG);
	/* A huge sparse file is refused by its size, before reading. */
	{
		int fd = open(at("sparse"), O_CREAT | O_WRONLY, 0600);

		CHECK(fd >= 0 && ftruncate(fd, (off_t)1 << 40) == 0);
		close(fd);
		CHECK(file_read(at("sparse"), 1u << 20, FILE_UNTRUSTED, &buf, &len) == -EFBIG);
	}
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(dir)) {
		printf("FAIL: file_tests: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(reads_whole_files_up_to_the_cap);
	RUN(untrusted_refuses_symlinks_fifos_and_devices_without_blocking);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("  could not remove %s\n", dir);
	HARNESS_EXIT();
}
