/* Integration tests of bpf/uprobe_lib with real processes (tests/tools/sslcall): copies of
 * OpenSSL's libssl mapped by a process on the host, by one changed into another root, by one
 * in a mount namespace of its own (as a container's files are) and by one that loads its copy
 * after the first scan; each file probed once, every SSL call counted exactly by the L7
 * capture's OpenSSL programs, files without the symbols reported as values, nothing left after free.
 * Needs root and BPF; SKIP otherwise (FAIL under CI). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "harness.h"
#include "bpf/l7_event.h"
#include "bpf/percpu.h"
#include "bpf/uprobe_lib.h"
#include "l7_probe.skel.h"

struct child {
	pid_t pid;
	FILE *in, *out;
};

static char dir[64];		   /* the test's files */
static char libssl[256], libcrypto[256]; /* the system's */
static struct gt_l7_probe *skel;
static struct uprobe_lib *ul;
static struct child host, rooted, ns, later;

/* Starts tools/sslcall with pipes to its standard input and output. */
static int child_start(struct child *c)
{
	const char *tools = getenv("TOOLS");
	char path[512];
	int in[2], out[2];

	snprintf(path, sizeof(path), "%s/sslcall", tools ? tools : "build/tools");
	if (pipe(in) || pipe(out))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (!c->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, "sslcall", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = fdopen(in[1], "w");
	c->out = fdopen(out[0], "r");
	return c->in && c->out ? 0 : -ENOMEM;
}

/* Sends one command and waits for its answer; 0 when it was "ok". */
static int child_cmd(struct child *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!c->in)
		return -EINVAL;
	va_start(ap, fmt);
	vfprintf(c->in, fmt, ap);
	va_end(ap);
	fputc('\n', c->in);
	fflush(c->in);
	if (!fgets(line, sizeof(line), c->out))
		return -EIO;
	if (strcmp(line, "ok\n")) {
		printf("  sslcall: %s", line);
		return -EINVAL;
	}
	return 0;
}

static void child_stop(struct child *c)
{
	if (c->in) {
		child_cmd(c, "quit");
		fclose(c->in);
		fclose(c->out);
		c->in = c->out = NULL;
	}
	if (c->pid > 0)
		waitpid(c->pid, NULL, 0);
	c->pid = 0;
}

/* SSL calls the probes saw (the entry program stashes, the return program counts). */
static uint64_t ssl_calls(void)
{
	struct l7_counters c;

	percpu_sum_u64(skel->maps.gt_l7_counters, (uint64_t *)&c, sizeof(c) / sizeof(__u64));
	return c.ssl_calls;
}

/* The test's copies of libssl and the host's libc, by path: a library of each kind. */
static bool match(void *ctx, const char *path)
{
	const char *base = strrchr(path, '/') + 1;

	return (strstr(path, "/ulib-") && !strcmp(base, "libssl.so.3")) ||
	       !strcmp(base, "libc.so.6");
}

static const struct uprobe_lib_file *file_named(const char *part)
{
	for (size_t i = 0; i < uprobe_lib__nfiles(ul); i++)
		if (strstr(uprobe_lib__file(ul, i)->path, part))
			return uprobe_lib__file(ul, i);
	return NULL;
}

static int setup(void)
{
	static const char *const libdirs[] = { "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
					       "/usr/lib64", "/usr/lib" };
	char p[2048];

	for (size_t i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]) && !libcrypto[0]; i++) {
		snprintf(libssl, sizeof(libssl), "%s/libssl.so.3", libdirs[i]);
		if (!access(libssl, R_OK))
			snprintf(libcrypto, sizeof(libcrypto), "%s/libcrypto.so.3", libdirs[i]);
	}
	if (!libcrypto[0])
		libssl[0] = 0;
	if (!libssl[0])
		return -ENOENT;
	snprintf(dir, sizeof(dir), "/tmp/ulib-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	/* host/: a copy mapped from the host's root; root/: a root of its own with the copy and
	 * the libcrypto its loader looks for; later/: the copy loaded after the first scan; ns/:
	 * where the namespaced process mounts its own tmpfs and copies libssl. The rooted copy's
	 * path inside its root repeats the test's directory, so that match() knows it. */
	snprintf(p, sizeof(p),
		 "mkdir -p %s/host %s/later %s/ns %s/root/lib/x86_64-linux-gnu %s/root%s && "
		 "cp %s %s/host/ && cp %s %s/later/ && cp %s %s/root%s/ && "
		 "cp %s %s/root/lib/x86_64-linux-gnu/",
		 dir, dir, dir, dir, dir, dir, libssl, dir, libssl, dir, libssl, dir, dir,
		 libcrypto,
		 dir);
	if (system(p))
		return -EIO;
	skel = gt_l7_probe__open();
	if (!skel)
		return -errno;
	bpf_program__set_autoload(skel->progs.gt_l7_fork, false);
	if (gt_l7_probe__load(skel))
		return -EIO;
	{
		const struct uprobe_lib_probe probes[] = {
			{ "SSL_write", skel->progs.gt_l7_ssl_write, false, 0 },
			{ "SSL_write", skel->progs.gt_l7_ssl_ret, true, 0 },
			{ "SSL_no_such_function", skel->progs.gt_l7_ssl_read, false, 0 },
		};
		struct uprobe_lib_opts o = { .match = match, .probes = probes, .nprobes = 3 };

		ul = uprobe_lib__new(&o);
	}
	return ul ? 0 : -ENOMEM;
}

