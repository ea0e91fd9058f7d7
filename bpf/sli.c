/* Loader of the SLI probes; see sli.h. */
#include "sli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loadlog.h"
#include "sli.skel.h"
#include "symbols/hmap.h"
#include "util/grow.h"
#include "targets.h"

#define DELAYACCT_SYSCTL "/proc/sys/kernel/task_delayacct"
#define SWAPIN_ENV "GALATOP_SLI_SWAPIN" /* "faults": the fallback even with delay accounting */
#define BATCH 1024

struct sli_probes {
	struct gt_sli *skel;
	struct bpf_link **links;
	size_t nlinks;
	unsigned have;	     /* 1 << GT_SLI_* that run */
	int delayacct_saved; /* the sysctl's value before galatop changed it, -1 if unchanged */
	bool delayacct;	     /* swap-in delays come from delay accounting */
	bool swapin_faults;  /* ... or from major faults on swap-backed memory */
	bool swapin_forced;  /* the faults by SWAPIN_ENV */
	struct hmap *threads; /* tid -> struct gt_sli_thread, as last read */
	struct hmap *rows;    /* struct gt_sli_hkey -> struct gt_sli_hrow, as last read */
	char warnings[1024];
};

static void warn(struct sli_probes *p, const char *fmt, ...)
{
	size_t len = strlen(p->warnings);
	va_list ap;

	if (len + 2 >= sizeof(p->warnings))
		return;
	va_start(ap, fmt);
	vsnprintf(p->warnings + len, sizeof(p->warnings) - len - 1, fmt, ap);
	va_end(ap);
	strcat(p->warnings, "\n");
}

