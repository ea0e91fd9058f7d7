/* Integration tests of bpf/probes: forked workloads of known behaviour, in-kernel filters,
 * and cleanup. Needs root and BPF; prints SKIP lines otherwise (FAIL under CI). */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "harness.h"
#include "prog_ids.h"
#include "bpf/probes.h"

/* What a test keeps of each record. */
struct rec {
	uint32_t type, pid, tid, cpu, klen, ulen;
	uint64_t value, aux, cgroup_id;
	char comm[GT_COMM_LEN];
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static void collect(void *ctx, const struct gt_event *ev)
{
	struct recs *r = ctx;
	struct rec *x;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		if (!r->v)
			abort();
	}
	x = &r->v[r->n++];
	x->type = ev->type;
	x->pid = ev->pid;
	x->tid = ev->tid;
	x->cpu = ev->cpu;
	x->klen = ev->kstack_len;
	x->ulen = ev->ustack_len;
	x->value = ev->value;
	x->aux = ev->aux;
	x->cgroup_id = ev->cgroup_id;
	memcpy(x->comm, ev->comm, sizeof(x->comm));
	x->comm[GT_COMM_LEN - 1] = 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) a process used so far, from /proc/PID/stat. */
static double cpu_seconds(pid_t pid)
{
	unsigned long utime = 0, stime = 0;
	char path[64], buf[1024], *s;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	s = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!s ||
	    sscanf(s, ") %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
		return 0;
	return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

/* Samples a busy process should get at freq Hz while it used `cpu` seconds, give or take a
 * quarter and the tick granularity of /proc. */
static bool about_expected(size_t n, double cpu, unsigned freq)
{
	double want = cpu * freq, slack = want / 4 + 2.0 * freq / sysconf(_SC_CLK_TCK);

	printf("  %zu samples for %.2f CPU seconds at %u Hz (expected %.0f)\n", n, cpu, freq, want);
	return n > 0 && n + slack >= want && n <= want + slack;
}

static void poll_for(struct probes *p, double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end)
		probes__poll(p, 50);
	probes__poll(p, 0);
}

/* A forked workload that starts when told, so the probes see it from its first act. */
struct child {
	pid_t pid;
	int go;	  /* write end: one byte starts the workload */
	int done; /* read end: the workload writes one byte when it finished a bounded job */
};

typedef void (*work_fn)(int done_fd, long arg);

static struct child spawn(const char *comm, work_fn fn, long arg)
{
	struct child c = {-1, -1, -1};
	int go[2], done[2];
	char b;

	if (pipe(go) || pipe(done))
		abort();
	c.pid = fork();
	if (c.pid == 0) {
		prctl(PR_SET_NAME, comm);
		close(go[1]);
		close(done[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		fn(done[1], arg);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	c.go = go[1];
	c.done = done[0];
	return c;
}

static void start(struct child *c)
{
	if (write(c->go, "g", 1) != 1)
		abort();
}

static void reap(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	close(c->go);
	close(c->done);
	c->pid = -1;
}

static volatile uint64_t sink;

static void busy(int done_fd, long arg)
{
	for (;;)
		for (int i = 0; i < 1000000; i++)
			sink += i;
}

static void syscalls(int done_fd, long arg)
{
	int fd = open("/dev/null", O_WRONLY);
	char buf[64] = {0};

	for (;;)
		if (write(fd, buf, sizeof(buf)) < 0)
			_exit(1);
}

static void sleeper(int done_fd, long usec)
{
	struct timespec ts = {usec / 1000000, usec % 1000000 * 1000};

	for (;;)
		nanosleep(&ts, NULL);
}

/* Not instrumented: ASan's shadow-memory writes would fault pages of their own. */
__attribute__((no_sanitize("address"))) static void toucher(int done_fd, long pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *m =
	    mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		_exit(1);
	madvise(m, pages * psz, MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		m[i * psz] = 1;
	if (write(done_fd, "d", 1) != 1)
		_exit(1);
	pause();
}

/* Forks a grandchild that execs /bin/true, reports its pid on done_fd, and waits for it. */
static void exec_parent(int done_fd, long arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (write(done_fd, &pid, sizeof(pid)) != sizeof(pid))
		_exit(1);
	waitpid(pid, NULL, 0);
	pause();
}

static struct probes *open_or_fail(struct probe_opts *o, struct recs *r)
{
	char err[256] = "";
	struct probes *p = probes__open(o, collect, r, err, sizeof(err));

	if (!p)
		printf("  probes__open: %s\n", err);
	else if (probes__warnings(p)[0])
		printf("  warnings: %s", probes__warnings(p));
	return p;
}

TEST_CASE(oncpu_pid_filter)
{
	struct child c = spawn("gt_busy", busy, 0);
	/* Not a target, busy on the other CPU: an idle CPU takes no CPU-clock samples, so without
	 * it a quiet machine would have nothing to filter. */
	struct child other = spawn("gt_other", busy, 0);
	struct recs r = {0};
	struct probe_opts o;
	struct probe_stats st;
	struct probes *p;
	size_t with_ustack = 0;
	double cpu;

	probe_opts__init(&o);
	o.pids = &c.pid;
	o.npids = 1;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		CHECK(probes__types(p) == PROBE_ONCPU);
		cpu = cpu_seconds(c.pid);
		start(&c);
		start(&other);
		poll_for(p, 1.0);
		cpu = cpu_seconds(c.pid) - cpu;
		probes__stats(p, &st);
		printf("  %zu samples; stats: total %llu samples %llu filtered %llu drops %llu\n",
		       r.n, (unsigned long long)st.total, (unsigned long long)st.samples,
		       (unsigned long long)st.filtered, (unsigned long long)st.drops);
		CHECK(about_expected(r.n, cpu, 99));
		for (size_t i = 0; i < r.n; i++) {
			CHECK(r.v[i].type == GT_EV_ONCPU && r.v[i].pid == (uint32_t)c.pid);
			CHECK_STR(r.v[i].comm, "gt_busy");
			with_ustack += r.v[i].ulen >= 2;
			if (harness_case_failed)
				break;
		}
		CHECK(with_ustack >= r.n * 9 / 10);
		CHECK(st.samples >= r.n && st.drops == 0 && st.lost_user == 0);
		CHECK(st.total >= st.samples + st.filtered);
		CHECK(st.filtered > 0); /* the other CPU's samples */
	}
	probes__free(p);
	reap(&c);
	reap(&other);
	free(r.v);
}

TEST_CASE(oncpu_kernel_stacks)
{
	struct child c = spawn("gt_sys", syscalls, 0);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	size_t deep = 0;

	probe_opts__init(&o);
	o.pids = &c.pid;
	o.npids = 1;
	o.freq = 199;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		start(&c);
		poll_for(p, 1.0);
		for (size_t i = 0; i < r.n; i++)
			deep += r.v[i].klen >= 4;
		printf("  %zu samples, %zu with >= 4 kernel frames\n", r.n, deep);
		CHECK(r.n >= 5);
		CHECK(deep >= r.n / 4);
	}
	probes__free(p);
	reap(&c);
	free(r.v);
}

/* One CPU, no idle: an idle-ish machine still gives busy-child samples, all on CPU 0. */
TEST_CASE(oncpu_cpu_and_no_idle)
{
	struct child c = spawn("gt_busy0", busy, 0);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	cpu_set_t set;
	const uint8_t cpu0[] = { 1 };

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(c.pid, sizeof(set), &set);
	probe_opts__init(&o);
	o.cpus = cpu0;
	o.ncpus = 1;
	o.no_idle = true;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		start(&c);
		poll_for(p, 0.5);
		CHECK(r.n >= 5);
		for (size_t i = 0; i < r.n && !harness_case_failed; i++)
			CHECK(r.v[i].type != GT_EV_ONCPU || (r.v[i].pid != 0 && r.v[i].cpu == 0));
	}
	probes__free(p);
	reap(&c);
	free(r.v);
}

/* Pins a child to one CPU. */
static void pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(pid, sizeof(set), &set);
}

/* Samples of comm on each CPU (at most 2) among r's oncpu records from index `from`. */
static void per_cpu(const struct recs *r, size_t from, const char *comm, size_t n[2])
{
	n[0] = n[1] = 0;
	for (size_t i = from; i < r->n; i++)
		if (r->v[i].type == GT_EV_ONCPU && !strcmp(r->v[i].comm, comm) && r->v[i].cpu < 2)
			n[r->v[i].cpu]++;
}

/* The CPU set is a map: switching it at run time moves the samples from one pinned busy
 * process to the other, with nothing from the CPU left out (records taken before the switch
 * are drained first). */
TEST_CASE(oncpu_cpu_set_switches_at_run_time)
{
	struct child a = spawn("gt_cpu_a", busy, 0), b = spawn("gt_cpu_b", busy, 0);
	const uint8_t only1[] = { 0, 1 }, only0[] = { 1, 0 };
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	size_t na[2], nb[2], mark;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		reap(&a);
		reap(&b);
		SKIP_CASE("needs 2 CPUs");
	}
	pin(a.pid, 0);
	pin(b.pid, 1);
	probe_opts__init(&o);
	o.cpus = only1;
	o.ncpus = 2;
	o.cpus_switchable = true;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		start(&a);
		start(&b);
		poll_for(p, 1.0);
		per_cpu(&r, 0, "gt_cpu_b", nb);
		per_cpu(&r, 0, "gt_cpu_a", na);
		printf("  CPU 1 only: gt_cpu_a %zu+%zu, gt_cpu_b %zu+%zu samples\n", na[0], na[1],
		       nb[0], nb[1]);
		CHECK(nb[1] >= 5 && nb[0] == 0 && na[0] == 0);
		CHECK(probes__set_cpus(p, only0, 2) == 0);
		probes__poll(p, 0);
		mark = r.n;
		poll_for(p, 1.0);
		per_cpu(&r, mark, "gt_cpu_a", na);
		per_cpu(&r, mark, "gt_cpu_b", nb);
		printf("  CPU 0 only: gt_cpu_a %zu+%zu, gt_cpu_b %zu+%zu samples\n", na[0], na[1],
		       nb[0], nb[1]);
		CHECK(na[0] >= 5 && na[1] == 0 && nb[1] == 0);
		CHECK(probes__set_cpus(p, NULL, 0) == 0);
		probes__poll(p, 0);
		mark = r.n;
		poll_for(p, 1.0);
		per_cpu(&r, mark, "gt_cpu_a", na);
		per_cpu(&r, mark, "gt_cpu_b", nb);
		CHECK(na[0] >= 5 && nb[1] >= 5);
		CHECK(probes__set_cpus(p, (const uint8_t[]){ 0, 0 }, 2) == -EINVAL);
	}
	probes__free(p);
	reap(&a);
	reap(&b);
	free(r.v);
}

