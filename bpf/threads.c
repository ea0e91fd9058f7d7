/* Loader of bpf/threads.bpf.c: the classifier table and the minimum duration set as rodata
 * before load, the shared target maps filled, the programs of the requested classes attached. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/futex.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/threads.h"
#include "bpf/drain.h"
#include "bpf/kabi.h"
#include "bpf/loadlog.h"
#include "bpf/targets.h"
#include "threads.skel.h"

/* The traced system calls and their classes, as gala-gopher classifies them; read/write
 * family calls on sockets move from file to net at exit. x86_64 numbers (<sys/syscall.h>). */
static const struct {
	unsigned short nr;
	unsigned char kind;
	const char *name;
} syscalls[] = {
	{ SYS_read, TLK_FILE, "read" },
	{ SYS_write, TLK_FILE, "write" },
	{ SYS_pread64, TLK_FILE, "pread64" },
	{ SYS_pwrite64, TLK_FILE, "pwrite64" },
	{ SYS_readv, TLK_FILE, "readv" },
	{ SYS_writev, TLK_FILE, "writev" },
	{ SYS_preadv, TLK_FILE, "preadv" },
	{ SYS_pwritev, TLK_FILE, "pwritev" },
	{ SYS_sync, TLK_FILE, "sync" },
	{ SYS_fsync, TLK_FILE, "fsync" },
	{ SYS_fdatasync, TLK_FILE, "fdatasync" },
	{ SYS_open, TLK_FILE, "open" },
	{ SYS_creat, TLK_FILE, "creat" },
	{ SYS_openat, TLK_FILE, "openat" },
	{ SYS_sendto, TLK_NET, "sendto" },
	{ SYS_recvfrom, TLK_NET, "recvfrom" },
	{ SYS_sendmsg, TLK_NET, "sendmsg" },
	{ SYS_recvmsg, TLK_NET, "recvmsg" },
	{ SYS_sendmmsg, TLK_NET, "sendmmsg" },
	{ SYS_recvmmsg, TLK_NET, "recvmmsg" },
	{ SYS_connect, TLK_NET, "connect" },
	{ SYS_accept, TLK_NET, "accept" },
	{ SYS_accept4, TLK_NET, "accept4" },
	{ SYS_futex, TLK_LOCK, "futex" },
	{ SYS_sched_yield, TLK_SCHED, "sched_yield" },
	{ SYS_nanosleep, TLK_SCHED, "nanosleep" },
	{ SYS_clock_nanosleep, TLK_SCHED, "clock_nanosleep" },
	{ SYS_wait4, TLK_SCHED, "wait4" },
	{ SYS_select, TLK_SCHED, "select" },
	{ SYS_pselect6, TLK_SCHED, "pselect6" },
	{ SYS_poll, TLK_SCHED, "poll" },
	{ SYS_ppoll, TLK_SCHED, "ppoll" },
	{ SYS_epoll_wait, TLK_SCHED, "epoll_wait" },
	{ SYS_epoll_pwait, TLK_SCHED, "epoll_pwait" },
	{ SYS_epoll_pwait2, TLK_SCHED, "epoll_pwait2" },
};
#define NSYSCALLS (sizeof(syscalls) / sizeof(syscalls[0]))

/* The numbers bpf/threads.bpf.c names through bpf/kabi.h are the system's. */
_Static_assert(GT_NR_READ == SYS_read && GT_NR_WRITE == SYS_write && GT_NR_PREAD64 == SYS_pread64 &&
		       GT_NR_PWRITE64 == SYS_pwrite64 && GT_NR_READV == SYS_readv &&
		       GT_NR_WRITEV == SYS_writev,
	       "bpf/kabi.h read/write call numbers");
_Static_assert(GT_NR_OPEN == SYS_open && GT_NR_CREAT == SYS_creat && GT_NR_OPENAT == SYS_openat &&
		       GT_NR_SYNC == SYS_sync && GT_NR_ACCEPT == SYS_accept &&
		       GT_NR_ACCEPT4 == SYS_accept4 && GT_NR_FUTEX == SYS_futex,
	       "bpf/kabi.h system call numbers");
_Static_assert(GT_FUTEX_WAIT == FUTEX_WAIT && GT_FUTEX_LOCK_PI == FUTEX_LOCK_PI &&
		       GT_FUTEX_WAIT_BITSET == FUTEX_WAIT_BITSET &&
		       GT_FUTEX_LOCK_PI2 == FUTEX_LOCK_PI2 &&
		       GT_FUTEX_CMD_MASK == (FUTEX_PRIVATE_FLAG - 1) &&
		       GT_FUTEX_TID_MASK == FUTEX_TID_MASK,
	       "bpf/kabi.h futex operations");