static int read_sysctl(const char *path)
{
	char buf[16] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

static int write_sysctl(const char *path, int v)
{
	char buf[16];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n, ret = 0;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", v);
	if (write(fd, buf, (size_t)n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/* One hook: its program, the kernel tracepoint it needs, and the SLIs it serves. */
struct hook {
	const char *tp;
	unsigned slis;
};

#define CPU_SLIS                                                                                   \
	(1u << GT_SLI_CPU_WAIT | 1u << GT_SLI_CPU_RUNDELAY | 1u << GT_SLI_CPU_SLEEP |             \
	 1u << GT_SLI_CPU_BLOCK | 1u << GT_SLI_CPU_IOWAIT | 1u << GT_SLI_MEM_SWAPIN)

static bool have_tp(const struct btf *btf, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

/* The programs of the skeleton with their tracepoints, in one table. */
static size_t hooks_of(struct gt_sli *s, struct bpf_program **progs, struct hook *hooks)
{
	size_t n = 0;
#define HOOK(prog, name, mask)                                                                    \
	do {                                                                                       \
		progs[n] = s->progs.prog;                                                          \
		hooks[n++] = (struct hook){ name, mask };                                          \
	} while (0)
	HOOK(gt_sli_switch, "sched_switch", CPU_SLIS);
	HOOK(gt_sli_sys_enter, "sys_enter", 1u << GT_SLI_CPU_LONGSYS);
	HOOK(gt_sli_sys_exit, "sys_exit", 1u << GT_SLI_CPU_LONGSYS);
	HOOK(gt_sli_dreclaim_begin, "mm_vmscan_direct_reclaim_begin", 1u << GT_SLI_MEM_RECLAIM);
	HOOK(gt_sli_dreclaim_end, "mm_vmscan_direct_reclaim_end", 1u << GT_SLI_MEM_RECLAIM);
	HOOK(gt_sli_mreclaim_begin, "mm_vmscan_memcg_reclaim_begin", 1u << GT_SLI_MEM_RECLAIM);
	HOOK(gt_sli_mreclaim_end, "mm_vmscan_memcg_reclaim_end", 1u << GT_SLI_MEM_RECLAIM);
	HOOK(gt_sli_compact_begin, "mm_compaction_begin", 1u << GT_SLI_MEM_COMPACT);
	HOOK(gt_sli_compact_end, "mm_compaction_end", 1u << GT_SLI_MEM_COMPACT);
	HOOK(gt_sli_rq_insert, "block_rq_insert", 1u << GT_SLI_BIO_LATENCY);
	HOOK(gt_sli_rq_issue, "block_rq_issue", 1u << GT_SLI_BIO_LATENCY);
	HOOK(gt_sli_rq_complete, "block_rq_complete", 1u << GT_SLI_BIO_LATENCY);
	HOOK(gt_sli_exit, "sched_process_exit", 0);
	HOOK(gt_sli_exec, "sched_process_exec", 0);
	HOOK(gt_sli_fork, "sched_process_fork", 0);
#undef HOOK
	return n;
}

#define MAX_HOOKS 24

/* Delay accounting turned on ahead of the probes (sli_delayacct_early): the sysctl's value to
 * restore, which the next sli_probes__open takes over; -1 when none. */
static int early_saved = -1;

void sli_delayacct_early(void)
{
	const char *env = getenv(SWAPIN_ENV);

	if (early_saved >= 0 || (env && !strcmp(env, "faults")))
		return;
	if (read_sysctl(DELAYACCT_SYSCTL) == 0 && write_sysctl(DELAYACCT_SYSCTL, 1) == 0)
		early_saved = 0;
}

void sli_delayacct_release(void)
{
	if (early_saved >= 0)
		write_sysctl(DELAYACCT_SYSCTL, early_saved);
	early_saved = -1;
}

/* Where mem_swapin will come from: delay accounting when it is on or galatop may turn it on
 * (want), else (or with GALATOP_SLI_SWAPIN=faults) major faults, p->swapin_faults. */
static void setup_swapin(struct sli_probes *p, bool want)
{
	const char *env = getenv(SWAPIN_ENV);
	int cur;

	p->delayacct_saved = -1;
	if (env && !strcmp(env, "faults")) {
		p->swapin_faults = p->swapin_forced = true;
		return;
	}
	cur = read_sysctl(DELAYACCT_SYSCTL);
	if (cur > 0) {
		p->delayacct = true;
		p->delayacct_saved = early_saved; /* restored at close when galatop turned it on */
		early_saved = -1;
	} else if (cur == 0 && want && write_sysctl(DELAYACCT_SYSCTL, 1) == 0) {
		p->delayacct = true;
		p->delayacct_saved = 0;
	} else {
		p->swapin_faults = true;
	}
}

/* The fallback's hooks: page fault entries (tracepoints) and major fault ends (a software perf
 * event on every CPU, each fault counted). false, with a warning, when one is missing. */
static bool attach_swapin_faults(struct sli_probes *p)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	    .size = sizeof(attr),
	    .sample_period = 1,
	};
	struct bpf_program *tps[] = { p->skel->progs.gt_sli_fault_user,
				      p->skel->progs.gt_sli_fault_kernel };
	int ret;

	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		struct bpf_link *l = bpf_program__attach(tps[i]);

		if (!l || probe_links_add(&p->links, &p->nlinks, l)) {
			warn(p, "mem_swapin: not measured: cannot attach %s: %s",
			     bpf_program__name(tps[i]), strerror(errno));
			return false;
		}
	}
	ret = probe_attach_cpu_events(p->skel->progs.gt_sli_majfault, &attr, NULL, 0, &p->links,
				      &p->nlinks, NULL);
	if (ret) {
		warn(p, "mem_swapin: not measured: cannot count major page faults: %s",
		     strerror(-ret));
		return false;
	}
	return true;
}

struct sli_probes *sli_probes__open(const struct probe_opts *o, unsigned want,
				    uint64_t longsys_ns, bool delayacct, char *err, size_t errlen)
{
	struct bpf_program *progs[MAX_HOOKS];
	struct hook hooks[MAX_HOOKS];
	struct probe_opts none;
	struct sli_probes *p;
	struct btf *btf;
	size_t n;
	int ret;

	if (loader_begin("", err, errlen))
		return NULL;
	if (!o) {
		probe_opts__init(&none);
		o = &none;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->threads = hmap__new()) || !(p->rows = hmap__new())) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	want = want ? want & ((1u << GT_SLI_MAX) - 1) : (1u << GT_SLI_MAX) - 1;
	if (want & 1u << GT_SLI_MEM_SWAPIN)
		setup_swapin(p, delayacct);
	p->skel = gt_sli__open();
	if (!p->skel) {
		snprintf(err, errlen, "cannot open the SLI probes: %s", strerror(errno));
		goto fail;
	}
	TARGETS_SET_RODATA(p->skel->rodata, o);
	p->skel->rodata->longsys_ns = longsys_ns ? longsys_ns : 10000000;
	p->skel->rodata->longsys_on = want & 1u << GT_SLI_CPU_LONGSYS;
	p->skel->rodata->swapin_delayacct = p->delayacct;
	p->skel->rodata->swapin_faults = p->swapin_faults;
	p->skel->rodata->follow_children = o->follow_children;
	btf = btf__load_vmlinux_btf();
	n = hooks_of(p->skel, progs, hooks);
	ret = o->follow_children ? 0 : bpf_program__set_autoload(p->skel->progs.gt_sli_fork, false);
	for (size_t i = 0; i < n && !ret; i++)
		if (hooks[i].slis && !(hooks[i].slis & want))
			ret = bpf_program__set_autoload(progs[i], false); /* not asked for */
		else if (bpf_program__autoload(progs[i]) && !have_tp(btf, hooks[i].tp)) {
			ret = bpf_program__set_autoload(progs[i], false);
			warn(p, "%s: the kernel has no tracepoint %s", hooks[i].tp, hooks[i].tp);
		}
	if (p->swapin_faults && !have_tp(btf, "page_fault_user")) {
		warn(p, "mem_swapin: not measured: delay accounting is off and the kernel has no "
			"tracepoint page_fault_user");
		p->swapin_faults = false;
	}
	if (!p->swapin_faults) {
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_sli_fault_user, false);
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_sli_fault_kernel, false);
		ret = ret ?: bpf_program__set_autoload(p->skel->progs.gt_sli_majfault, false);
	}
	btf__free(btf);
	ret = ret ?: targets_size(p->skel->obj, o);
	ret = ret ?: gt_sli__load(p->skel);
	ret = ret ?: targets_fill(p->skel->obj, o);
	if (ret) {
		snprintf(err, errlen, "cannot load the SLI probes: %s", strerror(-ret));
		goto fail;
	}
	/* An SLI runs when all of its hooks attached. */
	p->have = want;
	for (size_t i = 0; i < n; i++) {
		struct bpf_link *l = NULL;

		if (bpf_program__autoload(progs[i]))
			l = bpf_program__attach(progs[i]);
		if (!l) {
			if (bpf_program__autoload(progs[i]))
				warn(p, "%s: cannot attach: %s", hooks[i].tp, strerror(errno));
			p->have &= ~hooks[i].slis;
			continue;
		}
		if (probe_links_add(&p->links, &p->nlinks, l)) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (p->swapin_faults && (p->have & 1u << GT_SLI_MEM_SWAPIN))
		p->swapin_faults = attach_swapin_faults(p);
	if (!p->delayacct && !p->swapin_faults)
		p->have &= ~(1u << GT_SLI_MEM_SWAPIN);
	if (!p->have) {
		snprintf(err, errlen, "no SLI probe could start: %.*s",
			 (int)strcspn(p->warnings, "\n"), p->warnings);
		goto fail;
	}
	return p;
fail:
	sli_probes__free(p);
	return NULL;
}

