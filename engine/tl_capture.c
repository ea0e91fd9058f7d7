#include "tl_capture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "session.h"
#include "bpf/kabi.h"
#include "symbols/ident.h"
#include "util/clock.h"
#include "util/procfs.h"

#define FD_SLOTS 4096 /* (pid, fd) -> path cache, direct-mapped */
#define CALL_SLOTS 1024 /* tid -> its last read or write interval, direct-mapped */
#define GLIBC_LOCK_WAIT_VAL 2 /* glibc waits with the lock word at 2 (locked, waiters) */
#define SEED_MAX 1024	      /* calls in progress before the probes attached, kept with stacks */
#define SEED_STACK 8192	      /* stack bytes copied to unwind them */

struct fd_slot {
	uint32_t pid;
	int32_t fd;
	uint32_t path; /* timeline strtab id */
};

/* A thread's last interval of a read or write call, which the next one of the same call
 * (tl_rec.call_key) extends. */
struct call_slot {
	uint32_t tid, name;
	uint64_t key, start;
};

struct tl_capture {
	struct session *s;
	struct tl_probes *p;
	struct timeline *tl;
	uint32_t names[TL_SYSCALL_MAX]; /* interned syscall names, 0 = not yet */
	uint32_t kind_names[TL_KIND_MAX];
	struct fd_slot fds[FD_SLOTS];
	struct call_slot calls[CALL_SLOTS];
	uint64_t min_dur_ns;
	struct {
		uint32_t tid, stack;
	} seeds[SEED_MAX]; /* stacks of the seeded calls (the kernel has none for them) */
	size_t nseeds;
	struct tl_probe_stats past; /* the counts of probes attached before, now detached */
};

static uint32_t intern(struct tl_capture *c, const char *s)
{
	uint32_t id = timeline__intern(c->tl, s, strlen(s));

	return id == UINT32_MAX ? 0 : id;
}

static uint32_t name_of(struct tl_capture *c, unsigned nr, unsigned kind)
{
	const char *n;

	if (nr >= TL_SYSCALL_MAX) {
		if (!c->kind_names[kind])
			c->kind_names[kind] = intern(c, tl_kind_str((int)kind));
		return c->kind_names[kind];
	}
	if (!c->names[nr]) {
		char buf[32];

		n = tl_syscall_name(nr);
		if (!n) {
			snprintf(buf, sizeof(buf), "syscall_%u", nr);
			n = buf;
		}
		c->names[nr] = intern(c, n);
	}
	return c->names[nr];
}

/* Names process pid in the timeline once: its command and container. */
static void process_seen(struct tl_capture *c, uint32_t pid, const char *comm)
{
	struct proc_ident id;

	if (timeline__process_find(c->tl, pid))
		return;
	if (ident_cache__lookup(c->s->ic, (int)pid, &id) == 0)
		timeline__process_set(c->tl, pid, id.comm[0] ? id.comm : comm,
				      id.container_name[0] ? id.container_name : NULL,
				      id.container_id[0] ? id.container_id : NULL);
	else
		timeline__process_set(c->tl, pid, comm, NULL, NULL);
}

static long thread_of(struct tl_capture *c, uint32_t pid, uint32_t tid, const char *comm)
{
	char buf[GT_COMM_LEN + 1];

	const struct tl_process *p;

	memcpy(buf, comm, GT_COMM_LEN);
	buf[GT_COMM_LEN] = 0;
	process_seen(c, pid, buf);
	/* The main thread's name is the process's: it changes at exec. */
	p = timeline__process_find(c->tl, pid);
	if (pid == tid && buf[0] && p &&
	    strcmp(strtab__str(timeline__strtab_c(c->tl), p->name), buf))
		timeline__process_set(c->tl, pid, buf,
				      strtab__str(timeline__strtab_c(c->tl), p->container),
				      strtab__str(timeline__strtab_c(c->tl), p->container_id));
	return timeline__thread_get(c->tl, pid, tid, buf, strlen(buf));
}

static struct fd_slot *fd_slot(struct tl_capture *c, uint32_t pid, int fd)
{
	return &c->fds[(pid * 2654435761u + (uint32_t)fd) % FD_SLOTS];
}

