/* HotSpot dynamic attach protocol, written for galatop: the JVM starts its attach listener when
 * it finds .attach_pid<NSPID> (in its cwd or /tmp) owned by its user and receives SIGQUIT; it
 * then listens on /tmp/.java_pid<NSPID>, accepts peers with its own uid/gid (or root), and reads
 * "1\0load\0<agent>\0true\0<options>\0"; the reply is the command's result code, then the
 * agent's return code. Paths are reached through /proc/PID/root, so a JVM in another mount
 * namespace (a container) is attached the same way. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "java_attach.h"
#include "ident.h"
#include "jitmap.h"
#include "model/hash.h"
#include "util/clock.h"
#include "util/companion.h"
#include "util/file.h"
#include "util/procfs.h"

#ifndef GALATOP_PREFIX
#define GALATOP_PREFIX "/usr/local"
#endif
#define AGENT_NAME "libgalatop-jvmti.so"
#define MAX_COPIES 64

/* The agent copies to remove at exit, each by its name in the JVM's /tmp, held open: a JVM
 * that exits first takes its /proc/PID/root path with it. */
static struct {
	int tmp;
	char name[64];
} copies[MAX_COPIES];
static int ncopies;

bool java_attach__is_jvm(int pid)
{
	char path[64], line[PATH_MAX + 128], perms[8];
	bool jvm = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* Executable: profilers (galatop among them) map libjvm.so read-only to read its
	 * symbols, and must not get a SIGQUIT. */
	while (!jvm && fgets(line, sizeof(line), f))
		jvm = strstr(line, "/libjvm.so") && sscanf(line, "%*s %7s", perms) == 1 &&
		      strchr(perms, 'x');
	fclose(f);
	return jvm;
}

/* Whether pid catches SIGQUIT (SigCgt in /proc/PID/status): a JVM does once its signal
 * handling is set up; until then SIGQUIT would kill it. */
static bool catches_sigquit(int pid)
{
	const char *v;
	char *text;
	size_t len;
	bool yes;

	if (procfs_status(pid, &text))
		return false;
	v = procfs_field(text, "SigCgt", &len);
	yes = v && (strtoull(v, NULL, 16) & (1ULL << (SIGQUIT - 1)));
	free(text);
	return yes;
}

/* Whether thread tid of the process whose task directory is dir is the JVM's signal
 * dispatcher, the thread that handles SIGQUIT and starts the attach listener. */
static int is_signal_dispatcher(void *dir, int tid)
{
	char path[PATH_MAX], comm[64];

	snprintf(path, sizeof(path), "%s/%d/comm", (const char *)dir, tid);
	return ident_read_small(path, comm, sizeof(comm)) > 0 &&
	       !strncmp(comm, "Signal Dispatch", 15);
}