const char *sli_probes__warnings(const struct sli_probes *p)
{
	return p->warnings;
}

unsigned sli_probes__have(const struct sli_probes *p)
{
	return p->have;
}

const char *sli_probes__swapin_source(const struct sli_probes *p)
{
	if (p->swapin_faults)
		return p->swapin_forced ? "major faults on swap (" SWAPIN_ENV "=faults)"
					: "major faults on swap (delay accounting off)";
	if (!p->delayacct)
		return NULL;
	/* The kernel gives a task its delay record at fork, when delay accounting is on. */
	return p->delayacct_saved == 0 ? "delayacct (turned on by galatop: not for tasks started before)"
				       : "delayacct";
}

/* Calls fn on every entry of map fd, BATCH at a time (hash maps support batch lookups since
 * 5.6; an entry is read once even when the map changes meanwhile, new entries may be missed
 * until the next read). */
static int each_entry(int fd, size_t ksz, size_t vsz,
		      void (*fn)(void *arg, const void *key, const void *val), void *arg)
{
	char *keys = malloc(BATCH * ksz), *vals = malloc(BATCH * vsz);
	__u32 in = 0, out = 0;
	void *inp = NULL;
	int ret = 0;

	if (!keys || !vals) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		__u32 count = BATCH;
		int r = bpf_map_lookup_batch(fd, inp, &out, keys, vals, &count, NULL);
		int e = r ? errno : 0;

		for (__u32 i = 0; i < count; i++)
			fn(arg, keys + i * ksz, vals + i * vsz);
		if (r && e == ENOENT)
			break;
		if (r) {
			ret = -e;
			break;
		}
		in = out;
		inp = &in;
	}