TEST_CASE(offcpu_sleep)
{
	struct child c = spawn("gt_sleep", sleeper, 200000);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	size_t good = 0, bad = 0;

	probe_opts__init(&o);
	o.types = PROBE_OFFCPU;
	o.pids = &c.pid;
	o.npids = 1;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		start(&c);
		poll_for(p, 1.35);
		for (size_t i = 0; i < r.n; i++) {
			CHECK(r.v[i].type == GT_EV_OFFCPU && r.v[i].tid == (uint32_t)c.pid);
			if (r.v[i].value >= 180000 && r.v[i].value <= 220000 && r.v[i].ulen > 0 &&
			    r.v[i].klen > 0 && (r.v[i].aux & PROBE_STATE_INTERRUPTIBLE))
				good++;
			else
				bad++, printf("  other: %llu us, state %#llx, %u+%u frames\n",
					      (unsigned long long)r.v[i].value,
					      (unsigned long long)r.v[i].aux, r.v[i].klen,
					      r.v[i].ulen);
		}
		printf("  %zu blocks of ~200 ms, %zu others\n", good, bad);
		CHECK(good >= 5 && bad <= 1);
	}
	probes__free(p);
	reap(&c);
	free(r.v);
}

/* load_types: offcpu loaded but not attached records nothing; probes__attach starts it, and
 * the ~200 ms sleeps show from then on. mem was never loaded: attaching it says so. */
