#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/drain.h"
#include "bpf/sli.h"
#include "model/growth.h"
#include "model/renew.h"
#include "symbols/java_attach.h"
#include "bpf/leak.h"
#include "util/clock.h"
#include "util/file.h"
#include "l7_capture.h"
#include "leak_env.h"
#include "tl_capture.h"
#include "util/cpulist.h"
#include "util/grow.h"

static bool cmdline_matches(const struct ident_cache *ic, const regex_t *re, int pid)
{
	char buf[4096];

	return ident_cache__cmdline(ic, pid, buf, sizeof(buf)) > 0 &&
	       regexec(re, buf, 0, NULL, 0) == 0;
}

struct cmdline_scan {
	const struct ident_cache *ic;
	const regex_t *re;
	int *pids;
	size_t *n, cap;
};

static int scan_one(void *ctx, int pid)
{
	struct cmdline_scan *c = ctx;

	if (pid != getpid() && cmdline_matches(c->ic, c->re, pid))
		c->pids[(*c->n)++] = pid;
	return *c->n >= c->cap;
}

/* Appends every running process whose command line matches re to pids. */
static void scan_cmdline(const struct ident_cache *ic, const regex_t *re, int *pids, size_t *n,
			 size_t cap)
{
	struct cmdline_scan c = { ic, re, pids, n, cap };

	if (*n < cap)
		ident_cache__each_pid(ic, scan_one, &c);
}

static void on_event(void *ctx, const struct gt_event *ev)
{
	struct session *s = ctx;

	if (ev->type == GT_EV_EXEC && s->have_re && s->probes &&
	    cmdline_matches(s->ic, &s->cmdline_re, (int)ev->pid)) {
		probes__add_pid(s->probes, (int)ev->pid);
		if (s->tl)
			tl_capture__add_pid(s->tl, (int)ev->pid);
		if (s->sli)
			sli_collector__add_pid(s->sli, (int)ev->pid);
	}
	collector__event(s->col, ev);
	/* A new program may bring an allocator of its own. */
	if (ev->type == GT_EV_EXEC && s->probes && (probes__types(s->probes) & PROBE_LEAK))
		probes__leak_scan(s->probes, (const int *)&ev->pid, 1, true);
	if (ev->type == GT_EV_EXIT && s->probes)
		probes__leak_exit(s->probes, (int)ev->pid);
}

/* leak: a block the process's exit or exec freed leaves the kernel's live set. */
static void leak_forget(void *ctx, uint32_t tgid, uint64_t addr)
{
	struct session *s = ctx;

	if (s->probes)
		probes__leak_forget(s->probes, tgid, addr);
}

#define LEAK_SCAN_NEW_S 1.0  /* processes started since are looked at every second */
#define LEAK_SCAN_ALL_S 10.0 /* and all of them again (dlopen) every 10 s */

/* leak: the blocks old enough are shown, and processes are looked at for allocators now and
 * then. */
static void leak_tick(struct session *s)
{
	double now;

	if (!s->probes || !(probes__types(s->probes) & PROBE_LEAK))
		return;
	collector__leak_age(s->col, clock_mono_ns());
	now = clock_mono_s();
	if (now < s->leak_scan_new)
		return;
	probes__leak_scan(s->probes, NULL, 0, now >= s->leak_scan_all);
	if (now >= s->leak_scan_all)
		s->leak_scan_all = now + LEAK_SCAN_ALL_S;
	s->leak_scan_new = now + LEAK_SCAN_NEW_S;
}

/* A CPython process among the sampled: its interpreter frames are walked from now on. */
static int on_python(void *ctx, int pid, const struct gt_py_proc *pp)
{
	struct session *s = ctx;

	return s->probes ? probes__add_python(s->probes, pid, pp) : -ENODEV;
}

static void on_task(void *ctx, const struct sb_event *ev)
{
	struct session *s = ctx;

	collector__task(s->col, ev);
}

/* Drains family k's ring buffer until deadline_ns: records taken, or -errno. */
static int family_consume(struct session *s, int k, uint64_t deadline_ns)
{
	switch (k) {
	case FAMILY_STACKS:
		return s->probes ? probes__consume(s->probes, deadline_ns) : 0;
	case FAMILY_THREADS:
		return s->tl ? tl_capture__consume(s->tl, deadline_ns) : 0;
	case FAMILY_L7:
		return s->l7 ? l7_capture__consume(s->l7, deadline_ns) : 0;
	}
	return 0;
}

/* Adds family f's ring buffer fd to the session's one epoll (no-op when there). 0 or -errno. */
static int family_watch(struct session *s, enum session_family f, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (s->watched & 1u << f)
		return 0;
	ev.data.fd = fd;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	s->watched |= 1u << f;
	return 0;
}

/* Takes family f's ring buffer fd off the epoll (before its probes close it). */
static void family_unwatch(struct session *s, enum session_family f, int fd)
{
	if (!(s->watched & 1u << f))
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	s->watched &= ~(1u << f);
}

static bool all_gone(const int *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], 0) == 0 || errno != ESRCH)
			return false;
	return n > 0;
}

/* Forks CMD stopped on a pipe, so the probes attach before it runs. A failed exec writes its
 * errno on a second pipe (closed by a successful exec), read by session__start_command. */
static pid_t spawn_command(char **argv, char **envp, int *go_fd, int *exec_fd)
{
	int fds[2], efds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	if (pipe2(efds, O_CLOEXEC)) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		close(efds[0]);
		close(efds[1]);
		return -1;
	}
	if (pid == 0) {
		char c;
		int e;

		close(fds[1]);
		close(efds[0]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127); /* galatop went away before starting us */
		signal(SIGINT, SIG_DFL);
		execvpe(argv[0], argv, envp ? envp : environ);
		e = errno;
		if (write(efds[1], &e, sizeof(e)) != sizeof(e))
			_exit(126);
		_exit(127);
	}
	close(fds[0]);
	close(efds[1]);
	*go_fd = fds[1];
	*exec_fd = efds[0];
	return pid;
}