/* The path of pid's fd: from the last open seen, else from /proc (the fd may be gone). */
static uint32_t fd_path(struct tl_capture *c, uint32_t pid, int64_t fd)
{
	struct fd_slot *sl;
	char link[64], path[4096];
	ssize_t n;

	if (fd < 0 || fd > INT32_MAX)
		return 0;
	sl = fd_slot(c, pid, (int)fd);
	if (sl->path && sl->pid == pid && sl->fd == fd)
		return sl->path;
	snprintf(link, sizeof(link), "/proc/%u/fd/%d", pid, (int)fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	*sl = (struct fd_slot){ pid, (int)fd, intern(c, path) };
	return sl->path;
}

/* The path in record r, interned: absolute, or made so with the process's cwd. */
static uint32_t rec_path(struct tl_capture *c, const struct tl_rec *r)
{
	char path[TL_PATH_LEN + 1], full[4096 + TL_PATH_LEN + 2], cwd[4096], link[64];
	ssize_t n;

	memcpy(path, r->path, TL_PATH_LEN);
	path[TL_PATH_LEN] = 0;
	if (path[0] == '/' || strchr(path, ':')) { /* absolute, or pipe:[N], anon_inode:... */
		snprintf(full, sizeof(full), "%s", path);
	} else {
		snprintf(link, sizeof(link), "/proc/%u/cwd", r->pid);
		n = readlink(link, cwd, sizeof(cwd) - 1);
		cwd[n > 0 ? n : 0] = 0;
		snprintf(full, sizeof(full), "%s/%s", cwd, path);
	}
	return intern(c, full);
}

/* Remembers the file an open returned. */
static void fd_opened(struct tl_capture *c, const struct tl_rec *r)
{
	if (r->ret > INT32_MAX)
		return;
	*fd_slot(c, r->pid, (int)r->ret) = (struct fd_slot){ r->pid, (int)r->ret, rec_path(c, r) };
}

static void addr_str(int family, const uint8_t *a, uint16_t port, char *buf, size_t n)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, a, ip, sizeof(ip));
	snprintf(buf, n, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

/* "TCP 127.0.0.1:41000 -> 127.0.0.1:20010" (local -> remote). */
static uint32_t sock_conn(struct tl_capture *c, const struct tl_rec *r)
{
	char l[64], rm[64], buf[160];

	if (r->sock_family != AF_INET && r->sock_family != AF_INET6)
		return intern(c, r->sock_family == AF_UNIX ? "UNIX" : "socket");
	addr_str(r->sock_family, r->saddr, r->sport, l, sizeof(l));
	addr_str(r->sock_family, r->daddr, r->dport, rm, sizeof(rm));
	snprintf(buf, sizeof(buf), "%s %s -> %s",
		 r->sock_type == SOCK_STREAM ? "TCP" : r->sock_type == SOCK_DGRAM ? "UDP" : "SOCK",
		 l, rm);
	return intern(c, buf);
}

/* The user stack of a record as "outer;...;inner" with the session's symbolizer: the functions
 * that were called, without the inline frames the flame graphs show (a lock hint names the
 * innermost few, which would then all be the C library's inlined lock path). */
static uint32_t stack_of(struct tl_capture *c, const struct gt_event *stk)
{
	uint32_t frames[COLLECTOR_MAX_FRAMES];
	const struct frames *ft = c->s->ft;
	size_t n, len = 0;
	char *buf;
	uint32_t id;

	if (!stk->ustack_len && !(stk->flags & GT_EVF_UREGS))
		return 0;
	n = collector__stack(c->s->col, stk, frames);
	buf = malloc(n * 256 + 1);
	if (!buf)
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t l;

		if (frames[i] == UINT32_MAX || frames__get(ft, frames[i])->kind == FRAME_INLINED)
			continue;
		l = frames__name_len(ft, frames[i]);
		if (l > 250)
			l = 250;
		if (len)
			buf[len++] = ';';
		memcpy(buf + len, frames__name(ft, frames[i]), l);
		len += l;
	}
	id = len ? timeline__intern(c->tl, buf, len) : 0;
	free(buf);
	return id == UINT32_MAX ? 0 : id;
}

/* Whether tid is a thread of process pid right now. */
static bool thread_in(uint32_t pid, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return access(path, F_OK) == 0;
}

/* The futex owner is trusted when read from a PI futex, or from a glibc mutex word by a
 * glibc lock wait (expected value 2) and naming another thread of the same process. */