TEST_CASE(offcpu_attached_later)
{
	struct child c = spawn("gt_sleep", sleeper, 200000);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	size_t before, good = 0;
	char err[256] = "";

	probe_opts__init(&o);
	o.types = PROBE_ONCPU;
	o.load_types = PROBE_OFFCPU;
	o.pids = &c.pid;
	o.npids = 1;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		CHECK(probes__types(p) == PROBE_ONCPU);
		CHECK(probes__loaded(p) == (PROBE_ONCPU | PROBE_OFFCPU));
		start(&c);
		poll_for(p, 0.7);
		before = r.n;
		for (size_t i = 0; i < r.n; i++)
			CHECK(r.v[i].type != GT_EV_OFFCPU);
		CHECK(probes__attach(p, PROBE_OFFCPU, err, sizeof(err)) == 0);
		CHECK(probes__types(p) == (PROBE_ONCPU | PROBE_OFFCPU));
		CHECK(probes__attach(p, PROBE_OFFCPU, err, sizeof(err)) == 0); /* again: a no-op */
		poll_for(p, 1.35);
		for (size_t i = before; i < r.n; i++)
			good += r.v[i].type == GT_EV_OFFCPU && r.v[i].value >= 180000 &&
				r.v[i].value <= 220000;
		printf("  %zu records before the attach, %zu blocks of ~200 ms after\n", before, good);
		CHECK(good >= 4);
		CHECK(probes__attach(p, PROBE_MEM, err, sizeof(err)) == -ENOENT);
		printf("  mem: %s\n", err);
		CHECK(strstr(err, "mem") != NULL);
	}
	probes__free(p);
	reap(&c);
	free(r.v);
}