static int resolve_groups(struct ident_cache *ic, const struct record_opts *o, uint64_t **ids,
			  size_t *n, struct msg_list *msgs)
{
	for (int pass = 0; pass < 2; pass++) {
		size_t count = pass ? o->npods : o->ncontainers;

		for (size_t i = 0; i < count; i++) {
			const char *key = pass ? o->pods[i] : o->containers[i];
			uint64_t *found = NULL;
			size_t nfound = 0;
			int err = ident_resolve_container_cgroups(ic, pass ? IDENT_POD : IDENT_CONTAINER,
								  key, &found, &nfound);

			if (err == -ENOENT) {
				msg_list__add(msgs, MSG_ERROR, "no %s matches '%s' (no cgroup names it)",
					      pass ? "pod" : "container", key);
				return -1;
			}
			if (err) {
				msg_list__add(msgs, MSG_ERROR, "cannot look up %s '%s': %s",
					      pass ? "pod" : "container", key, strerror(-err));
				return -1;
			}
			if (array_resize(ids, *n + nfound, sizeof(**ids))) {
				free(found);
				return -1;
			}
			memcpy(*ids + *n, found, nfound * sizeof(*found));
			*n += nfound;
			free(found);
		}
	}
	return 0;
}

void session__probe_options(const struct session *s, struct probe_opts *po)
{
	const struct record_opts *o = s->o;

	probe_opts__init(po);
	po->types = o->types;
	po->load_types = o->lazy_types & ~o->types;
	po->freq = o->freq;
	po->fixed_period = o->fixed_period;
	po->cpus = s->cpus;
	po->ncpus = s->ncpus;
	po->cpus_switchable = o->cpu_switch;
	po->kernel_stacks = !o->user_only;
	po->user_stacks = !o->kernel_only;
	po->no_idle = o->no_idle;
	po->min_block_us = o->min_block_us;
	po->max_block_us = o->max_block_us;
	po->state_filter = o->state_filter;
	if (o->unwind != RECORD_UNWIND_FP)
		po->ustack_copy = o->stack_size ? o->stack_size : RECORD_STACK_SIZE;
	po->pids = s->pids;
	po->npids = s->npids;
	po->tids = o->tids;
	po->ntids = o->ntids;
	po->comm = o->comm[0] ? o->comm : NULL;
	po->cgroup_ids = s->cgroups;
	po->ncgroups = s->ncgroups;
	po->follow_children = s->child > 0;
	po->task_fn = on_task;
	po->include_self = o->include_self;
	po->event_rate = o->event_rate;
	po->leak_sample = o->leak_sample;
	po->leak_uretprobe = o->leak_uretprobe;
	if (s->leak_lib[0] && s->child > 0) {
		po->leak_preload_pid = s->child;
		po->leak_preload = s->leak_lib;
	}
	po->leak_inject = s->leak_inj.pids;
	po->nleak_inject = s->leak_inj.n;
	po->leak_inject_lib = s->leak_inj.lib;
}

/* leak: the running processes that get the in-process sampler injected when leak attaches:
 * every process target found at the start (-p, --cmdline) but the command galatop runs, when
 * processes are probed one by one and --leak-uprobes did not turn the sampler down. */
static void leak_inject_targets(struct session *s)
{
	const struct record_opts *o = s->o;
	int pids[RECORD_MAX_TARGETS + 1];
	size_t n = 0;
	char why[PATH_MAX + 128];

	if (o->leak_uprobes || o->ntids || o->comm[0] || s->ncgroups)
		return;
	for (size_t i = 0; i < s->npids; i++)
		if (s->pids[i] != s->child && s->pids[i] != 0x7fffffff && s->pids[i] != getpid())
			pids[n++] = s->pids[i];
	/* Said when leak is asked for from the start (other runs may never need the library). */
	if (leak_injects__init(&s->leak_inj, pids, n, why, sizeof(why)) && (o->types & PROBE_LEAK))
		msg_list__add(s->msgs, MSG_WARNING, "leak: %s: running processes get allocator "
			      "uprobes", why);
}

/* leak: the hooks of the injected sampler come out of the processes (the library stays). */
static void leak_inject_stop(struct session *s)
{
	char warn[2048];

	leak_injects__detach(&s->leak_inj, warn, sizeof(warn));
	if (warn[0] && s->msgs)
		msg_list__add(s->msgs, MSG_WARNING, "leak: the sampler's hooks stay in %s (it goes on "
			      "sampling for nobody, a few nanoseconds a call)", warn);
}

/* --cpu: the list (checked when parsed) as one flag per configured CPU. */
static int cpu_targets(struct session *s)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	s->ncpus = n > 0 ? (size_t)n : 1;
	s->cpus = calloc(s->ncpus, 1);
	if (!s->cpus) {
		msg_list__add(s->msgs, MSG_ERROR, "out of memory");
		return -1;
	}
	if (cpulist_parse(s->o->cpu_list, s->cpus, s->ncpus, NULL) <= 0) {
		msg_list__add(s->msgs, MSG_ERROR, "--cpu: bad CPU list '%s'", s->o->cpu_list);
		return -1;
	}
	return 0;
}