out:
	free(keys);
	free(vals);
	return ret;
}

struct read_ctx {
	struct sli_probes *p;
	const struct sli_read_ops *ops;
	void *ctx;
	struct hmap *live; /* tgids with a live thread entry */
	struct hmap *gone; /* tgids looked up: 1 gone, 2 alive (in the pointer) */
	uint32_t *dead_tids;
	size_t ndead, capdead;
	struct gt_sli_hkey *drop;
	size_t ndrop, capdrop;
	int err;
};

/* cpu_rundelay is the growth of sched_info.run_delay, which the scheduler adds each wait to at
 * the switch-in that ends it, where the probe reads cpu_wait: the same waits, so the kernel
 * charges them once and they are reported under both names. */
static void same_as_wait(const struct sli_probes *p, __u64 *ns, __u64 *count)
{
	if (!(p->have & 1u << GT_SLI_CPU_RUNDELAY))
		return;
	ns[GT_SLI_CPU_RUNDELAY] = ns[GT_SLI_CPU_WAIT];
	count[GT_SLI_CPU_RUNDELAY] = count[GT_SLI_CPU_WAIT];
}

static void on_thread(void *arg, const void *key, const void *val)
{
	struct read_ctx *c = arg;
	uint32_t tid = *(const uint32_t *)key;
	const struct gt_sli_thread *now = val;
	struct gt_sli_thread *prev = hmap__get(c->p->threads, &tid, sizeof(tid)), d;
	bool grew = false;

	if (!prev) {
		prev = calloc(1, sizeof(*prev));
		if (!prev || !hmap__put(c->p->threads, &tid, sizeof(tid), prev)) {
			free(prev);
			c->err = -ENOMEM;
			return;
		}
	}
	d = *now;
	for (int i = 0; i < GT_SLI_MAX; i++) {
		d.ns[i] = now->ns[i] - prev->ns[i];
		d.count[i] = now->count[i] - prev->count[i];
		grew |= d.count[i] > 0;
	}
	same_as_wait(c->p, d.ns, d.count);
	*prev = *now;
	if ((grew || now->dead) && c->ops->thread)
		c->ops->thread(c->ctx, tid, &d, now->dead);
	if (now->dead) {
		if (ARRAY_GROW(c->dead_tids, c->capdead, c->ndead + 1)) {
			c->err = -ENOMEM;
			return;
		}
		c->dead_tids[c->ndead++] = tid;
	} else if (!hmap__put(c->live, &now->tgid, sizeof(now->tgid), (void *)1)) {
		c->err = -ENOMEM;
	}
}

/* Whether process tgid is gone (asked once per read). */
static bool tgid_gone(struct read_ctx *c, uint32_t tgid)
{
	uintptr_t v;

	if (hmap__get(c->live, &tgid, sizeof(tgid)))
		return false;
	v = (uintptr_t)hmap__get(c->gone, &tgid, sizeof(tgid));
	if (!v) {
		v = kill((pid_t)tgid, 0) && errno == ESRCH ? 1 : 2;
		hmap__put(c->gone, &tgid, sizeof(tgid), (void *)v);
	}
	return v == 1;
}