/* 100 us sleeps are under the default 1 ms minimum (bar scheduling delays); an
 * uninterruptible-only filter rejects 2 ms sleeps (interruptible). */
TEST_CASE(offcpu_filters)
{
	struct child a = spawn("gt_short", sleeper, 100), b = spawn("gt_long", sleeper, 2000);
	struct recs r = {0};
	struct probe_opts o;
	struct probe_stats st;
	struct probes *p;

	probe_opts__init(&o);
	o.types = PROBE_OFFCPU;
	o.pids = &a.pid;
	o.npids = 1;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		start(&a);
		poll_for(p, 0.5);
		probes__stats(p, &st);
		printf("  short sleeps: %zu records, %llu filtered\n", r.n,
		       (unsigned long long)st.filtered);
		/* A loaded machine may stretch a few 100 us sleeps past 1 ms, nothing shorter. */
		for (size_t i = 0; i < r.n; i++)
			CHECK(r.v[i].value >= 1000);
		CHECK(st.filtered > 100 && r.n * 50 < st.filtered);
	}
	probes__free(p);

	r.n = 0;
	o.pids = &b.pid;
	o.state_filter = PROBE_STATE_UNINTERRUPTIBLE;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		start(&b);
		poll_for(p, 0.5);
		printf("  interruptible sleeps with a D-state filter: %zu records\n", r.n);
		CHECK(r.n == 0);
	}
	probes__free(p);
	reap(&a);
	reap(&b);
	free(r.v);
}