/* --cgroup: a v2 cgroup becomes a cgroup target, a v1 cgroup's processes pid targets. */
static int cgroup_targets(struct session *s)
{
	char err[512];
	uint64_t cgid;
	int n = sli_cgroup_target(s->o->cgroup, &cgid, s->pids + s->npids,
				  RECORD_MAX_TARGETS - s->npids, err, sizeof(err));

	if (n < 0) {
		msg_list__add(s->msgs, MSG_ERROR, "%s", err);
		return -1;
	}
	s->npids += (size_t)n;
	if (!cgid && !n)
		s->pids[s->npids++] = 0x7fffffff; /* an empty v1 cgroup: nothing matches yet */
	if (cgid) {
		if (ARRAY_RESIZE(s->cgroups, s->ncgroups + 1)) {
			msg_list__add(s->msgs, MSG_ERROR, "out of memory");
			return -1;
		}
		s->cgroups[s->ncgroups++] = cgid;
	}
	return 0;
}

int session__open(struct session *s, struct record_opts *o, struct msg_list *msgs)
{
	struct collector_opts co = { 0 };
	struct probe_opts po;
	char err[512] = "";
	int r;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->msgs = msgs;
	s->child = -1;
	s->go_fd = -1;
	s->exec_fd = -1;
	/* Before any probe loads, so that every program's statistics count from its start. */
	self_cost__open(&s->cost, o->probe_stats == RECORD_STATS_HELD  ? SELF_COST_HELD
				  : o->probe_stats == RECORD_STATS_OFF ? SELF_COST_OFF
				  : o->probe_stats > 0		       ? o->probe_stats
								       : COST_PERIOD_S);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		msg_list__add(msgs, MSG_ERROR, "cannot create an epoll instance: %s", strerror(errno));
		goto fail;
	}
	s->st = strtab__new();
	s->ft = s->st ? frames__new(s->st) : NULL;
	s->sc = sym_cache__new();
	if (s->sc)
		sym_cache__set_lines(s->sc, o->source_lines);
	/* kallsyms is read while the probes load, rather than when the first kernel stack comes. */
	if (s->sc && !o->user_only)
		sym_cache__kernel_preload(s->sc);
	s->ic = ident_cache__new("/proc", "/");
	co.threads = o->threads;
	co.group = o->group < 0 ? GROUP_COMMAND : (enum group_by)o->group;
	co.annotate = o->annotate;
	co.mem_bytes = o->mem_bytes;
	co.no_kernel = o->user_only;
	co.no_user = o->kernel_only;
	co.unwind_cache = o->unwind_cache;
	co.max_stacks = o->max_stacks;
	co.no_java_native = o->no_java_native;
	co.python_fn = on_python;
	co.python_ctx = s;
	co.leak_sample = o->leak_sample;
	co.leak_min_age_ns = (uint64_t)(o->leak_min_age * 1e9);
	co.leak_forget_fn = leak_forget;
	co.leak_ctx = s;
	s->col = s->ft && s->sc && s->ic ? collector__new(s->ft, s->sc, s->ic, &co) : NULL;
	if (!s->col) {
		msg_list__add(msgs, MSG_ERROR, "out of memory");
		goto fail;
	}
	if (resolve_groups(s->ic, o, &s->cgroups, &s->ncgroups, msgs))
		goto fail;
	if (o->cpu_list[0] && cpu_targets(s))
		goto fail;
	memcpy(s->pids, o->pids, o->npids * sizeof(int));
	s->npids = o->npids;
	if (o->cmdline[0]) {
		regcomp(&s->cmdline_re, o->cmdline, REG_EXTENDED | REG_NOSUB);
		s->have_re = true;
		scan_cmdline(s->ic, &s->cmdline_re, s->pids, &s->npids, RECORD_MAX_TARGETS);
		if (!s->npids)
			s->pids[s->npids++] = 0x7fffffff; /* keeps the pid filter on until one starts */
	}
	if (o->command) {
		/* mem_swapin from delay accounting covers the command only when it is on at fork. */
		if (o->sli)
			sli_delayacct_early();
		char **env = NULL, why[PATH_MAX + 128] = "";

		if (leak_preload_wanted(o)) {
			env = leak_env__new(o, s->leak_lib, sizeof(s->leak_lib), why, sizeof(why));
			if (!env && why[0])
				msg_list__add(msgs, MSG_WARNING, "leak: %s: the command's allocator "
					      "gets uprobes", why);
		}
		s->child = spawn_command(o->command, env, &s->go_fd, &s->exec_fd);
		leak_env__free(env);
		s->child_pid = s->child > 0 ? s->child : 0;
		if (s->child < 0) {
			msg_list__add(msgs, MSG_ERROR, "cannot start %s: %s", o->command[0],
				      strerror(errno));
			goto fail;
		}
		s->pids[s->npids++] = s->child;
		if (!env)
			s->leak_lib[0] = '\0';
	}
	if (o->cgroup[0] && cgroup_targets(s))
		goto fail;
	leak_inject_targets(s);
	session__probe_options(s, &po);
	/* Thread timeline and L7 have probes of their own (session__threads_open, engine/l7_capture.c). */
	po.types &= ~(PROBE_THREADS | RECORD_TYPE_L7);
	if (po.types) {
		s->probes = probes__open(&po, on_event, s, err, sizeof(err));
		if (!s->probes) {
			msg_list__add(msgs, MSG_ERROR, "%s", err);
			goto fail;
		}
		r = family_watch(s, FAMILY_STACKS, probes__fd(s->probes));
		if (r) {
			msg_list__add(msgs, MSG_ERROR, "cannot poll the stack probes: %s",
				      strerror(-r));
			goto fail;
		}
		if (probes__types(s->probes) & PROBE_LEAK)
			leak_injects__attach(&s->leak_inj, s->probes, probes__leak_sample(s->probes));
		msg_list__add_lines(msgs, MSG_WARNING, probes__warnings(s->probes));
		o->types &= probes__types(s->probes) | PROBE_THREADS | RECORD_TYPE_L7;
	}
	if (o->sli && session__attach_sli(s, err, sizeof(err))) {
		msg_list__add(msgs, MSG_ERROR, "%s", err);
		goto fail;
	}
	if ((o->types & PROBE_THREADS) && session__threads_open(s, err, sizeof(err))) {
		msg_list__add(msgs, MSG_ERROR, "%s", err);
		goto fail;
	}
	if ((o->types & RECORD_TYPE_L7) && session__attach_l7(s, err, sizeof(err))) {
		msg_list__add(msgs, MSG_ERROR, "%s", err);
		goto fail;
	}
	/* JVMs get the agent that names their JIT code, once the stack probes are in place; the
	 * command, once it runs a JVM ready for it (session__poll). */
	if (s->probes && !o->no_java_agent)
		java_attach__targets(s->pids, s->npids);
	/* CPython processes running now get their interpreter frames from their first sample. */
	if (s->probes)
		collector__python_scan(s->col, s->pids, s->npids);
	s->java_child = s->probes && !o->no_java_agent && s->child > 0;
	/* Read the targets' maps now, so stacks resolve even if they exit early. */
	for (size_t i = 0; i < s->npids; i++)
		sym_cache__process_load(s->sc, s->pids[i]);
	if (s->cost.stats_err && !s->cost.model.stats_on)
		msg_list__add(msgs, MSG_WARNING, "BPF statistics cannot be turned on (%s): the "
			      "probes' own cost is not shown", strerror(-s->cost.stats_err));
	self_cost__restart(&s->cost);
	return 0;