_Static_assert(GT_S_IFMT == S_IFMT && GT_S_IFSOCK == S_IFSOCK && GT_AF_INET == AF_INET &&
		       GT_AF_INET6 == AF_INET6 && GT_AF_UNIX == AF_UNIX && GT_SOCK_DGRAM == SOCK_DGRAM &&
		       GT_MSG_PEEK == MSG_PEEK && GT_EINPROGRESS == EINPROGRESS &&
		       GT_ENOSYS == ENOSYS,
	       "bpf/kabi.h socket and file constants");

/* Calls of the read/write family (traced when file or net is on: the fd decides). */
static bool rw_family(unsigned nr)
{
	return nr == SYS_read || nr == SYS_write || nr == SYS_pread64 || nr == SYS_pwrite64 ||
	       nr == SYS_readv || nr == SYS_writev || nr == SYS_preadv || nr == SYS_pwritev;
}

struct tl_probes {
	struct gt_threads *skel;
	struct drain *rb;
	struct bpf_link *links[10];
	size_t nlinks;
	struct bpf_link **cpu_links; /* the sampler's, one per CPU */
	size_t ncpu_links;
	tl_record_fn fn;
	void *ctx;
	bool pid_filter;
	uint64_t lost_user;
	char warnings[1024];
};

const char *tl_syscall_name(unsigned nr)
{
	for (size_t i = 0; i < NSYSCALLS; i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
}

unsigned tl_probe_class_parse(const char *s)
{
	static const char *const names[] = { "oncpu", "file", "net", "lock", "sched" };

	if (!strncmp(s, "syscall_", 8))
		s += 8;
	for (unsigned i = 0; i < 5; i++)
		if (!strcmp(s, names[i]))
			return 1u << i;
	return 0;
}

static unsigned class_of_kind(unsigned kind)
{
	switch (kind) {
	case TLK_FILE:
		return TL_PROBE_FILE;
	case TLK_NET:
		return TL_PROBE_NET;
	case TLK_LOCK:
		return TL_PROBE_LOCK;
	default:
		return TL_PROBE_SCHED;
	}
}

static void warn(struct tl_probes *p, const char *what, int err)
{
	size_t len = strlen(p->warnings);

	snprintf(p->warnings + len, sizeof(p->warnings) - len, "threads: cannot attach %s: %s\n",
		 what, strerror(err));
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct tl_probes *p = ctx;
	const struct tl_rec *r = data;

	if (size < TL_REC_HDR_SIZE || r->kind >= TLK_MAX ||
	    (r->type == TLR_EVENT &&
	     (probe_record_check(&r->stk, size - TL_REC_HDR_SIZE) || r->stk.kstack_len))) {
		p->lost_user++;
		return 0;
	}
	p->fn(p->ctx, r);
	return 0;
}

static int attach(struct tl_probes *p, struct bpf_program *prog, const char *what)
{
	struct bpf_link *l = bpf_program__attach(prog);

	if (!l) {
		int err = errno;

		warn(p, what, err);
		return -err;
	}
	p->links[p->nlinks++] = l;
	return 0;
}

struct tl_probes *tl_probes__open(const struct tl_probe_opts *o, tl_record_fn fn, void *ctx,
				  char *err, size_t errlen)
{
	unsigned classes = o->classes ? o->classes : TL_PROBE_ALL;
	const struct probe_opts *t = o->targets;
	struct tl_probes *p;
	size_t rbsize;
	int ret, attached = 0;

	if (loader_begin("", err, errlen))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->fn = fn;
	p->ctx = ctx;
	p->pid_filter = t && targets_pid_filter(t);
	p->skel = gt_threads__open();
	if (!p->skel) {
		snprintf(err, errlen, "cannot open the thread probes: %s", strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < NSYSCALLS; i++) {
		unsigned nr = syscalls[i].nr;
		bool on = (classes & class_of_kind(syscalls[i].kind)) ||
			  (rw_family(nr) && (classes & TL_PROBE_NET));

		if (on && nr < TL_SYSCALL_MAX)
			((__u8 *)p->skel->rodata->sys_kind)[nr] = syscalls[i].kind + 1;
	}
	p->skel->rodata->keep_file = classes & TL_PROBE_FILE;
	p->skel->rodata->min_dur_ns = o->min_dur_ns ? o->min_dur_ns : 10000;
	p->skel->rodata->user_stacks = o->user_stacks;
	if (o->user_stacks && o->ustack_copy)
		p->skel->rodata->ustack_bytes = o->ustack_copy > GT_USTACK_MAX ? GT_USTACK_MAX
						: o->ustack_copy < 8 ? 8 : o->ustack_copy & ~7u;
	if (t)
		TARGETS_SET_RODATA(p->skel->rodata, t);
	rbsize = probes_ringbuf_size(o->ringbuf_bytes, o->user_stacks && o->ustack_copy);
	p->skel->rodata->wakeup_bytes = rbsize / 4;
	ret = bpf_map__set_max_entries(p->skel->maps.gt_tl_events, rbsize);
	if (!ret && t)
		ret = targets_size(p->skel->obj, t);
	p->skel->rodata->syscall_hooks = o->all_syscalls;
	p->skel->rodata->sched_states = classes & TL_PROBE_ONCPU;
	/* sched_switch: the oncpu class, and the blocking calls unless the system call hooks
	 * follow every call; the wakeups only for the oncpu class. */
	if (!(classes & TL_PROBE_ONCPU) && (o->all_syscalls || !(classes & ~TL_PROBE_ONCPU)))
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_tl_switch, false);
	if (!(classes & TL_PROBE_ONCPU)) {
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_tl_wakeup, false);
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_tl_wakeup_new, false);
	}
	p->skel->rodata->sample_period_ns = 1000000000ull / TL_SAMPLE_HZ;
	if (o->all_syscalls || !(classes & ~TL_PROBE_ONCPU))
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_tl_sample, false);
	if (!(classes & ~TL_PROBE_ONCPU) || !o->all_syscalls) {
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_tl_sys_enter, false);
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_tl_sys_exit, false);
	}
	/* The stash is used in blocking mode only (a map cannot have 0 entries). */
	if (o->all_syscalls || !(classes & ~TL_PROBE_ONCPU))
		ret = ret ?: bpf_map__set_max_entries(p->skel->maps.gt_tl_stash, 1);
	ret = ret ?: gt_threads__load(p->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the thread probes: %s%s%s%s", strerror(-ret),
			 loadlog_reason()[0] ? " (libbpf: " : "", loadlog_reason(),
			 loadlog_reason()[0] ? ")" : "");
		goto fail;
	}
	if (t && targets_fill(p->skel->obj, t)) {
		snprintf(err, errlen, "cannot fill the target maps: %s", strerror(errno));
		goto fail;
	}
	if ((classes & ~TL_PROBE_ONCPU) && o->all_syscalls) {
		/* Exit first, so no entry is left behind by an exit that was not yet watched. */
		if (!attach(p, p->skel->progs.gt_tl_sys_exit, "sys_exit") &&
		    !attach(p, p->skel->progs.gt_tl_sys_enter, "sys_enter"))
			attached++;
	}
	if (classes & ~TL_PROBE_ONCPU)
		attach(p, p->skel->progs.gt_tl_exit, "sched_process_exit");
	if ((classes & TL_PROBE_ONCPU) || ((classes & ~TL_PROBE_ONCPU) && !o->all_syscalls)) {
		if (!attach(p, p->skel->progs.gt_tl_switch, "sched_switch"))
			attached++;
	}
	if ((classes & ~TL_PROBE_ONCPU) && !o->all_syscalls) {
		/* Calls that run long without blocking, sampled on each CPU. */
		struct perf_event_attr attr = {
		    .type = PERF_TYPE_SOFTWARE,
		    .config = PERF_COUNT_SW_CPU_CLOCK,
		    .size = sizeof(attr),
		    .sample_period = 1000000000ull / TL_SAMPLE_HZ,
		};
		int e = probe_attach_cpu_events(p->skel->progs.gt_tl_sample, &attr, NULL, 0,
						&p->cpu_links, &p->ncpu_links, NULL);

		if (e)
			warn(p, "the system call sampler (cpu-clock)", -e);
	}
	if (classes & TL_PROBE_ONCPU) {
		attach(p, p->skel->progs.gt_tl_wakeup, "sched_wakeup");
		attach(p, p->skel->progs.gt_tl_wakeup_new, "sched_wakeup_new");
	}
	if (!attached) {
		snprintf(err, errlen, "no thread probe could start: %.*s",
			 (int)strcspn(p->warnings, "\n"), p->warnings);
		goto fail;
	}
	p->rb = drain__new(bpf_map__fd(p->skel->maps.gt_tl_events), on_record, p);
	if (!p->rb) {
		snprintf(err, errlen, "cannot map the thread ring buffer: %s", strerror(errno));
		goto fail;
	}
	return p;