TEST_CASE(one_probe_set_per_file_across_roots)
{
	int pids[4];
	const struct uprobe_lib_file *f;
	char p[512];

	CHECK(child_start(&host) == 0 && child_start(&rooted) == 0 && child_start(&ns) == 0 &&
	      child_start(&later) == 0);
	CHECK(child_cmd(&host, "open %s/host/libssl.so.3", dir) == 0);
	CHECK(child_cmd(&rooted, "chroot %s/root", dir) == 0);
	CHECK(child_cmd(&rooted, "open %s/libssl.so.3", dir) == 0);
	CHECK(child_cmd(&ns, "unshare %s/ns", dir) == 0);
	CHECK(child_cmd(&ns, "copy %s %s/ns/libssl.so.3", libssl, dir) == 0);
	CHECK(child_cmd(&ns, "open %s/ns/libssl.so.3", dir) == 0);
	snprintf(p, sizeof(p), "%s/ns/libssl.so.3", dir);
	CHECK(access(p, F_OK)); /* galatop does not see it under its path */
	pids[0] = host.pid, pids[1] = rooted.pid, pids[2] = ns.pid, pids[3] = later.pid;
	/* Four processes, four files: three copies and the one libc they all map. */
	CHECK(uprobe_lib__scan(ul, pids, 4, false) == 4);
	CHECK(uprobe_lib__nfiles(ul) == 4 && uprobe_lib__attached(ul) == 3);
	f = file_named("/host/libssl.so.3");
	CHECK(f && f->pid == host.pid && f->attached == 2 && f->failed == 1 && f->err == 0);
	/* A chroot shares galatop's mounts: its maps show the path from galatop's root. */
	snprintf(p, sizeof(p), "%s/root%s/libssl.so.3", dir, dir);
	f = file_named(p);
	CHECK(f && f->pid == rooted.pid && f->attached == 2 && f->failed == 1 && f->err == 0);
	snprintf(p, sizeof(p), "%s/ns/libssl.so.3", dir);
	f = file_named("/ns/libssl.so.3");
	if (f)
		printf("  the copy in the other mount namespace: %s (pid %d, %u probes, err %d)\n",
		       f->path, f->pid, f->attached, f->err);
	/* Its path as the kernel gives it to galatop: ours, or, when galatop itself runs in a
	 * chroot (tests/fresh_root.sh), the one from the machine's root, which ends with ours. */
	CHECK(f && f->pid == ns.pid && strlen(f->path) >= strlen(p) &&
	      !strcmp(f->path + strlen(f->path) - strlen(p), p) && f->attached == 2 && f->err == 0);
	/* The libc has none of the symbols: an error as a value, no probe. */
	f = file_named("libc.so.6");
	CHECK(f && f->attached == 0 && f->failed == 3 && f->err < 0);
	/* Scanning again finds nothing new. */
	CHECK(uprobe_lib__scan(ul, pids, 4, true) == 0 && uprobe_lib__nfiles(ul) == 4);
}

TEST_CASE(every_call_counted_once)
{
	uint64_t c0 = ssl_calls();

	CHECK(child_cmd(&host, "call 5") == 0);
	CHECK(ssl_calls() - c0 == 5);
	CHECK(child_cmd(&rooted, "call 7") == 0);
	CHECK(ssl_calls() - c0 == 12);
	CHECK(child_cmd(&ns, "call 6") == 0);
	CHECK(ssl_calls() - c0 == 18);
}

TEST_CASE(libraries_mapped_later)
{
	int pids[4] = { host.pid, rooted.pid, ns.pid, later.pid };
	const struct uprobe_lib_file *f;
	uint64_t c0;

	CHECK(child_cmd(&later, "open %s/later/libssl.so.3", dir) == 0);
	c0 = ssl_calls();
	CHECK(child_cmd(&later, "call 3") == 0);
	CHECK(ssl_calls() == c0); /* not probed yet */
	/* New processes only: the process was looked at already. */
	CHECK(uprobe_lib__scan(ul, pids, 4, false) == 0);
	CHECK(uprobe_lib__scan(ul, pids, 4, true) == 1);
	f = file_named("/later/libssl.so.3");
	CHECK(f && f->pid == later.pid && f->attached == 2);
	c0 = ssl_calls();
	CHECK(child_cmd(&later, "call 9") == 0);
	CHECK(child_cmd(&host, "call 2") == 0);
	CHECK(ssl_calls() - c0 == 11);
}

TEST_CASE(nothing_left_after_free)
{
	uint64_t c0;

	uprobe_lib__free(ul);
	ul = NULL;
	c0 = ssl_calls();
	CHECK(child_cmd(&host, "call 4") == 0 && child_cmd(&rooted, "call 4") == 0 &&
	      child_cmd(&ns, "call 4") == 0 && child_cmd(&later, "call 4") == 0);
	CHECK(ssl_calls() == c0);
	uprobe_lib__free(NULL);
}

int main(void)
{
	static const char *names[] = { "one_probe_set_per_file_across_roots",
				       "every_call_counted_once", "libraries_mapped_later",
				       "nothing_left_after_free" };
	char cmd[128];
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK)) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			harness_skip(names[i], "needs root and a kernel with BTF");
		HARNESS_EXIT();
	}
	ret = setup();
	if (ret) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			printf("FAIL: %s: setup: %s (libssl: %s)\n", names[i], strerror(-ret),
			       libssl[0] ? libssl : "not found");
		return 1;
	}
	RUN(one_probe_set_per_file_across_roots);
	RUN(every_call_counted_once);
	RUN(libraries_mapped_later);
	RUN(nothing_left_after_free);
	child_stop(&host);
	child_stop(&rooted);
	child_stop(&ns);
	child_stop(&later);
	uprobe_lib__free(ul);
	gt_l7_probe__destroy(skel);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("  cannot remove %s\n", dir);
	HARNESS_EXIT();
}