static bool owner_ok(uint32_t pid, uint32_t tid, unsigned flags, uint32_t op, uint32_t val,
		     uint32_t owner)
{
	if (!owner || owner == tid)
		return false;
	if (flags & TLF_OWNER_PI)
		return true;
	return (flags & TLF_OWNER_MUTEX) && val == GLIBC_LOCK_WAIT_VAL &&
	       ((op & GT_FUTEX_CMD_MASK) == GT_FUTEX_WAIT ||
		(op & GT_FUTEX_CMD_MASK) == GT_FUTEX_WAIT_BITSET) &&
	       thread_in(pid, owner);
}

/* A futex wait on a lock rather than a condition: glibc's contended lock word (2), or PI. */
static bool lock_wait(uint32_t op, uint32_t val)
{
	uint32_t cmd = op & GT_FUTEX_CMD_MASK;

	return ((cmd == GT_FUTEX_WAIT || cmd == GT_FUTEX_WAIT_BITSET) &&
		val == GLIBC_LOCK_WAIT_VAL) ||
	       cmd == GT_FUTEX_LOCK_PI || cmd == GT_FUTEX_LOCK_PI2;
}

static void fill_attrs(struct tl_capture *c, struct tl_event *ev, const struct tl_rec *r)
{
	if (r->flags & TLF_SOCK)
		ev->attr = sock_conn(c, r);
	else if (r->flags & TLF_PATH) /* named in the kernel when the call blocked */
		ev->attr = rec_path(c, r);
	else if (r->kind == TLK_FILE && r->nr != GT_NR_SYNC)
		ev->attr = fd_path(c, r->pid, (int64_t)r->arg0);
	if (r->kind == TLK_LOCK) {
		ev->addr = r->arg0;
		ev->op = r->futex_op;
		if (lock_wait(r->futex_op, r->futex_val))
			ev->flags |= TL_EV_LOCKWAIT;
		if (owner_ok(r->pid, r->tid, r->flags, r->futex_op, r->futex_val, r->owner)) {
			ev->owner = r->owner;
			ev->flags |= TL_EV_OWNER;
		}
	}
}

/* The stack found in /proc for the seeded call of thread tid, 0 if none. */
static uint32_t seed_stack_of(const struct tl_capture *c, uint32_t tid)
{
	for (size_t k = 0; k < c->nseeds; k++)
		if (c->seeds[k].tid == tid)
			return c->seeds[k].stack;
	return 0;
}

static void on_record(void *ctx, const struct tl_rec *r)
{
	struct tl_capture *c = ctx;
	struct tl_event ev = { 0 };
	long ti;

	if (r->type == TLR_OPENAT) {
		fd_opened(c, r);
		return;
	}
	if (r->type == TLR_EXIT) {
		ti = timeline__thread_find(c->tl, r->tid);
		if (ti >= 0)
			timeline__thread_end(c->tl, (size_t)ti, r->end);
		return;
	}
	ti = thread_of(c, r->pid, r->tid, r->comm);
	if (ti < 0)
		return;
	ev.start = r->start;
	ev.end = r->end;
	ev.kind = r->kind;
	ev.name = name_of(c, r->nr, r->kind);
	ev.count = 1;
	if (r->call_key) {
		/* The same call blocked again (woken before its data came): one interval (its
		 * attributes and stack were taken with the first). */
		struct call_slot *cs = &c->calls[r->tid % CALL_SLOTS];

		if (cs->tid == r->tid && cs->key == r->call_key && cs->name == ev.name &&
		    !timeline__extend(c->tl, (size_t)ti, cs->start, ev.name, r->end))
			return;
		*cs = (struct call_slot){ .tid = r->tid, .name = ev.name, .key = r->call_key,
					  .start = r->start };
	}
	if ((r->nr == GT_NR_OPEN || r->nr == GT_NR_CREAT || r->nr == GT_NR_OPENAT) &&
	    !(r->flags & TLF_PATH)) /* opened (the result is known from sys_exit) */
		ev.attr = r->ret >= 0 ? fd_path(c, r->pid, r->ret) : 0;
	else if (r->nr != TL_NR_NONE)
		fill_attrs(c, &ev, r);
	if (r->flags & TLF_SAMPLED)
		ev.flags |= TL_EV_SAMPLED;
	ev.stack = stack_of(c, &r->stk);
	if (!ev.stack && (r->flags & TLF_SEEDED))
		ev.stack = seed_stack_of(c, r->tid);
	timeline__add(c->tl, (size_t)ti, &ev);
}