static void check_faults(const char *name)
{
	const long pages = 4000;
	struct child c = spawn(name, toucher, pages);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	size_t n = 0;
	char b;

	probe_opts__init(&o);
	o.types = PROBE_MEM;
	o.pids = &c.pid;
	o.npids = 1;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		start(&c);
		CHECK(read(c.done, &b, 1) == 1);
		poll_for(p, 0.2);
		for (size_t i = 0; i < r.n; i++)
			n += r.v[i].type == GT_EV_MEM && r.v[i].pid == (uint32_t)c.pid &&
			     r.v[i].value == 1 && r.v[i].ulen > 0;
		printf("  %zu faults for %ld fresh pages (%zu records)\n", n, pages, r.n);
		CHECK(n >= pages * 9 / 10 && n <= pages * 11 / 10);
	}
	probes__free(p);
	reap(&c);
	free(r.v);
}

TEST_CASE(mem_faults)
{
	check_faults("gt_touch");
}

TEST_CASE(mem_faults_classic_tracepoint)
{
	setenv("GALATOP_MEM_CLASSIC_TP", "1", 1);
	check_faults("gt_touch_tp");
	unsetenv("GALATOP_MEM_CLASSIC_TP");
}

/* Two busy processes; a comm target (or a tid target) lets one through. */
TEST_CASE(comm_and_tid_filters)
{
	struct child a = spawn("gt_comm_a", busy, 0), b = spawn("gt_comm_b", busy, 0);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;

	start(&a);
	start(&b);
	probe_opts__init(&o);
	o.comm = "gt_comm_a";
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		poll_for(p, 0.6);
		CHECK(r.n >= 5);
		for (size_t i = 0; i < r.n && !harness_case_failed; i++)
			CHECK(r.v[i].pid == (uint32_t)a.pid);
	}
	probes__free(p);

	r.n = 0;
	o.comm = NULL;
	o.tids = &b.pid;
	o.ntids = 1;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		poll_for(p, 0.6);
		CHECK(r.n >= 5);
		for (size_t i = 0; i < r.n && !harness_case_failed; i++)
			CHECK(r.v[i].tid == (uint32_t)b.pid);
	}
	probes__free(p);
	reap(&a);
	reap(&b);
	free(r.v);
}

/* The pid set is a bitmap of 64 pids a word: two busy processes (forked one after the other,
 * so most often neighbours in one word), added one at a time at run time. Only the added one
 * is sampled; the second added keeps the first; a pid past the kernel's largest is refused. */
TEST_CASE(pid_set_neighbours)
{
	struct child a = spawn("gt_pid_a", busy, 0), b = spawn("gt_pid_b", busy, 0);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	size_t na = 0, nb = 0;

	printf("  pids %d and %d (words %d and %d)\n", (int)a.pid, (int)b.pid, (int)a.pid / 64,
	       (int)b.pid / 64);
	start(&a);
	start(&b);
	probe_opts__init(&o);
	o.follow_children = true; /* the pid filter on, the set empty */
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		poll_for(p, 0.4);
		CHECK(r.n == 0);
		CHECK(probes__add_pid(p, a.pid) == 0);
		poll_for(p, 0.6);
		for (size_t i = 0; i < r.n; i++) {
			na += r.v[i].pid == (uint32_t)a.pid;
			nb += r.v[i].pid == (uint32_t)b.pid;
		}
		CHECK(na >= 5 && nb == 0 && na == r.n);
		r.n = na = nb = 0;
		CHECK(probes__add_pid(p, b.pid) == 0);
		poll_for(p, 0.6);
		for (size_t i = 0; i < r.n; i++) {
			na += r.v[i].pid == (uint32_t)a.pid;
			nb += r.v[i].pid == (uint32_t)b.pid;
		}
		printf("  after both were added: %zu samples of a, %zu of b\n", na, nb);
		CHECK(na >= 5 && nb >= 5 && na + nb == r.n);
		CHECK(probes__add_pid(p, 4 << 22) == -E2BIG);
		CHECK(probes__add_pid(p, 0) == -EINVAL);
	}
	probes__free(p);
	reap(&a);
	reap(&b);
	free(r.v);
}