fail:
	session__close(s, true);
	return 1;
}

static int move_collector(void *ctx, struct frames *ft)
{
	return collector__set_frames(ctx, ft);
}

int session__renew_frames(struct session *s, struct profile **p, struct slices **r, size_t n,
			  struct frames **old_ft, struct strtab **old_st)
{
	struct strtab *st;
	struct frames *ft;

	if (!renew_due(frames__count(s->ft), s->renewed_at, s->renew_min))
		return 0;
	st = strtab__new();
	ft = st ? frames__new(st) : NULL;
	if (!ft || renew_move(ft, p, r, n, move_collector, s->col)) {
		frames__free(ft);
		strtab__free(st);
		return 0;
	}
	if (old_ft && old_st) {
		*old_ft = s->ft;
		*old_st = s->st;
	} else {
		frames__free(s->ft);
		strtab__free(s->st);
	}
	s->ft = ft;
	s->st = st;
	s->renewed_at = frames__count(ft);
	return 1;
}

int session__attach_probe(struct session *s, unsigned type, char *err, size_t errlen)
{
	int r;

	if (!s->probes) {
		snprintf(err, errlen, "no stack probes in this session");
		return -ENOTSUP;
	}
	r = probes__attach(s->probes, type, err, errlen);
	if (r)
		return r;
	if (type & PROBE_LEAK)
		leak_injects__attach(&s->leak_inj, s->probes, probes__leak_sample(s->probes));
	r = family_watch(s, FAMILY_STACKS, probes__fd(s->probes));
	if (r) {
		snprintf(err, errlen, "cannot poll the stack probes: %s", strerror(-r));
		probes__detach(s->probes, type);
		return r;
	}
	s->o->types |= type;
	return 0;
}

int session__detach_probe(struct session *s, unsigned type)
{
	int r;

	if (!s->probes)
		return -ENOENT;
	if (type & PROBE_LEAK)
		leak_inject_stop(s);
	r = probes__detach(s->probes, type);
	if (!r && !(probes__types(s->probes) & stack_type_probes())) {
		/* The last stack type gone: what is queued is read, the ring buffer leaves the
		 * epoll (the object, with the exec/exit probes, stays for session__attach_probe). */
		r = probes__consume(s->probes, clock_mono_ns() + (uint64_t)DRAIN_ALL_MS * 1000000);
		family_unwatch(s, FAMILY_STACKS, probes__fd(s->probes));
		r = r < 0 ? r : 0;
	}
	return r;
}

int session__detach(struct session *s, enum session_family f)
{
	switch (f) {
	case FAMILY_STACKS:
		if (!s->probes)
			return -ENOENT;
		leak_inject_stop(s);
		for (int t = 0; t < STACK_TYPES; t++)
			probes__detach(s->probes, stack_types[t].probe);
		return session__detach_probe(s, stack_types[0].probe);
	case FAMILY_THREADS:
		if (!s->tl)
			return -ENOENT;
		if (tl_capture__fd(s->tl) >= 0)
			family_unwatch(s, FAMILY_THREADS, tl_capture__fd(s->tl));
		tl_capture__detach(s->tl);
		return 0;
	case FAMILY_L7:
		if (!s->l7)
			return -ENOENT;
		if (l7_capture__fd(s->l7) >= 0)
			family_unwatch(s, FAMILY_L7, l7_capture__fd(s->l7));
		l7_capture__detach(s->l7);
		return 0;
	default:
		return -EINVAL;
	}
}

/* A family just opened at run time: its ring buffer (fd) joins the epoll, its warnings the
 * messages, its type bit o->types. 0, or -errno with a reason in err (the caller then frees
 * the family). */
static int family_started(struct session *s, enum session_family f, const char *what, int fd,
			  const char *warnings, unsigned type, char *err, size_t errlen)
{
	int r = family_watch(s, f, fd);

	if (r) {
		snprintf(err, errlen, "cannot poll the %s probes: %s", what, strerror(-r));
		return r;
	}
	msg_list__add_lines(s->msgs, MSG_WARNING, warnings);
	s->o->types |= type;
	return 0;
}