fail:
	tl_probes__free(p);
	return NULL;
}

const char *tl_probes__warnings(const struct tl_probes *p)
{
	return p->warnings;
}

int tl_probes__fd(const struct tl_probes *p)
{
	return drain__fd(p->rb);
}

int tl_probes__poll(struct tl_probes *p, int timeout_ms)
{
	return drain__poll(p->rb, timeout_ms);
}

int tl_probes__consume(struct tl_probes *p, uint64_t deadline_ns)
{
	return drain__consume(p->rb, deadline_ns);
}

int tl_probes__add_pid(struct tl_probes *p, int tgid)
{
	if (!p->pid_filter || tgid <= 0)
		return -EINVAL;
	return targets_add_pid(p->skel->obj, tgid);
}

int tl_probes__syscall_kind(const struct tl_probes *p, unsigned nr)
{
	return nr < TL_SYSCALL_MAX && p->skel->rodata->sys_kind[nr]
		       ? p->skel->rodata->sys_kind[nr] - 1
		       : -1;
}

int tl_probes__seed(struct tl_probes *p, uint32_t tid, const struct tl_start *s)
{
	int fd = bpf_map__fd(p->skel->maps.gt_tl_start);
	struct tl_start cur;

	if (!bpf_map_lookup_elem(fd, &tid, &cur) && cur.ts)
		return -EEXIST; /* the probe saw this call's entry itself */
	if (bpf_map_update_elem(fd, &tid, s, BPF_ANY))
		return -errno;
	return 0;
}