TEST_CASE(cgroup_filter)
{
	struct child a = spawn("gt_cg_in", busy, 0), b = spawn("gt_cg_out", busy, 0);
	struct recs r = {0};
	char dir[128], procs[160], pid[32];
	struct probe_opts o;
	struct probes *p = NULL;
	struct stat sb;
	uint64_t id;
	int fd;

	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/unified/galatop-test-%d", (int)getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	CHECK(mkdir(dir, 0755) == 0 && stat(dir, &sb) == 0);
	fd = open(procs, O_WRONLY);
	CHECK(fd >= 0 && write(fd, pid, strlen(pid)) == (ssize_t)strlen(pid));
	if (fd >= 0)
		close(fd);
	id = sb.st_ino;
	if (!harness_case_failed) {
		start(&a);
		start(&b);
		probe_opts__init(&o);
		o.cgroup_ids = &id;
		o.ncgroups = 1;
		p = open_or_fail(&o, &r);
		CHECK(p != NULL);
	}
	if (p) {
		poll_for(p, 0.6);
		CHECK(r.n >= 5);
		for (size_t i = 0; i < r.n && !harness_case_failed; i++)
			CHECK(r.v[i].pid == (uint32_t)a.pid && r.v[i].cgroup_id == id);
	}
	probes__free(p);
	reap(&a);
	reap(&b);
	CHECK(rmdir(dir) == 0);
	free(r.v);
}

/* A target process forks a short-lived child that execs /bin/true: with follow_children the
 * child becomes a target, so its exec and exit records arrive. */
TEST_CASE(exec_exit_follow_children)
{
	struct child c = spawn("gt_execer", exec_parent, 0);
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	bool exec_seen = false, exit_seen = false, parent_exit = false;
	pid_t kid = -1;

	probe_opts__init(&o);
	o.follow_children = true;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	if (p) {
		CHECK(probes__add_pid(p, c.pid) == 0);
		start(&c);
		CHECK(read(c.done, &kid, sizeof(kid)) == sizeof(kid));
		poll_for(p, 0.3);
		kill(c.pid, SIGKILL);
		waitpid(c.pid, NULL, 0);
		c.pid = -1;
		poll_for(p, 0.1);
		for (size_t i = 0; i < r.n; i++) {
			exec_seen |= r.v[i].type == GT_EV_EXEC && r.v[i].pid == (uint32_t)kid &&
				     !strcmp(r.v[i].comm, "true");
			exit_seen |= r.v[i].type == GT_EV_EXIT && r.v[i].pid == (uint32_t)kid &&
				     r.v[i].aux == 0;
			parent_exit |= r.v[i].type == GT_EV_EXIT && r.v[i].pid != (uint32_t)kid;
		}
		CHECK(exec_seen && exit_seen && parent_exit);
	}
	probes__free(p);
	reap(&c);
	free(r.v);
}

/* The ids in now[0..nn) that are not in before[0..nb), moved to the front of now; their count. */
static size_t new_ids(const uint32_t *before, size_t nb, uint32_t *now, size_t nn)
{
	size_t n = 0;

	for (size_t i = 0; i < nn; i++) {
		bool old = false;

		for (size_t j = 0; j < nb; j++)
			old |= before[j] == now[i];
		if (!old)
			now[n++] = now[i];
	}
	return n;
}

TEST_CASE(nothing_left_after_free)
{
	uint32_t before[256], ours[256];
	size_t nb = proc_prog_ids(0, before, 256), n;
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;

	probe_opts__init(&o);
	o.types = PROBE_ONCPU | PROBE_OFFCPU | PROBE_MEM;
	o.follow_children = true;
	p = open_or_fail(&o, &r);
	CHECK(p != NULL);
	n = new_ids(before, nb, ours, proc_prog_ids(0, ours, 256));
	printf("  %zu programs held while open\n", n);
	CHECK(n >= 6);
	probes__free(p);
	CHECK(!prog_ids_linger(ours, n));
	free(r.v);
}