bool java_attach__ready(int pid)
{
	char path[64];

	if (!java_attach__is_jvm(pid) || !catches_sigquit(pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	return procfs_each_id(path, is_signal_dispatcher, path) == 1;
}

int java_attach__agent_path(char *buf, size_t len)
{
	int err = companion_path(AGENT_NAME, "GALATOP_JVMTI_AGENT", buf, len);

	if (err)
		buf[0] = 0;
	return err;
}

/* The JVM's effective uid and gid (the second of the Uid and Gid fields). 0 or -errno. */
static int proc_ids(int pid, uid_t *uid, gid_t *gid)
{
	const char *u, *g;
	unsigned r, eu, eg;
	char *text;
	size_t len;
	int err = procfs_status(pid, &text);

	if (err)
		return err;
	u = procfs_field(text, "Uid", &len);
	g = procfs_field(text, "Gid", &len);
	err = u && g && sscanf(u, "%u %u", &r, &eu) == 2 && sscanf(g, "%u %u", &r, &eg) == 2
		      ? 0
		      : -EINVAL;
	free(text);
	if (!err)
		*uid = eu, *gid = eg;
	return err;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The hash of the agent file (at most 64 MiB): a JVM already holding a library of the same
 * path gets that one again from dlopen, so each build of the agent is copied under a name of
 * its own. 0 or -errno. */
static int file_hash(const char *path, unsigned long long *h)
{
	char *buf;
	size_t len;
	int err = file_read(path, 64u << 20, 0, &buf, &len);

	if (err)
		return err;
	*h = hash_bytes(buf, len);
	free(buf);
	return 0;
}

/* Copies src to dst (created exclusively, 0644, owned by root: the JVM only reads it). */
static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in, outfd, err = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	unlink(dst);
	outfd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (outfd < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(outfd, buf, (size_t)n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	fchmod(outfd, 0644);
	close(in);
	if (close(outfd) && !err)
		err = -errno;
	if (err)
		unlink(dst);
	return err;
}

/* Sends the load command as uid/gid in a child (the JVM checks its peer's credentials) and
 * returns the reply text in reply; 0 or -errno. */
static int send_load(const char *sock, uid_t uid, gid_t gid, const char *agent,
		     const char *options, char *reply, size_t rlen, int timeout_ms)
{
	int pfd[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t child;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (!child) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
		char msg[2 * PATH_MAX + 64], buf[512];
		int fd, len;

		close(pfd[0]);
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			_exit(2);
		if (strlen(sock) >= sizeof(sa.sun_path))
			_exit(3);
		memcpy(sa.sun_path, sock, strlen(sock) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(3);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		len = snprintf(msg, sizeof(msg), "1%cload%c%s%ctrue%c%s%c", 0, 0, agent, 0, 0, options, 0);
		if (len <= 0 || (size_t)len >= sizeof(msg) || write(fd, msg, (size_t)len) != len)
			_exit(4);
		while ((len = (int)read(fd, buf, sizeof(buf))) > 0)
			if (write(pfd[1], buf, (size_t)len) != len)
				_exit(5);
		_exit(0);
	}
	close(pfd[1]);
	while (got + 1 < rlen && (n = read(pfd[0], reply + got, rlen - 1 - got)) > 0)
		got += (size_t)n;
	reply[got] = 0;
	close(pfd[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status))
		return -EINTR;
	switch (WEXITSTATUS(status)) {
	case 0: return 0;
	case 2: return -EPERM;
	case 3: return -ECONNREFUSED;
	default: return -EIO;
	}
}

int java_attach(int pid, const char *agent, int timeout_ms, char *err, size_t errlen)
{
	char root[64], sock[PATH_MAX], trig[PATH_MAX], copy[PATH_MAX], inside[64], map[64];
	char reply[1024];
	unsigned long long hash = 0;
	int nspid = jitmap__ns_pid(pid), r, fd, code = -1, agent_rc = -1;
	struct stat st;
	uid_t uid = 0;
	gid_t gid = 0;
	int64_t deadline = clock_mono_ms() + timeout_ms;

	if (proc_ids(pid, &uid, &gid)) {
		snprintf(err, errlen, "java pid %d: gone", pid);
		return -1;
	}
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	snprintf(sock, sizeof(sock), "%s/tmp/.java_pid%d", root, nspid);
	if (stat(sock, &st) || !S_ISSOCK(st.st_mode)) {
		/* Start the attach listener: a trigger file owned by the JVM's user, then SIGQUIT. */
		snprintf(trig, sizeof(trig), "%s/tmp/.attach_pid%d", root, nspid);
		fd = open(trig, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			snprintf(err, errlen, "java pid %d: cannot create %s: %s", pid, trig, strerror(errno));
			return -1;
		}
		if (fchown(fd, uid, gid)) {
			/* keep going: a JVM run as root accepts it anyway */
		}
		close(fd);
		if (!catches_sigquit(pid)) {
			unlink(trig);
			snprintf(err, errlen, "java pid %d: not attached: it does not handle SIGQUIT "
				 "(a JVM still starting, or not a HotSpot JVM)", pid);
			return -1;
		}
		kill(pid, SIGQUIT);
		while ((stat(sock, &st) || !S_ISSOCK(st.st_mode)) && clock_mono_ms() < deadline)
			sleep_ms(20);
		unlink(trig);
		if (stat(sock, &st) || !S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen,
				 "java pid %d: the JVM did not start its attach listener "
				 "(-XX:+DisableAttachMechanism?); its JIT frames stay unnamed", pid);
			return -1;
		}
	}
	r = file_hash(agent, &hash);
	if (r) {
		snprintf(err, errlen, "java pid %d: cannot read the agent %s: %s", pid, agent,
			 file_strerror(r, 64u << 20));
		return -1;
	}
	snprintf(inside, sizeof(inside), "/tmp/galatop-jvmti-%d-%016llx.so", pid, hash);
	snprintf(copy, sizeof(copy), "%s%s", root, inside);
	r = copy_file(agent, copy);
	if (r) {
		snprintf(err, errlen, "java pid %d: cannot copy the agent to %s: %s", pid, copy, strerror(-r));
		return -1;
	}
	if (ncopies < MAX_COPIES) {
		char tmp[80];

		snprintf(tmp, sizeof(tmp), "%s/tmp", root);
		copies[ncopies].tmp = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		snprintf(copies[ncopies].name, sizeof(copies[ncopies].name), "%s", inside + strlen("/tmp/"));
		if (copies[ncopies].tmp >= 0)
			ncopies++;
	}
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", nspid);
	r = clock_mono_ms() < deadline ? send_load(sock, uid, gid, inside, map, reply, sizeof(reply),
					    (int)(deadline - clock_mono_ms()))
				: -ETIMEDOUT;
	if (r) {
		snprintf(err, errlen, "java pid %d: attach failed: %s", pid, strerror(-r));
		return -1;
	}
	sscanf(reply, "%d\n%d", &code, &agent_rc);
	if (code == 0 && sscanf(reply, "%*d\nreturn code: %d", &agent_rc) != 1 &&
	    sscanf(reply, "%*d\n%d", &agent_rc) != 1)
		agent_rc = 0;
	if (code != 0 || agent_rc != 0) {
		char *nl;

		while ((nl = strchr(reply, '\n')))
			*nl = ' ';
		snprintf(err, errlen, "java pid %d: the JVM refused the agent: %.200s", pid, reply);
		return -1;
	}
	return 0;
}

struct attach_run {
	const char *agent;
	int done; /* JVMs that took the agent */
};

/* Loads the agent into pid if it is a JVM (a failure is a warning); 0 to go on. */
static int attach_one(void *ctx, int pid)
{
	struct attach_run *run = ctx;
	char err[512];

	if (pid <= 0 || pid == 0x7fffffff || pid == getpid() || !java_attach__is_jvm(pid))
		return 0;
	if (java_attach(pid, run->agent, 5000, err, sizeof(err)))
		fprintf(stderr, "galatop: warning: %s\n", err);
	else
		run->done++;
	return 0;
}

int java_attach__targets(const int *pids, size_t n)
{
	char agent[PATH_MAX];
	struct attach_run run = { agent, 0 };
	bool any = false;

	if (n) {
		for (size_t i = 0; i < n && !any; i++)
			any = pids[i] > 0 && pids[i] != 0x7fffffff && java_attach__is_jvm(pids[i]);
		if (!any)
			return 0;
	}
	if (java_attach__agent_path(agent, sizeof(agent))) {
		fprintf(stderr, "galatop: warning: %s not found (next to galatop or in %s/lib/galatop): "
			"Java frames stay unnamed\n", AGENT_NAME, GALATOP_PREFIX);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		attach_one(&run, pids[i]);
	if (!n)
		procfs_each_id("/proc", attach_one, &run);
	return run.done;
}

void java_attach__cleanup(void)
{
	for (int i = 0; i < ncopies; i++) {
		unlinkat(copies[i].tmp, copies[i].name, 0);
		close(copies[i].tmp);
	}
	ncopies = 0;
}