int session__threads_open(struct session *s, char *err, size_t errlen)
{
	int r;

	if (s->tl) {
		/* Detached at run time: attached again, into the same timeline. */
		if (tl_capture__fd(s->tl) >= 0)
			return 0;
		r = tl_capture__attach(s->tl, err, errlen);
		r = r ?: family_started(s, FAMILY_THREADS, "thread", tl_capture__fd(s->tl),
					tl_capture__warnings(s->tl), PROBE_THREADS, err, errlen);
		if (r)
			tl_capture__detach(s->tl);
		return r;
	}
	s->tl = tl_capture__open(s, err, errlen);
	if (!s->tl)
		return -EPERM;
	r = family_started(s, FAMILY_THREADS, "thread", tl_capture__fd(s->tl),
			   tl_capture__warnings(s->tl), PROBE_THREADS, err, errlen);
	if (r) {
		tl_capture__free(s->tl);
		s->tl = NULL;
	}
	return r;
}

int session__replay_l7(struct session *s, char *err, size_t errlen)
{
	if (s->l7)
		return 0;
	s->l7 = l7_capture__open_replay(s, err, errlen);
	if (!s->l7)
		return -ENOMEM;
	s->o->types |= RECORD_TYPE_L7;
	return 0;
}

int session__replay(struct session *s, enum session_family f, const void *data, size_t size)
{
	switch (f) {
	case FAMILY_STACKS:
		if (probe_record_check(data, size))
			return -EINVAL;
		on_event(s, data);
		return 0;
	case FAMILY_L7:
		return s->l7 ? l7_capture__replay(s->l7, data, size) : -ENOENT;
	default:
		/* The thread timeline names system calls through its loaded probes' tables. */
		return -ENOTSUP;
	}
}

int session__attach_l7(struct session *s, char *err, size_t errlen)
{
	int r;

	if (s->l7) {
		/* Detached at run time: attached again, into the same tables. */
		if (l7_capture__fd(s->l7) >= 0)
			return 0;
		r = l7_capture__attach(s->l7, err, errlen);
		r = r ?: family_started(s, FAMILY_L7, "L7", l7_capture__fd(s->l7),
					l7_capture__warnings(s->l7), RECORD_TYPE_L7, err, errlen);
		if (r)
			l7_capture__detach(s->l7);
		return r;
	}
	s->l7 = l7_capture__open(s, err, errlen);
	if (!s->l7)
		return -EPERM;
	r = family_started(s, FAMILY_L7, "L7", l7_capture__fd(s->l7), l7_capture__warnings(s->l7),
			   RECORD_TYPE_L7, err, errlen);
	if (r) {
		l7_capture__free(s->l7);
		s->l7 = NULL;
	}
	return r;
}

void session__detach_sli(struct session *s)
{
	sli_collector__free(s->sli);
	s->sli = NULL;
}

int session__attach_sli(struct session *s, char *err, size_t errlen)
{
	struct sli_collector_opts so = { 0 };
	struct probe_opts po;

	if (s->sli)
		return 0;
	session__probe_options(s, &po);
	so.targets = &po;
	/* gala-gopher's sli families (--config): cpu, mem, io. */
	if (s->o->sli_families & RECORD_SLI_CPU)
		so.slis |= 1u << SLI_CPU_WAIT | 1u << SLI_CPU_RUNDELAY | 1u << SLI_CPU_SLEEP |
			   1u << SLI_CPU_BLOCK | 1u << SLI_CPU_IOWAIT | 1u << SLI_CPU_LONGSYS;
	if (s->o->sli_families & RECORD_SLI_MEM)
		so.slis |= 1u << SLI_MEM_RECLAIM | 1u << SLI_MEM_SWAPIN | 1u << SLI_MEM_COMPACT;
	if (s->o->sli_families & RECORD_SLI_IO)
		so.slis |= 1u << SLI_BIO_LATENCY;
	if (s->o->longsys_ns == RECORD_LONGSYS_OFF || !s->o->longsys_ns) {
		/* The system call hooks put every system call of every task on the kernel's slow
		 * path (12-15% of a busy server's throughput): on only when --longsys asks. */
		so.slis = (so.slis ? so.slis : (1u << SLI_MAX) - 1) & ~(1u << SLI_CPU_LONGSYS);
		so.longsys_ns = 0;
	}
	so.longsys_ns = s->o->longsys_ns;
	so.delayacct = true;
	so.cgroup = s->o->cgroup[0] ? s->o->cgroup : NULL;
	so.host_root = "/";
	s->sli = sli_collector__new(s->ic, &so, err, errlen);
	if (!s->sli)
		return -EINVAL;
	msg_list__add_lines(s->msgs, MSG_WARNING, sli_collector__warnings(s->sli));
	return 0;
}

void session__tick(struct session *s)
{
	int pids[RECORD_MAX_TARGETS];
	size_t n = 0;

	if (s->sli)
		sli_collector__read(s->sli);
	if (!s->sli || !s->have_re || s->probes)
		return; /* with the profile probes, exec events add them */
	scan_cmdline(s->ic, &s->cmdline_re, pids, &n, RECORD_MAX_TARGETS);
	for (size_t i = 0; i < n; i++)
		sli_collector__add_pid(s->sli, pids[i]);
}