static void open_and_hang(int done_fd, long arg)
{
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;

	probe_opts__init(&o);
	o.types = PROBE_ONCPU | PROBE_OFFCPU;
	p = probes__open(&o, collect, &r, NULL, 0);
	if (write(done_fd, p ? "y" : "n", 1) != 1)
		_exit(1);
	pause();
}

TEST_CASE(nothing_left_after_sigkill)
{
	struct child c = spawn("gt_killed", open_and_hang, 0);
	uint32_t ours[256];
	size_t n;
	char b = 0;

	start(&c);
	CHECK(read(c.done, &b, 1) == 1 && b == 'y');
	n = proc_prog_ids(c.pid, ours, 256);
	printf("  %zu programs held by the child\n", n);
	CHECK(n >= 4);
	reap(&c);
	CHECK(!prog_ids_linger(ours, n));
}

/* A sampling rate over kernel.perf_event_max_sample_rate makes perf_event_open fail: alone,
 * oncpu gives NULL and one line; with offcpu, offcpu goes on and the warning names oncpu. */
TEST_CASE(failed_probe_warns)
{
	struct recs r = {0};
	struct probe_opts o;
	struct probes *p;
	char err[256] = "";
	const char *w;

	probe_opts__init(&o);
	o.freq = 100000000;
	p = probes__open(&o, collect, &r, err, sizeof(err));
	printf("  error: %s\n", err);
	CHECK(p == NULL && !strncmp(err, "no probe could start: oncpu: ", 29) &&
	      !strchr(err, '\n'));
	probes__free(p);

	o.types = PROBE_ONCPU | PROBE_OFFCPU;
	p = probes__open(&o, collect, &r, err, sizeof(err));
	CHECK(p != NULL);
	if (p) {
		w = probes__warnings(p);
		printf("  warnings: %s", w);
		CHECK(probes__types(p) == PROBE_OFFCPU);
		CHECK(!strncmp(w, "oncpu: ", 7) && strchr(w, '\n') == w + strlen(w) - 1);
	}
	probes__free(p);
	free(r.v);
}

TEST_CASE(not_root_error)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0) {
		struct probe_opts o;
		char err[256] = "";
		struct probes *p;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		probe_opts__init(&o);
		p = probes__open(&o, collect, NULL, err, sizeof(err));
		printf("  error: %s\n", err);
		fflush(stdout);
		_exit(!p && strstr(err, "CAP_BPF") && strstr(err, "sudo") && !strchr(err, '\n')
			  ? 0
			  : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	static const char *names[] = {
	    "oncpu_pid_filter",
	    "oncpu_kernel_stacks",
	    "offcpu_sleep",
	    "offcpu_filters",
	    "offcpu_attached_later",
	    "mem_faults",
	    "mem_faults_classic_tracepoint",
	    "comm_and_tid_filters",
	    "cgroup_filter",
	    "exec_exit_follow_children",
	    "pid_set_neighbours",
	    "nothing_left_after_free",
	    "nothing_left_after_sigkill",
	    "failed_probe_warns",
	    "not_root_error",
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK)) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			harness_skip(names[i], "needs root and a kernel with BTF");
		HARNESS_EXIT();
	}
	RUN(oncpu_pid_filter);
	RUN(oncpu_kernel_stacks);
	RUN(oncpu_cpu_and_no_idle);
	RUN(oncpu_cpu_set_switches_at_run_time);
	RUN(offcpu_sleep);
	RUN(offcpu_filters);
	RUN(offcpu_attached_later);
	RUN(mem_faults);
	RUN(mem_faults_classic_tracepoint);
	RUN(comm_and_tid_filters);
	RUN(cgroup_filter);
	RUN(exec_exit_follow_children);
	RUN(pid_set_neighbours);
	RUN(nothing_left_after_free);
	RUN(nothing_left_after_sigkill);
	RUN(failed_probe_warns);
	RUN(not_root_error);
	HARNESS_EXIT();
}