static void comm_of_task(uint32_t pid, uint32_t tid, char *buf, size_t n)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static long thread_known(struct tl_capture *c, uint32_t pid, uint32_t tid)
{
	char comm[GT_COMM_LEN + 1];
	long ti = timeline__thread_find(c->tl, tid);

	if (ti >= 0)
		return ti;
	comm_of_task(pid, tid, comm, sizeof(comm));
	return thread_of(c, pid, tid, comm);
}

static void on_open(void *ctx, uint32_t tid, const struct tl_start *s)
{
	struct tl_capture *c = ctx;
	uint64_t now = timeline__now(c->tl);
	struct tl_event ev = { 0 };
	struct {
		struct gt_event e;
	} *stk;
	long ti;
	char link[64], target[64];
	ssize_t n;

	/* A call the thread was preempted in, with the thread back on a CPU: it may have ended. */
	if (s->ts > now || now - s->ts < c->min_dur_ns || s->kind >= TLK_MAX ||
	    (s->state & TLS_RESUMED))
		return;
	ti = thread_known(c, s->pid, tid);
	if (ti < 0)
		return;
	ev.start = s->ts;
	ev.kind = s->kind;
	ev.name = name_of(c, s->nr, s->kind);
	if (s->kind == TLK_FILE && s->nr != 162) {
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", s->pid, (int)s->arg0);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 7 && !strncmp(target, "socket:", 7))
			ev.kind = TL_NET;
		else
			ev.attr = fd_path(c, s->pid, (int64_t)s->arg0);
	}
	if (s->kind == TLK_LOCK) {
		ev.addr = s->arg0;
		ev.op = s->futex_op;
		if (lock_wait(s->futex_op, s->futex_val))
			ev.flags |= TL_EV_LOCKWAIT;
		if (owner_ok(s->pid, tid, s->flags, s->futex_op, s->futex_val, s->owner)) {
			ev.owner = s->owner;
			ev.flags |= TL_EV_OWNER;
		}
	}
	if (s->flags & TLF_SEEDED)
		ev.stack = seed_stack_of(c, tid);
	if (s->stackid >= 0) {
		stk = calloc(1, sizeof(*stk));
		if (stk) {
			stk->e.pid = s->pid;
			stk->e.tid = tid;
			stk->e.ustack_len =
			    (uint16_t)tl_probes__stack(c->p, s->stackid, (uint64_t *)stk->e.stack, GT_MAX_STACK);
			ev.stack = stack_of(c, &stk->e);
			free(stk);
		}
	}
	timeline__open_add(c->tl, (size_t)ti, &ev);
}

static void on_short(void *ctx, uint32_t tid, uint32_t pid, const struct tl_short *s)
{
	struct tl_capture *c = ctx;
	long ti = timeline__thread_find(c->tl, tid);
	bool any = false;

	for (int k = 0; k < TL_KIND_MAX; k++)
		any |= s->count[k] != 0;
	if (ti < 0 && !any)
		return;
	if (ti < 0) {
		char comm[GT_COMM_LEN + 1];

		comm_of_task(pid, tid, comm, sizeof(comm));
		if (!comm[0])
			return; /* gone before it did anything long enough to show */
		ti = thread_of(c, pid, tid, comm);
		if (ti < 0)
			return;
	}
	for (int k = 0; k < TL_KIND_MAX; k++)
		timeline__set_short(c->tl, (size_t)ti, k, s->count[k], s->ns[k]);
}

static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };

	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The user stack of a thread blocked in a system call, unwound with CFI from its stack pointer
 * and instruction pointer (from /proc; the frame pointer is unknown). */