/* Calls fn for every thread's entry in gt_tl_start. */
static void each_entry(struct tl_probes *p,
		       void (*fn)(struct tl_probes *p, uint32_t tid, const struct tl_start *s,
				  void *arg),
		       void *arg)
{
	int fd = bpf_map__fd(p->skel->maps.gt_tl_start);
	__u32 key, next;
	struct tl_start s;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &s))
			fn(p, key, &s, arg);
	}
}

struct each_cb {
	void (*open)(void *ctx, uint32_t tid, const struct tl_start *s);
	void (*shorts)(void *ctx, uint32_t tid, uint32_t pid, const struct tl_short *s);
	void *ctx;
};

static void open_one(struct tl_probes *p, uint32_t tid, const struct tl_start *s, void *arg)
{
	struct each_cb *cb = arg;

	if (s->ts)
		cb->open(cb->ctx, tid, s);
}

static void shorts_one(struct tl_probes *p, uint32_t tid, const struct tl_start *s, void *arg)
{
	struct each_cb *cb = arg;

	cb->shorts(cb->ctx, tid, s->pid, &s->shorts);
}

void tl_probes__in_progress(struct tl_probes *p,
			    void (*fn)(void *ctx, uint32_t tid, const struct tl_start *s),
			    void *ctx)
{
	struct each_cb cb = { .open = fn, .ctx = ctx };

	each_entry(p, open_one, &cb);
}

size_t tl_probes__stack(struct tl_probes *p, int stackid, uint64_t *ips, size_t max)
{
	__u64 buf[GT_MAX_STACK] = { 0 };
	__u32 key = (__u32)stackid;
	size_t n = 0;

	if (stackid < 0 || bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.gt_tl_stacks), &key, buf))
		return 0;
	while (n < max && n < GT_MAX_STACK && buf[n])
		ips[n] = buf[n], n++;
	return n;
}

void tl_probes__shorts(struct tl_probes *p,
		       void (*fn)(void *ctx, uint32_t tid, uint32_t pid, const struct tl_short *s),
		       void *ctx)
{
	struct each_cb cb = { .shorts = fn, .ctx = ctx };

	each_entry(p, shorts_one, &cb);
}

void tl_probes__stats(const struct tl_probes *p, struct tl_probe_stats *st)
{
	int ncpus = libbpf_num_possible_cpus();
	struct tl_counters *c;
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	st->lost_user = p->lost_user;
	if (ncpus <= 0)
		return;
	c = calloc(ncpus, sizeof(*c));
	if (!c)
		return;
	if (!bpf_map__lookup_elem(p->skel->maps.gt_tl_counters, &zero, sizeof(zero), c,
				  ncpus * sizeof(*c), 0))
		for (int i = 0; i < ncpus; i++) {
			st->events += c[i].events;
			st->drops += c[i].drops;
			st->shorter += c[i].shorter;
		}
	free(c);
}

void tl_probes__free(struct tl_probes *p)
{
	if (!p)
		return;
	drain__free(p->rb);
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	for (size_t i = 0; i < p->ncpu_links; i++)
		bpf_link__destroy(p->cpu_links[i]);
	free(p->cpu_links);
	gt_threads__destroy(p->skel);
	free(p);
}