void session__start_command(struct session *s)
{
	int e = 0;

	if (s->go_fd < 0)
		return;
	if (write(s->go_fd, "g", 1) != 1)
		msg_list__add(s->msgs, MSG_ERROR, "cannot start %s", s->o->command[0]);
	close(s->go_fd);
	s->go_fd = -1;
	/* EOF once the command runs; its errno when it could not. */
	while (read(s->exec_fd, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	if (e)
		msg_list__add(s->msgs, MSG_ERROR, "cannot run %s: %s", s->o->command[0],
			      strerror(e));
	close(s->exec_fd);
	s->exec_fd = -1;
}

/* Attaches the command's JVM once it is ready (its signal handling set up: a SIGQUIT before
 * would kill it); looked at every 100 ms while the command lives. */
static void java_child_tick(struct session *s)
{
	double now = clock_mono_s();

	if (!s->java_child || now - s->java_check < 0.1)
		return;
	s->java_check = now;
	if (s->go_fd >= 0)
		return; /* not started yet */
	if (kill(s->child, 0) && errno == ESRCH) {
		s->java_child = false;
		return;
	}
	if (!java_attach__ready(s->child))
		return;
	s->java_child = false;
	java_attach__targets(&s->child, 1);
}

const char *session__java_hint(struct session *s)
{
	static const char flag[] = "+PreserveFramePointer";
	struct collector_stats cs;
	char path[64], *buf;
	size_t len;

	collector__stats(s->col, &cs);
	/* Too few stacks to tell, or most reach their thread's root. */
	if (cs.java_stacks < 50 || cs.java_cut * 4 < cs.java_stacks || !cs.java_cut_pid)
		return NULL;
	if (s->java_hint_pid == cs.java_cut_pid)
		return s->java_hint[0] ? s->java_hint : NULL;
	s->java_hint_pid = cs.java_cut_pid;
	s->java_hint[0] = '\0';
	/* Given on the command line or through the JVM's environment: the cut has another cause. */
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%u/%s", cs.java_cut_pid, i ? "environ" : "cmdline");
		if (file_read(path, 1 << 20, 0, &buf, &len))
			continue;
		for (size_t k = 0; k + sizeof(flag) - 1 <= len; k++)
			if (!memcmp(buf + k, flag, sizeof(flag) - 1)) {
				free(buf);
				return NULL;
			}
		free(buf);
	}
	snprintf(s->java_hint, sizeof(s->java_hint),
		 "java pid %u: %.0f%% of its Java stacks stop in JIT code; start the JVM with "
		 "-XX:+PreserveFramePointer for complete stacks", cs.java_cut_pid,
		 100.0 * (double)cs.java_cut / (double)cs.java_stacks);
	return s->java_hint;
}

int session__poll(struct session *s, int timeout_ms)
{
	struct epoll_event ev[FAMILY_MAX];
	uint64_t deadline;
	int n = 0, m;

	if (s->poll_err)
		return s->poll_err;
	/* The last drain: what is outstanding now is what the leak records queued say. */
	if (timeout_ms == DRAIN_ALL && s->probes && (probes__types(s->probes) & PROBE_LEAK))
		probes__leak_pause(s->probes);
	java_child_tick(s);
	self_cost__tick(&s->cost);
	if (timeout_ms != 0 && timeout_ms != DRAIN_ALL &&
	    epoll_wait(s->epfd, ev, FAMILY_MAX, timeout_ms) < 0) {
		if (errno == EINTR)
			return 0;
		s->poll_err = -errno;
		return s->poll_err;
	}
	/* One budget for every family; the family that drains first changes every call, so a
	 * busy one cannot keep the others from theirs. The last drain (DRAIN_ALL) gives each
	 * family the whole of its own: what is queued at stop is counted, in every family. */
	deadline = clock_mono_ns() + (uint64_t)DRAIN_BUDGET_MS * 1000000;
	for (int i = 0; i < FAMILY_MAX && n >= 0; i++) {
		if (timeout_ms == DRAIN_ALL)
			deadline = clock_mono_ns() + (uint64_t)DRAIN_ALL_MS * 1000000;
		m = family_consume(s, (s->first_family + i) % FAMILY_MAX, deadline);
		n = m < 0 ? m : n + m;
	}
	s->first_family = (s->first_family + 1) % FAMILY_MAX;
	leak_tick(s);
	if (n == -EINTR)
		return 0;
	if (n < 0)
		s->poll_err = n;
	return n;
}

void session__poll_report(const struct session *s)
{
	if (s->poll_err)
		msg_list__add(s->msgs, MSG_ERROR, "stopped reading the probes' ring buffer: %s",
			      strerror(-s->poll_err));
}

bool session__done(struct session *s)
{
	if (s->child > 0) {
		if (waitpid(s->child, NULL, WNOHANG) != s->child)
			return false;
		s->child = -1;
		session__poll(s, DRAIN_ALL); /* the last records */
		return true;
	}
	if (s->o->npids && all_gone(s->o->pids, s->o->npids)) {
		session__poll(s, DRAIN_ALL);
		msg_list__add(s->msgs, MSG_NOTE, "every target process has exited");
		return true;
	}
	return false;
}

void session__sampling(const struct session *s, bool brief, char *buf, size_t len)
{
	struct probe_stats ps;
	size_t n = 0;

	buf[0] = '\0';
	if (!s->probes)
		return;
	probes__stats(s->probes, &ps);
	for (int t = 0; t < STACK_TYPES && n < len; t++) {
		int k = stack_types[t].rate_slot;

		if (k < 0 || !(s->o->types & stack_types[t].probe) ||
		    (!ps.skipped[k] && ps.period[k] <= 1))
			continue;
		if (brief)
			n += snprintf(buf + n, len - n, "%s%s 1/%llu", n ? " " : "", stack_types[t].name,
				      (unsigned long long)(ps.period[k] ? ps.period[k] : 1));
		else
			n += snprintf(buf + n, len - n, "%s%s 1 in %llu now (%llu events left out, "
				      "the rest weighted)", n ? ", " : "", stack_types[t].name,
				      (unsigned long long)(ps.period[k] ? ps.period[k] : 1),
				      (unsigned long long)ps.skipped[k]);
	}
}

/* The summary of the families beside the stacks (the thread timeline has its own, written
 * with its outputs). */
static void families_summary(struct session *s, double secs)
{
	char buf[512];
	uint64_t events, drops;

	if (s->l7) {
		l7_capture__summary(s->l7, secs, buf, sizeof(buf));
		msg_list__add(s->msgs, MSG_NOTE, "%s", buf);
	}
	if (s->sli) {
		sli_collector__counts(s->sli, &events, &drops);
		msg_list__add(s->msgs, MSG_NOTE, "recorded %llu delays in %.1f s; %llu lost (maps full)",
			      (unsigned long long)events, secs, (unsigned long long)drops);
	}
}

/* leak: how the sampler went into running process pid. */
static void leak_injected_note(struct session *s, int pid, const struct leak_inject *li)
{
	char left[96] = "";

	/* Blocks freed through those would stay counted: said. */
	if (li->left)
		snprintf(left, sizeof(left), ", %u left alone (bound to another allocator, or past "
			 "its table)", li->left);
	msg_list__add(s->msgs, MSG_NOTE, "leak: pid %d: in-process sampler (injected: %s, %u "
		      "entries in %u modules%s, one thread held %.1f ms; uprobes on its markers "
		      "only)", pid, LEAK_PRELOAD_LIB, li->entries, li->modules, left, li->held_ms);
}

/* leak: what was sampled and what is tracked, and the targets whose allocator could not be
 * hooked, with the reason. */
static void leak_summary(struct session *s, const struct probe_stats *ps)
{
	uint64_t mean = probes__leak_sample(s->probes);
	struct leak_set_stats ls;
	char why[512];

	leak_set__stats(collector__leak(s->col), &ls);
	if (mean > 1)
		msg_list__add(s->msgs, MSG_NOTE, "leak: %llu allocations sampled of %llu calls (one "
			      "per %llu bytes on average, --leak-sample), %llu dropped (live set or "
			      "ring buffer full); %llu freed", (unsigned long long)ps->leak_sampled,
			      (unsigned long long)ps->leak_calls, (unsigned long long)mean,
			      (unsigned long long)ps->leak_drops, (unsigned long long)ps->leak_frees);
	else
		msg_list__add(s->msgs, MSG_NOTE, "leak: every allocation taken (--leak-sample 1): "
			      "%llu of %llu calls, %llu dropped (live set or ring buffer full); %llu "
			      "freed", (unsigned long long)ps->leak_sampled,
			      (unsigned long long)ps->leak_calls, (unsigned long long)ps->leak_drops,
			      (unsigned long long)ps->leak_frees);
	msg_list__add(s->msgs, MSG_NOTE, "leak: %llu blocks tracked, %.0f bytes estimated "
		      "outstanding (shown once %g s old); %llu allocator files probed (%s)%s",
		      (unsigned long long)ls.blocks, ls.bytes > 0.5 ? ls.bytes : 0.0, s->o->leak_min_age,
		      (unsigned long long)ps->leak_files,
		      probes__leak_session(s->probes)
			      ? "uprobe.session: a return probe for the sampled calls only"
			      : "an entry uprobe and a uretprobe per function",
		      ps->leak_marker_files ? ", and the in-process sampler's markers" : "");
	for (size_t i = 0; i < s->npids; i++) {
		int path = probes__leak_path(s->probes, s->pids[i]);
		const struct leak_injected *inj = leak_injects__find(&s->leak_inj, s->pids[i]);

		if (probes__leak_unhooked(s->probes, s->pids[i], why, sizeof(why)) == 1)
			msg_list__add(s->msgs, MSG_NOTE, "leak: pid %d not hooked: %s", s->pids[i],
				      why);
		else if (path == LEAK_PATH_PRELOAD)
			msg_list__add(s->msgs, MSG_NOTE, "leak: pid %d: in-process sampler (%s "
				      "preloaded, uprobes on its markers only)", s->pids[i],
				      LEAK_PRELOAD_LIB);
		else if (path == LEAK_PATH_INJECTED && inj)
			leak_injected_note(s, s->pids[i], &inj->li);
		else if (path == LEAK_PATH_UPROBES && inj && inj->why[0])
			msg_list__add(s->msgs, MSG_NOTE, "leak: pid %d: uprobes on its allocator (not "
				      "injected: %s)", s->pids[i], inj->why);
		else if (path == LEAK_PATH_UPROBES)
			msg_list__add(s->msgs, MSG_NOTE, "leak: pid %d: uprobes on its allocator%s",
				      s->pids[i], s->pids[i] == s->child_pid && s->leak_lib[0]
						  ? " (it brings its own: the sampler passes its calls on)"
						  : "");
	}
}

void session__cost_sample(struct session *s)
{
	self_cost__sample(&s->cost);
}

size_t session__cost_text(struct session *s, char *buf, size_t len)
{
	self_cost__sample_all(&s->cost);
	return cost__format(&s->cost.model, false, buf, len);
}

/* galatop's cost since the start, one note per line. */
static void cost_summary(struct session *s)
{
	char text[8192], *line, *save = NULL;

	session__cost_text(s, text, sizeof(text));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		msg_list__add(s->msgs, MSG_NOTE, "%s", line);
}

void session__summary(struct session *s, double secs)
{
	char sampling[256];
	struct probe_stats ps;
	struct collector_stats cs;

	families_summary(s, secs);
	cost_summary(s);
	if (!s->probes)
		return;
	probes__stats(s->probes, &ps);
	collector__stats(s->col, &cs);
	msg_list__add(s->msgs, MSG_NOTE,
		"recorded %llu samples in %.1f s; %llu dropped (ring buffer full), "
		"%llu failed stack captures, %llu unknown frames, %llu stacks at the %d-frame "
		"limit",
		(unsigned long long)cs.events, secs, (unsigned long long)ps.drops,
		(unsigned long long)(ps.kstack_fail + ps.ustack_fail),
		(unsigned long long)cs.unknown_frames, (unsigned long long)cs.truncated,
		GT_MAX_STACK);
	if (cs.unwound)
		msg_list__add(s->msgs, MSG_NOTE,
			"unwound %llu user stacks (%.1f us each, %llu replayed from "
			"memory): %llu [truncated] (raise --stack-size), %llu [unwind error]",
			(unsigned long long)cs.unwound, cs.unwind_ns / 1e3 / (double)cs.unwound,
			(unsigned long long)cs.unwind_replays,
			(unsigned long long)cs.unwind_truncated,
			(unsigned long long)cs.unwind_errors);
	if (cs.python_procs)
		msg_list__add(s->msgs, MSG_NOTE,
			"CPython: %llu processes, %llu stacks with Python frames (%.1f us "
			"each to name and merge), %llu frames not named, %llu samples in threads "
			"without a Python state",
			(unsigned long long)cs.python_procs, (unsigned long long)cs.python_stacks,
			cs.python_stacks ? cs.python_ns / 1e3 / (double)cs.python_stacks : 0.0,
			(unsigned long long)cs.python_unnamed, (unsigned long long)ps.py_no_tstate);
	if (cs.python_unsupported)
		msg_list__add(s->msgs, MSG_NOTE, "%llu CPython processes keep native frames only (%s)",
			(unsigned long long)cs.python_unsupported, cs.python_why);
	if (ps.sb_lost)
		msg_list__add(s->msgs, MSG_NOTE, "%llu mapping events lost (side band full): stacks of "
			"processes that exited early may show [unknown]",
			(unsigned long long)ps.sb_lost);
	if (ps.period_refused)
		msg_list__add(s->msgs, MSG_NOTE, "the kernel refused %llu of %llu changes of the oncpu "
			"period: those CPUs sampled at a fixed period (loops may alias)",
			(unsigned long long)ps.period_refused,
			(unsigned long long)(ps.period_refused + ps.period_rearms));
	if (cs.folded)
		msg_list__add(s->msgs, MSG_NOTE, "%llu rare stacks folded into [other] frames "
			"(--max-stacks %zu)", (unsigned long long)cs.folded, s->o->max_stacks);
	if (s->o->types & PROBE_LEAK)
		leak_summary(s, &ps);
	if (s->o->types & PROBE_GROWTH) {
		struct growth_stats gs;

		growth_set__stats(collector__growth(s->col), &gs);
		msg_list__add(s->msgs, MSG_NOTE, "growth: %llu anonymous mappings and %llu unmaps "
			      "recorded; %llu regions, %llu bytes held (mapped, not unmapped)",
			      (unsigned long long)ps.growth_maps, (unsigned long long)ps.growth_unmaps,
			      (unsigned long long)gs.regions, (unsigned long long)gs.bytes);
	}
	session__sampling(s, false, sampling, sizeof(sampling));
	if (sampling[0])
		msg_list__add(s->msgs, MSG_NOTE, "sampled in the kernel past %u events/s per CPU "
			"(--event-rate): %s", s->o->event_rate, sampling);
	if (ps.drops)
		msg_list__add(s->msgs, MSG_NOTE, "hint: lower -F or narrow the targets to avoid drops");
	if (session__java_hint(s))
		msg_list__add(s->msgs, MSG_NOTE, "hint: %s", s->java_hint);
}

/* Waits for the command; one that ignores SIGTERM gets SIGKILL after 3 s. */
static void reap(pid_t child, bool interrupted)
{
	for (int i = 0; interrupted && i < 300; i++) {
		if (waitpid(child, NULL, WNOHANG) != 0)
			return;
		usleep(10000);
	}
	if (interrupted)
		kill(child, SIGKILL);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
}

void session__close(struct session *s, bool interrupted)
{
	char warn[PATH_MAX + 128];

	if (s->sc && s->msgs && sym_cache__warning(s->sc, warn, sizeof(warn)))
		msg_list__add(s->msgs, MSG_WARNING, "warning: %s", warn);
	if (s->go_fd >= 0)
		close(s->go_fd); /* the child reads EOF and exits without running CMD */
	if (s->exec_fd >= 0)
		close(s->exec_fd);
	if (s->child > 0) {
		if (interrupted)
			kill(s->child, SIGTERM);
		reap(s->child, interrupted);
	}
	l7_capture__free(s->l7); /* before the symbol cache it names stacks with */
	leak_inject_stop(s);
	leak_injects__free(&s->leak_inj);
	probes__free(s->probes);
	tl_capture__free(s->tl);
	sli_collector__free(s->sli);
	sli_delayacct_release();
	if (s->have_re)
		regfree(&s->cmdline_re);
	collector__free(s->col);
	ident_cache__free(s->ic);
	sym_cache__free(s->sc);
	java_attach__cleanup();
	frames__free(s->ft);
	strtab__free(s->st);
	free(s->cgroups);
	free(s->cpus);
	self_cost__close(&s->cost);
	if (s->epfd >= 0)
		close(s->epfd);
	memset(s, 0, sizeof(*s));
	s->child = -1;
	s->go_fd = -1;
	s->exec_fd = -1;
	s->epfd = -1;
}