static uint32_t seed_stack(struct tl_capture *c, uint32_t pid, uint32_t tid, uint64_t sp,
			   uint64_t pc)
{
	size_t size = GT_EVENT_HDR_SIZE + sizeof(struct gt_uregs) + SEED_STACK;
	struct gt_event *e = calloc(1, size);
	struct gt_uregs *u;
	struct iovec local, remote;
	ssize_t got;
	uint32_t id;

	if (!e)
		return 0;
	e->pid = pid;
	e->tid = tid;
	e->flags = GT_EVF_UREGS;
	u = (struct gt_uregs *)gt_event_uregs(e);
	u->ip = pc;
	u->sp = sp;
	local = (struct iovec){ u + 1, SEED_STACK };
	remote = (struct iovec){ (void *)(uintptr_t)sp, SEED_STACK };
	got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	/* The stack may end within the copy: take what one page at a time gives. */
	for (size_t off = 0; got < 0 && off < SEED_STACK; off += 4096) {
		local = (struct iovec){ (char *)(u + 1) + off, 4096 - ((sp + off) & 4095) };
		remote = (struct iovec){ (void *)(uintptr_t)(sp + off), local.iov_len };
		if (process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) != (ssize_t)local.iov_len)
			break;
		got = (ssize_t)(off + local.iov_len);
		off = (size_t)got - 4096;
	}
	u->size = got > 0 ? (uint32_t)got : 0;
	if (got == SEED_STACK)
		e->flags |= GT_EVF_USTACK_FULL;
	id = stack_of(c, e);
	free(e);
	return id;
}

/* Seeds thread tid of pid when /proc shows it inside a traced system call. */
static void seed_task(struct tl_capture *c, uint32_t pid, uint32_t tid, uint64_t now)
{
	char path[64], line[512];
	unsigned long long a[6], sp, pc;
	struct tl_start s = { 0 };
	long nr;
	int kind;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	line[0] = 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	if (sscanf(line, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2],
		   &a[3], &a[4], &a[5], &sp, &pc) != 9 || nr < 0 || (!sp && !pc))
		return; /* not in a system call; a kernel thread (no user context) shows "0 0x0 ..." */
	kind = tl_probes__syscall_kind(c->p, (unsigned)nr);
	if (kind < 0)
		return;
	s.ts = now;
	s.arg0 = a[0];
	s.pid = pid;
	s.nr = (uint16_t)nr;
	s.kind = (uint8_t)kind;
	s.flags = TLF_SEEDED;
	s.stackid = -1;
	s.sock_fd = -1;
	if (kind == TLK_LOCK) {
		uint32_t cmd = (uint32_t)a[1] & GT_FUTEX_CMD_MASK, word = 0;

		s.futex_op = (uint32_t)a[1];
		s.futex_val = (uint32_t)a[2];
		if ((cmd == GT_FUTEX_WAIT || cmd == GT_FUTEX_WAIT_BITSET) &&
		    !read_mem(pid, a[0] + 8, &word, 4) && word) {
			s.owner = word;
			s.flags |= TLF_OWNER_MUTEX;
		} else if ((cmd == GT_FUTEX_LOCK_PI || cmd == GT_FUTEX_LOCK_PI2) &&
			   !read_mem(pid, a[0], &word, 4) && (word & GT_FUTEX_TID_MASK)) {
			s.owner = word & GT_FUTEX_TID_MASK;
			s.flags |= TLF_OWNER_PI;
		}
	}
	if (tl_probes__seed(c->p, tid, &s) || c->nseeds == SEED_MAX)
		return;
	c->seeds[c->nseeds].tid = tid;
	c->seeds[c->nseeds++].stack = seed_stack(c, pid, tid, sp, pc);
}

struct seeding {
	struct tl_capture *c;
	const char *comm; /* only the processes of this name, when set */
	uint32_t pid;	  /* the process whose threads are being seeded */
	uint64_t now;
};

static int seed_thread(void *ctx, int tid)
{
	struct seeding *s = ctx;

	seed_task(s->c, s->pid, (uint32_t)tid, s->now);
	return 0;
}

/* Seeds the threads of process pid (of a process named s->comm only, when that is set). */
static int seed_process(void *ctx, int pid)
{
	struct seeding *s = ctx;
	char path[64], comm[GT_COMM_LEN + 1] = "";

	if (pid == getpid())
		return 0;
	if (s->comm) {
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (ident_read_small(path, comm, sizeof(comm)) > 0)
			comm[strcspn(comm, "\n")] = 0;
		if (strncmp(comm, s->comm, GT_COMM_LEN - 1))
			return 0;
	}
	s->pid = (uint32_t)pid;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	procfs_each_id(path, seed_thread, s);
	return 0;
}

/* Calls that were already running when the probes attached (threads stuck in a deadlock
 * entered their futex waits long ago): found in /proc and seeded into the kernel's map. */
static void seed_in_progress(struct tl_capture *c, const struct probe_opts *po)
{
	struct seeding s = { c, NULL, 0, clock_mono_ns() };

	for (size_t i = 0; i < po->npids; i++)
		seed_process(&s, po->pids[i]);
	if (!po->npids && !po->follow_children) {
		s.comm = po->comm;
		procfs_each_id("/proc", seed_process, &s);
	}
}