static void on_row(void *arg, const void *key, const void *val)
{
	struct read_ctx *c = arg;
	const struct gt_sli_hkey *k = key;
	const struct gt_sli_hrow *now = val;
	struct gt_sli_hrow *prev = hmap__get(c->p->rows, k, sizeof(*k));

	if (!prev) {
		prev = calloc(1, sizeof(*prev));
		if (!prev || !hmap__put(c->p->rows, k, sizeof(*k), prev)) {
			free(prev);
			c->err = -ENOMEM;
			return;
		}
	}
	for (unsigned i = 0; i < GT_SLI_HSUB; i++) {
		if (now->n[i] > prev->n[i] && c->ops->bucket) {
			c->ops->bucket(c->ctx, k->tgid, k->sli, k->row * GT_SLI_HSUB + i,
				       now->n[i] - prev->n[i]);
			if (k->sli == GT_SLI_CPU_WAIT && (c->p->have & 1u << GT_SLI_CPU_RUNDELAY))
				c->ops->bucket(c->ctx, k->tgid, GT_SLI_CPU_RUNDELAY,
					       k->row * GT_SLI_HSUB + i, now->n[i] - prev->n[i]);
		}
		prev->n[i] = now->n[i];
	}
	if (tgid_gone(c, k->tgid)) {
		if (ARRAY_GROW(c->drop, c->capdrop, c->ndrop + 1)) {
			c->err = -ENOMEM;
			return;
		}
		c->drop[c->ndrop++] = *k;
	}
}

int sli_probes__read(struct sli_probes *p, const struct sli_read_ops *ops, void *ctx)
{
	struct read_ctx c = { .p = p, .ops = ops, .ctx = ctx };
	int tfd = bpf_map__fd(p->skel->maps.gt_sli_threads);
	int hfd = bpf_map__fd(p->skel->maps.gt_sli_hist);
	int ret;

	c.live = hmap__new();
	c.gone = hmap__new();
	if (!c.live || !c.gone) {
		ret = -ENOMEM;
		goto out;
	}
	ret = each_entry(tfd, sizeof(uint32_t), sizeof(struct gt_sli_thread), on_thread, &c);
	ret = ret ?: each_entry(hfd, sizeof(struct gt_sli_hkey), sizeof(struct gt_sli_hrow), on_row, &c);
	ret = ret ?: c.err;
	/* Exited threads and gone processes were reported for the last time. */
	for (size_t i = 0; i < c.ndead; i++) {
		bpf_map_delete_elem(tfd, &c.dead_tids[i]);
		free(hmap__del(p->threads, &c.dead_tids[i], sizeof(uint32_t)));
	}
	for (size_t i = 0; i < c.ndrop; i++) {
		bpf_map_delete_elem(hfd, &c.drop[i]);
		free(hmap__del(p->rows, &c.drop[i], sizeof(c.drop[i])));
	}
out:
	hmap__free(c.live);
	hmap__free(c.gone);
	free(c.dead_tids);
	free(c.drop);
	return ret;
}

int sli_probes__add_pid(struct sli_probes *p, int tgid)
{
	if (!p->skel->rodata->filter_pids_enabled)
		return -EINVAL;
	return targets_add_pid(p->skel->obj, tgid);
}

void sli_probes__counts(const struct sli_probes *p, uint64_t *events, uint64_t *drops)
{
	int ncpus = libbpf_num_possible_cpus();
	struct gt_sli_counters *c;
	__u32 zero = 0;

	*events = *drops = 0;
	if (ncpus <= 0)
		return;
	c = calloc((size_t)ncpus, sizeof(*c));
	if (c && !bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.gt_sli_counters), &zero, c))
		for (int i = 0; i < ncpus; i++) {
			*events += c[i].events;
			*drops += c[i].drops;
		}
	free(c);
}

static void free_val(const void *key, size_t len, void *val, void *arg)
{
	free(val);
}

void sli_probes__free(struct sli_probes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	gt_sli__destroy(p->skel);
	if (p->delayacct_saved >= 0)
		write_sysctl(DELAYACCT_SYSCTL, p->delayacct_saved);
	if (p->threads)
		hmap__each(p->threads, free_val, NULL);
	if (p->rows)
		hmap__each(p->rows, free_val, NULL);
	hmap__free(p->threads);
	hmap__free(p->rows);
	free(p);
}
