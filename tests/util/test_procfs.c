/* Unit tests for util/procfs: walking numbered /proc entries and reading status fields, against
 * what this process knows of itself. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "util/procfs.h"

struct seen {
	int want, found, n;
};

static int look_for(void *ctx, int id)
{
	struct seen *s = ctx;

	s->n++;
	s->found |= id == s->want;
	return 0;
}

static int stop_at(void *ctx, int id)
{
	return id == *(int *)ctx ? 7 : 0;
}

static void *idle(void *arg)
{
	pause();
	return arg;
}

TEST_CASE(walks_processes_and_threads)
{
	struct seen s = { getpid(), 0, 0 };
	char dir[64];
	pthread_t t;
	int me = getpid();

	CHECK(procfs_each_id("/proc", look_for, &s) == 0 && s.found && s.n > 1);
	CHECK(procfs_each_id("/proc", stop_at, &me) == 7); /* fn's value ends the walk */
	CHECK(pthread_create(&t, NULL, idle, NULL) == 0);
	snprintf(dir, sizeof(dir), "/proc/%d/task", getpid());
	s = (struct seen){ getpid(), 0, 0 };
	CHECK(procfs_each_id(dir, look_for, &s) == 0 && s.found && s.n == 2);
	pthread_cancel(t);
	pthread_join(t, NULL);
	CHECK(procfs_each_id("/proc/no-such-dir", look_for, &s) == -ENOENT);
}

TEST_CASE(finds_status_fields)
{
	const char *text = "Name:\tcat\nUmask:\t0022\nNSpid:\t4242\t17\nUid:\t1000\t1001\t1000\t1000\n"
			   "SigCgt:\t0000000000000004";
	const char *v;
	char *mine;
	size_t len;

	v = procfs_field(text, "Uid", &len);
	CHECK(v && len == 19 && !strncmp(v, "1000\t1001", 9));
	v = procfs_field(text, "NSpid", &len);
	CHECK(v && len == 7 && !strncmp(v, "4242\t17", len));
	v = procfs_field(text, "SigCgt", &len); /* last line, no newline */
	CHECK(v && len == 16);
	CHECK(!procfs_field(text, "Nam", &len)); /* a prefix of a key is not the key */
	CHECK(!procfs_field(text, "Gid", &len));
	CHECK(!procfs_field("", "Uid", &len));
	CHECK(procfs_status(getpid(), &mine) == 0);
	v = procfs_field(mine, "Pid", &len);
	CHECK(v && atoi(v) == getpid());
	v = procfs_field(mine, "Uid", &len);
	CHECK(v && (unsigned)atoi(v) == getuid());
	free(mine);
	CHECK(procfs_status(0x7fffffff, &mine) == -ENOENT);
}

int main(void)
{
	RUN(walks_processes_and_threads);
	RUN(finds_status_fields);
	HARNESS_EXIT();
}