struct tl_capture *tl_capture__open(struct session *s, char *err, size_t errlen)
{
	struct tl_capture *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->s = s;
	c->min_dur_ns = (s->o->min_dur_us ? s->o->min_dur_us : 10) * 1000;
	c->tl = timeline__new(s->o->timeline_mem);
	if (!c->tl) {
		snprintf(err, errlen, "out of memory");
		free(c);
		return NULL;
	}
	if (tl_capture__attach(c, err, errlen)) {
		tl_capture__free(c);
		return NULL;
	}
	/* After the seeding of the calls in progress, which have no duration yet. */
	timeline__set_min_dur(c->tl, c->min_dur_ns);
	if ((s->o->tl_classes ? s->o->tl_classes : TL_PROBE_ALL) & ~TL_PROBE_ONCPU) /* calls traced */
		timeline__set_syscall_mode(c->tl, s->o->all_syscalls ? TL_SYSCALLS_ALL
								     : TL_SYSCALLS_BLOCKING);
	timeline__set_wall_offset(c->tl, clock_wall_s() - clock_mono_s());
	timeline__set_now(c->tl, clock_mono_ns());
	return c;
}

int tl_capture__attach(struct tl_capture *c, char *err, size_t errlen)
{
	struct tl_probe_opts o = { 0 };
	struct probe_opts po;
	struct session *s = c->s;

	if (c->p)
		return 0;
	session__probe_options(s, &po);
	o.targets = &po;
	o.classes = s->o->tl_classes;
	o.min_dur_ns = c->min_dur_ns;
	o.all_syscalls = s->o->all_syscalls;
	o.user_stacks = !s->o->kernel_only;
	if (s->o->unwind != RECORD_UNWIND_FP)
		o.ustack_copy = s->o->stack_size ? s->o->stack_size : RECORD_STACK_SIZE;
	c->p = tl_probes__open(&o, on_record, c, err, errlen);
	if (!c->p)
		return -EPERM;
	seed_in_progress(c, &po);
	timeline__set_now(c->tl, clock_mono_ns());
	return 0;
}

void tl_capture__detach(struct tl_capture *c)
{
	struct tl_probe_stats st;

	if (!c->p)
		return;
	tl_capture__refresh(c); /* what is queued and the calls in progress, read before */
	tl_probes__stats(c->p, &st);
	c->past.events += st.events;
	c->past.drops += st.drops;
	c->past.shorter += st.shorter;
	c->past.lost_user += st.lost_user;
	tl_probes__free(c->p);
	c->p = NULL;
}

int tl_capture__fd(const struct tl_capture *c)
{
	return c->p ? tl_probes__fd(c->p) : -1;
}

int tl_capture__consume(struct tl_capture *c, uint64_t deadline_ns)
{
	return c->p ? tl_probes__consume(c->p, deadline_ns) : 0;
}

void tl_capture__refresh(struct tl_capture *c)
{
	/* Drains what is queued; a failing ring buffer is reported by session__poll, which the
	 * loop calls next. Detached, the timeline keeps what it holds (its clock stops). */
	if (!c->p)
		return;
	(void)tl_probes__poll(c->p, 0);
	timeline__set_now(c->tl, clock_mono_ns());
	timeline__open_clear(c->tl);
	tl_probes__in_progress(c->p, on_open, c);
	tl_probes__shorts(c->p, on_short, c);
}

struct timeline *tl_capture__timeline(struct tl_capture *c)
{
	return c->tl;
}

void tl_capture__add_pid(struct tl_capture *c, int pid)
{
	if (c->p)
		tl_probes__add_pid(c->p, pid);
}

void tl_capture__stats(const struct tl_capture *c, struct tl_probe_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (c->p)
		tl_probes__stats(c->p, st);
	st->events += c->past.events;
	st->drops += c->past.drops;
	st->shorter += c->past.shorter;
	st->lost_user += c->past.lost_user;
}

const char *tl_capture__warnings(const struct tl_capture *c)
{
	return c->p ? tl_probes__warnings(c->p) : "";
}

void tl_capture__free(struct tl_capture *c)
{
	if (!c)
		return;
	tl_probes__free(c->p);
	timeline__free(c->tl);
	free(c);
}
