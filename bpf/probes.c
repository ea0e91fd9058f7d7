/* Loader of bpf/profile.bpf.c: one skeleton, the requested programs picked with autoload,
 * filters set as const volatile rodata before load, target sets filled before attach. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/probes.h"
#include "bpf/drain.h"
#include "bpf/leak.h"
#include "bpf/loadlog.h"
#include "bpf/period_jitter.h"
#include "bpf/targets.h"
#include "bpf/uprobe_lib.h"
#include "bpf/tracefs.h"
#include "model/stack_type.h"
#include "profile.skel.h"
#include "util/cpulist.h"
#include "util/grow.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The stack-type table (model/stack_type.h) mirrors the kernel's record types, probe bits and
 * event-sampling slots. */
#define STACK_TYPE_CHECK(id, name, rec, bit, rate, ...)                                            \
	_Static_assert(GT_EV_##id == (rec) && PROBE_##id == (bit) && GT_RATE_##id == (rate),        \
		       "model/stack_type.h: the " name " line");
STACK_TYPE_TABLE(STACK_TYPE_CHECK)
_Static_assert(STACK_TYPES <= 8 * sizeof(unsigned), "a probe bit per stack type");

#define PROBE_PROC 0x100 /* internal: exec/exit/fork tracepoints */
#define WARNINGS_MAX 4096
#define DEFAULT_RINGBUF (8u << 20)
#define DEFAULT_RINGBUF_DWARF (32u << 20) /* a record carries a stack copy of up to 16 KiB */

struct probes {
	struct gt_profile *skel;
	struct drain *rb;
	struct bpf_link **links; /* the links of every probe but the stack types' */
	size_t nlinks;
	struct bpf_link **type_links[STACK_TYPES]; /* each stack type's, for probes__detach */
	size_t ntype_links[STACK_TYPES];
	probe_event_fn fn;
	void *ctx;
	unsigned types;	 /* PROBE_* that attached */
	unsigned loaded; /* PROBE_* whose programs loaded (attached or not) */
	unsigned lazy;	 /* PROBE_* loaded for probes__attach only */
	unsigned freq;	 /* oncpu: Hz */
	bool fixed_period;   /* oncpu: every period 1/freq (else randomized: jitter) */
	struct period_jitter *jitter; /* oncpu: re-draws the periods; NULL until attached */
	uint8_t *oncpu_cpus; /* oncpu: the CPUs it samples, ncpus flags */
	int ncpus;
	bool pid_filter;
	struct sideband *sb; /* NULL without task_fn or when perf events are refused */
	struct leak_probes *leak; /* the allocator uprobes, while leak is attached */
	uint64_t leak_sample;	  /* mean bytes between samples (1: every allocation) */
	int *leak_pids;		  /* the target processes when only processes are targets */
	size_t nleak_pids;
	bool leak_all;		  /* other kinds of targets (or none): every process is scanned */
	int leak_preload_pid;	  /* the command started with the in-process sampler, 0: none */
	char leak_preload[4096];  /* the sampler's library */
	int *leak_inject;	  /* running processes the sampler is injected into */
	size_t nleak_inject;
	char leak_inject_lib[4096];
	uint64_t lost_user;
	char warnings[WARNINGS_MAX];
	char lazy_warning[512]; /* why a lazy probe did not load */
};

void probe_opts__init(struct probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->types = PROBE_ONCPU;
	o->freq = 99;
	o->kernel_stacks = true;
	o->user_stacks = true;
	o->min_block_us = 1000;
}

static const char *probe_name(unsigned type)
{
	int t = stack_type_of_probe(type);

	return t < 0 ? "exec/exit" : stack_types[t].name;
}

static void add_warning(struct probes *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	loadlog_vwarn(p->warnings, sizeof(p->warnings), fmt, ap);
	va_end(ap);
}

/* The mem probe prefers tp_btf; kernels without btf_trace_page_fault_user (or
 * GALATOP_MEM_CLASSIC_TP=1) get the classic tracepoint, which needs tracefs. */
static bool mem_use_btf(void)
{
	struct btf *btf;
	bool found;

	if (getenv("GALATOP_MEM_CLASSIC_TP"))
		return false;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, "btf_trace_page_fault_user", BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return found;
}

size_t probes_ringbuf_size(size_t want, bool dwarf)
{
	size_t sz = (size_t)sysconf(_SC_PAGESIZE);

	if (!want)
		want = dwarf ? DEFAULT_RINGBUF_DWARF : DEFAULT_RINGBUF;
	while (sz < want && sz < (1ul << 30))
		sz <<= 1;
	return sz;
}

/* The stack copy size the BPF side can take: multiple of 8 within [8, GT_USTACK_MAX]; 0 = none. */
static unsigned ustack_bytes(unsigned want)
{
	if (!want)
		return 0;
	if (want > GT_USTACK_MAX)
		want = GT_USTACK_MAX;
	return want < 8 ? 8 : want & ~7u;
}

static uint64_t leak_mean(const struct probe_opts *o)
{
	return o->leak_sample ? o->leak_sample : LEAK_SAMPLE_DEFAULT;
}

/* The growth probe's programs (bpf/growth.bpf.h): the exits of brk, mmap, munmap, then their
 * entries (attached in this order, so that few calls begin without their exit seen). */
#define GROWTH_PROGS 6
static void growth_progs(struct gt_profile *s, struct bpf_program *out[GROWTH_PROGS])
{
	out[0] = s->progs.gt_gmmap_ret;
	out[1] = s->progs.gt_gmunmap_ret;
	out[2] = s->progs.gt_gbrk_ret;
	out[3] = s->progs.gt_gmmap;
	out[4] = s->progs.gt_gmunmap;
	out[5] = s->progs.gt_gbrk;
}

/* Opens and loads the skeleton with the programs of `types` only, leak's as one uprobe.session
 * program with session; NULL on failure (with a libbpf reason caught, see loadlog.h). */
static struct gt_profile *load_skel_as(const struct probe_opts *o, unsigned types, bool mem_btf,
				       bool session)
{
	struct bpf_program *growth[GROWTH_PROGS];
	struct gt_profile *skel;
	unsigned ustack = o->user_stacks ? ustack_bytes(o->ustack_copy) : 0;
	size_t rbsize;
	int err;

	loadlog_reset();
	skel = gt_profile__open();
	if (!skel)
		return NULL;
	err = bpf_program__set_autoload(skel->progs.gt_oncpu, types & PROBE_ONCPU);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_offcpu, types & PROBE_OFFCPU);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_mem_btf,
					       (types & PROBE_MEM) && mem_btf);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_mem_tp,
					       (types & PROBE_MEM) && !mem_btf);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_leak_entry,
					       (types & PROBE_LEAK) && !session);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_leak_ret,
					       (types & PROBE_LEAK) && !session);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_leak_session,
					       (types & PROBE_LEAK) && session);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_leak_mark, types & PROBE_LEAK);
	err = err ?: bpf_program__set_expected_attach_type(
		skel->progs.gt_leak_session, (enum bpf_attach_type)UPROBE_SESSION_ATTACH_TYPE);
	growth_progs(skel, growth);
	for (int i = 0; i < GROWTH_PROGS; i++)
		err = err ?: bpf_program__set_autoload(growth[i], types & PROBE_GROWTH);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_proc_exec, types & PROBE_PROC);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_proc_exit, types & PROBE_PROC);
	err = err ?: bpf_program__set_autoload(skel->progs.gt_proc_fork,
					       (types & PROBE_PROC) && o->follow_children);
	if (err) {
		gt_profile__destroy(skel);
		errno = -err;
		return NULL;
	}

	TARGETS_SET_RODATA(skel->rodata, o);
	skel->rodata->follow_children = o->follow_children;
	skel->rodata->no_idle = o->no_idle;
	skel->rodata->kernel_stacks = o->kernel_stacks;
	skel->rodata->user_stacks = o->user_stacks;
	skel->rodata->min_block_ns = (o->min_block_us ? o->min_block_us : 1000) * 1000;
	skel->rodata->max_block_ns = o->max_block_us && o->max_block_us < UINT64_MAX / 1000
					 ? o->max_block_us * 1000
					 : UINT64_MAX;
	skel->rodata->state_filter = o->state_filter;
	skel->rodata->ustack_copy = ustack;
	skel->rodata->event_rate = o->event_rate;
	skel->rodata->leak_mean = leak_mean(o);
	leak_sampler_constants(skel->rodata->leak_mean, (uint64_t *)&skel->rodata->leak_mean_ln2_q8,
			       (uint32_t *)skel->rodata->leak_log2_q16);

	rbsize = probes_ringbuf_size(o->ringbuf_bytes, ustack > 0);
	skel->rodata->wakeup_bytes = rbsize / 4;
	err = bpf_map__set_max_entries(skel->maps.gt_events, rbsize);
	err = err ?: bpf_map__set_value_size(skel->maps.gt_offcpu_start,
					     sizeof(struct gt_event) +
						 GT_PY_MAX_FRAMES * sizeof(struct gt_pyframe) +
						 (ustack ? sizeof(struct gt_uregs) + ustack : 0));
	err = err ?: bpf_map__set_max_entries(skel->maps.gt_cpus, libbpf_num_possible_cpus());
	err = err ?: bpf_map__set_max_entries(skel->maps.gt_leak_live,
					      o->leak_max_live ? o->leak_max_live
					      : leak_mean(o) == 1 ? 1u << 20 : 65536);
	err = err ?: targets_size(skel->obj, o);
	err = err ?: gt_profile__load(skel);
	if (err) {
		gt_profile__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* load_skel_as with leak's programs as uprobe.session where the kernel has it (and it was not
 * turned down: --leak-uretprobe), else, or when that does not load, as entry and return
 * uprobes. */
static struct gt_profile *load_skel(const struct probe_opts *o, unsigned types, bool mem_btf)
{
	struct gt_profile *skel = NULL;

	if ((types & PROBE_LEAK) && !o->leak_uretprobe && uprobe_lib_session_supported())
		skel = load_skel_as(o, types, mem_btf, true);
	return skel ? skel : load_skel_as(o, types, mem_btf, false);
}

/* Loads everything wanted; if the verifier or the kernel refuses, finds out which probes are
 * to blame by loading each alone (mem gets a second chance as a classic tracepoint), warns
 * about those and loads the rest. */
static struct gt_profile *load_what_works(struct probes *p, const struct probe_opts *o,
					  unsigned *types, bool mem_btf)
{
	struct gt_profile *skel = load_skel(o, *types, mem_btf);

	if (skel)
		return skel;
	/* Each stack type, then the exec/exit tracepoints. */
	for (int t = 0; t <= STACK_TYPES; t++) {
		unsigned kind = t < STACK_TYPES ? stack_types[t].probe : PROBE_PROC;

		if (!(*types & kind))
			continue;
		skel = load_skel(o, kind, mem_btf);
		if (!skel && kind == PROBE_MEM && mem_btf) {
			mem_btf = false;
			tracefs_ensure();
			skel = load_skel(o, kind, mem_btf);
		}
		if (skel) {
			gt_profile__destroy(skel);
			continue;
		}
		if (kind & p->lazy) /* said if ever asked for (probes__attach) */
			snprintf(p->lazy_warning, sizeof(p->lazy_warning), "%s: cannot load: %s",
				 probe_name(kind), strerror(errno));
		else
			add_warning(p, "%s: cannot load: %s", probe_name(kind), strerror(errno));
		*types &= ~kind;
	}
	return *types ? load_skel(o, *types, mem_btf) : NULL;
}

int probe_links_add(struct bpf_link ***links, size_t *n, struct bpf_link *link)
{
	if (array_resize(links, *n + 1, sizeof(**links))) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	(*links)[(*n)++] = link;
	return 0;
}

static int add_link(struct probes *p, struct bpf_link *link)
{
	return probe_links_add(&p->links, &p->nlinks, link);
}

static int attach_prog(struct probes *p, struct bpf_program *prog)
{
	struct bpf_link *link;

	loadlog_reset();
	link = bpf_program__attach(prog);
	if (!link)
		return -errno;
	return add_link(p, link);
}

/* The CPUs to watch as a calloc'ed array of *ncpus flags: o->cpus (unless all is set), or every
 * online one; NULL with *ncpus <= 0 as -errno. */
static uint8_t *cpu_set(const struct probe_opts *o, bool all, int *ncpus)
{
	uint8_t *cpus;

	*ncpus = libbpf_num_possible_cpus();
	if (*ncpus <= 0)
		return NULL;
	cpus = calloc(*ncpus, sizeof(*cpus));
	if (!cpus) {
		*ncpus = -ENOMEM;
		return NULL;
	}
	if (o->cpus && !all) {
		for (size_t c = 0; c < o->ncpus && c < (size_t)*ncpus; c++)
			cpus[c] = o->cpus[c] != 0;
	} else if (cpulist_online(cpus, *ncpus) <= 0) {
		memset(cpus, 1, *ncpus);
	}
	return cpus;
}

/* Writes the CPU set into the gt_cpus map (every possible CPU has an entry). */
static int fill_cpus(struct probes *p, const uint8_t *cpus, size_t n)
{
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus <= 0)
		return ncpus ? ncpus : -ENODEV;
	for (__u32 c = 0; c < (__u32)ncpus; c++) {
		__u8 on = !cpus || (c < n && cpus[c]);
		int err = bpf_map__update_elem(p->skel->maps.gt_cpus, &c, sizeof(c), &on,
					       sizeof(on), BPF_ANY);

		if (err)
			return err;
	}
	return 0;
}

int probes__set_cpus(struct probes *p, const uint8_t *cpus, size_t n)
{
	bool any = !cpus;

	for (size_t c = 0; c < n && !any; c++)
		any = cpus[c] != 0;
	return any ? fill_cpus(p, cpus, n) : -EINVAL;
}

int probe_attach_cpu_events(struct bpf_program *prog, struct perf_event_attr *attr,
			    const uint8_t *cpus, int ncpus, struct bpf_link ***links, size_t *n,
			    int *fds)
{
	uint8_t *online = NULL;
	int attached = 0, err = -ENODEV;

	if (!cpus) {
		ncpus = libbpf_num_possible_cpus();
		if (ncpus <= 0)
			return ncpus ? ncpus : -ENODEV;
		online = calloc(ncpus, 1);
		if (!online)
			return -ENOMEM;
		if (cpulist_online(online, ncpus) <= 0)
			memset(online, 1, ncpus);
		cpus = online;
	}
	loadlog_reset();
	for (int c = 0; c < ncpus; c++) {
		struct bpf_link *link;
		int fd;

		if (!cpus[c])
			continue;
		fd = syscall(SYS_perf_event_open, attr, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			err = -errno;
			close(fd);
			continue;
		}
		err = probe_links_add(links, n, link);
		if (err)
			break;
		if (fds)
			fds[attached] = fd;
		attached++;
	}
	free(online);
	return attached ? 0 : err;
}

/* One CPU-clock perf event per CPU, each carrying the program; unless fixed_period, their
 * periods are randomized around 1/freq (bpf/period_jitter.h). */
static int attach_oncpu(struct probes *p)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .size = sizeof(attr),
	    .freq = 1,
	    .sample_freq = p->freq,
	};
	uint64_t period_ns = 1000000000ull / p->freq;
	int *fds = calloc(p->ncpus, sizeof(*fds)), err;

	if (!fds)
		return -ENOMEM;
	for (int c = 0; c < p->ncpus; c++)
		fds[c] = -1;
	err = probe_attach_cpu_events(p->skel->progs.gt_oncpu, &attr, p->oncpu_cpus, p->ncpus,
				      &p->links, &p->nlinks, fds);
	if (!err && !p->fixed_period && !p->jitter && !(p->jitter = period_jitter__new(period_ns)))
		add_warning(p, "oncpu: cannot randomize the sampling period (%s): every period is "
			    "1/%u s", strerror(errno), p->freq);
	/* The kernel turns a CPU clock's frequency into a fixed period (checked against
	 * perf_event_max_sample_rate here), which PERF_EVENT_IOC_PERIOD then changes. */
	for (int c = 0; !err && p->jitter && c < p->ncpus && fds[c] >= 0; c++)
		period_jitter__add(p->jitter, fds[c]);
	free(fds);
	return err;
}

int probe_record_check(const void *data, size_t size)
{
	const struct gt_event *e = data;
	const struct gt_uregs *u;
	size_t used;

	if (size < GT_EVENT_HDR_SIZE || e->kstack_len > GT_MAX_STACK ||
	    e->ustack_len > GT_MAX_STACK || e->pystack_len > GT_PY_MAX_FRAMES)
		return -EINVAL;
	used = GT_EVENT_HDR_SIZE + (e->kstack_len + e->ustack_len) * sizeof(__u64) +
	       e->pystack_len * sizeof(struct gt_pyframe);
	if (size < used)
		return -EINVAL;
	if (!(e->flags & GT_EVF_UREGS))
		return 0;
	if (size - used < sizeof(*u))
		return -EINVAL;
	u = gt_event_uregs(e);
	if (u->size > GT_USTACK_MAX || size - used - sizeof(*u) < u->size)
		return -EINVAL;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct probes *p = ctx;

	if (probe_record_check(data, size)) {
		p->lost_user++;
		return 0;
	}
	if (p->sb)
		sideband__until(p->sb, ((const struct gt_event *)data)->ts_ns);
	p->fn(p->ctx, data);
	return 0;
}

/* The allocator uprobes on what the targets map now (more as processes start and exec:
 * probes__leak_scan); an error when no allocator at all could be probed. */
static int attach_leak(struct probes *p)
{
	const char *w;
	struct bpf_program *session = p->skel->progs.gt_leak_session;

	p->leak = leak_probes__new(p->skel->progs.gt_leak_entry, p->skel->progs.gt_leak_ret,
				   bpf_program__autoload(session) ? session : NULL,
				   p->skel->progs.gt_leak_mark, !p->leak_all);
	if (!p->leak)
		return -ENOMEM;
	if (p->leak_preload_pid > 0)
		leak_probes__preload(p->leak, p->leak_preload_pid, p->leak_preload);
	for (size_t i = 0; i < p->nleak_inject; i++)
		leak_probes__inject(p->leak, p->leak_inject[i], p->leak_inject_lib, true);
	probes__leak_scan(p, NULL, 0, false);
	w = leak_probes__warnings(p->leak);
	if (w[0])
		add_warning(p, "%s", w);
	if (!leak_probes__files(p->leak) && !leak_probes__marker_files(p->leak)) {
		add_warning(p, "leak: no allocator (glibc, jemalloc, tcmalloc) to probe in the "
			    "targets");
		leak_probes__free(p->leak);
		p->leak = NULL;
		return -ENOENT;
	}
	return 0;
}

/* Attaches the loaded programs of one probe type (PROBE_ONCPU, _OFFCPU, ...) and adds it to
 * p->types; 0, or -errno with a warning line naming it. */
static int attach_type(struct probes *p, unsigned type)
{
	struct gt_profile *s = p->skel;
	size_t first = p->nlinks;
	int t = stack_type_of_probe(type), err;

	if (t < 0)
		return -EINVAL;
	switch (type) {
	case PROBE_ONCPU:
		err = attach_oncpu(p);
		if (err)
			add_warning(p, "oncpu: cannot open CPU-clock perf events at %u Hz: %s",
				    p->freq, strerror(-err));
		break;
	case PROBE_OFFCPU:
		err = attach_prog(p, s->progs.gt_offcpu);
		if (err)
			add_warning(p, "offcpu: cannot attach sched_switch: %s", strerror(-err));
		break;
	case PROBE_MEM:
		err = attach_prog(p, bpf_program__autoload(s->progs.gt_mem_btf) ? s->progs.gt_mem_btf
									  : s->progs.gt_mem_tp);
		if (err)
			add_warning(p, "mem: cannot attach page_fault_user: %s", strerror(-err));
		break;
	case PROBE_LEAK:
		err = attach_leak(p);
		break;
	case PROBE_GROWTH: {
		struct bpf_program *g[GROWTH_PROGS];

		growth_progs(s, g);
		err = 0;
		for (int i = 0; i < GROWTH_PROGS && !err; i++)
			err = attach_prog(p, g[i]);
		if (err)
			add_warning(p, "growth: cannot attach the brk/mmap/munmap syscall tracepoints: %s",
				    strerror(-err));
		break;
	}
	default:
		return -EINVAL;
	}
	/* The links just made are the type's own, so that probes__detach can take them away. */
	for (size_t i = first; i < p->nlinks; i++)
		if (probe_links_add(&p->type_links[t], &p->ntype_links[t], p->links[i]) && !err)
			err = -ENOMEM;
	p->nlinks = first;
	if (!err)
		p->types |= type;
	return err;
}

/* Attaches the exec/exit (and, following children, fork) tracepoints; a warning if not. */
static void attach_proc(struct probes *p, const struct probe_opts *o)
{
	struct gt_profile *s = p->skel;
	int err;

	err = attach_prog(p, s->progs.gt_proc_exec);
	err = err ?: attach_prog(p, s->progs.gt_proc_exit);
	if (!err && o->follow_children)
		err = attach_prog(p, s->progs.gt_proc_fork);
	if (err)
		add_warning(p, "exec/exit: cannot attach sched_process_*: %s", strerror(-err));
}

/* Mappings of every CPU (not only o->cpus: a process sampled there may have mapped its
 * libraries elsewhere); without them stacks resolve through /proc, as processes live. */
static void open_sideband(struct probes *p, const struct probe_opts *o)
{
	int ncpus;
	uint8_t *cpus;

	cpus = cpu_set(o, true, &ncpus);
	if (cpus)
		p->sb = sideband__open(o->task_fn, p->ctx, 0, cpus, ncpus);
	if (!p->sb)
		add_warning(p, "mappings: cannot open perf side-band events (%s): processes that "
			    "exit before their samples are read may show [unknown]",
			    strerror(cpus ? errno : ENOMEM));
	free(cpus);
}

/* A copy of src[0..n) into *dst (NULL when n is 0), its count into *ndst. 0 or -ENOMEM. */
static int copy_pids(int **dst, size_t *ndst, const int *src, size_t n)
{
	if (!n)
		return 0;
	*dst = malloc(n * sizeof(int));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n * sizeof(int));
	*ndst = n;
	return 0;
}

struct probes *probes__open(const struct probe_opts *o, probe_event_fn fn, void *ctx, char *err,
			    size_t errlen)
{
	unsigned wanted, loadable, stacks = stack_type_probes();
	struct probes *p = NULL;
	struct probe_opts defaults;
	bool mem_btf = true;
	int ret;

	if (!o) {
		probe_opts__init(&defaults);
		o = &defaults;
	}
	wanted = (o->types ? o->types : PROBE_ONCPU) & stacks;
	loadable = (wanted | o->load_types) & stacks;
	if (loader_begin("", err, errlen))
		return NULL;
	if (!wanted || !fn) {
		snprintf(err, errlen, "no probe requested");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->fn = fn;
	p->ctx = ctx;
	p->pid_filter = o->npids || o->follow_children;
	p->leak_sample = leak_mean(o);
	p->leak_all = !o->npids || o->ntids || (o->comm && o->comm[0]) || o->ncgroups;
	if (o->leak_preload_pid > 0 && o->leak_preload) {
		p->leak_preload_pid = o->leak_preload_pid;
		snprintf(p->leak_preload, sizeof(p->leak_preload), "%s", o->leak_preload);
	}
	if ((o->nleak_inject && o->leak_inject_lib &&
	     copy_pids(&p->leak_inject, &p->nleak_inject, o->leak_inject, o->nleak_inject)) ||
	    copy_pids(&p->leak_pids, &p->nleak_pids, o->pids, o->npids)) {
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	if (p->nleak_inject)
		snprintf(p->leak_inject_lib, sizeof(p->leak_inject_lib), "%s", o->leak_inject_lib);
	p->freq = o->freq ? o->freq : 99;
	p->fixed_period = o->fixed_period;
	p->oncpu_cpus = cpu_set(o, o->cpus_switchable, &p->ncpus);
	if (!p->oncpu_cpus) {
		snprintf(err, errlen, "cannot list the CPUs: %s",
			 strerror(p->ncpus ? -p->ncpus : ENODEV));
		goto cleanup;
	}
	if (loadable & PROBE_MEM) {
		mem_btf = mem_use_btf();
		if (!mem_btf)
			tracefs_ensure();
	}
	if (loadable & PROBE_GROWTH)
		tracefs_ensure(); /* classic tracepoints are found there */

	p->lazy = loadable & ~wanted;
	p->loaded = loadable | PROBE_PROC;
	p->skel = load_what_works(p, o, &p->loaded, mem_btf);
	if (!p->skel) {
		snprintf(err, errlen, "cannot load BPF programs: %.*s",
			 (int)strcspn(p->warnings, "\n"),
			 p->warnings[0] ? p->warnings : "unknown error");
		goto cleanup;
	}
	if (targets_fill(p->skel->obj, o)) {
		snprintf(err, errlen, "cannot fill the target maps: %s", strerror(errno));
		goto cleanup;
	}
	ret = fill_cpus(p, o->cpus, o->ncpus);
	if (ret) {
		snprintf(err, errlen, "cannot fill the CPU map: %s", strerror(-ret));
		goto cleanup;
	}
	for_each_stack_type(t)
		if (wanted & p->loaded & stack_types[t].probe)
			attach_type(p, stack_types[t].probe);
	if (p->loaded & PROBE_PROC)
		attach_proc(p, o);
	if (!(p->types & wanted)) {
		snprintf(err, errlen, "no probe could start: %.*s", (int)strcspn(p->warnings, "\n"),
			 p->warnings);
		goto cleanup;
	}
	p->rb = drain__new(bpf_map__fd(p->skel->maps.gt_events), on_record, p);
	if (!p->rb) {
		snprintf(err, errlen, "cannot map the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	if (o->task_fn)
		open_sideband(p, o);
	loadlog_reset();
	return p;

cleanup:
	probes__free(p);
	loadlog_reset();
	return NULL;
}

const char *probes__warnings(const struct probes *p)
{
	return p->warnings;
}

unsigned probes__types(const struct probes *p)
{
	return p->types & stack_type_probes();
}

unsigned probes__loaded(const struct probes *p)
{
	return p->loaded & stack_type_probes();
}

int probes__attach(struct probes *p, unsigned type, char *err, size_t errlen)
{
	const char *w;
	int r;

	if (p->types & type)
		return 0;
	if (!(p->loaded & type)) {
		if (p->lazy_warning[0] && strstr(p->lazy_warning, probe_name(type)) == p->lazy_warning)
			snprintf(err, errlen, "%s", p->lazy_warning);
		else
			snprintf(err, errlen, "%s: not loaded at start", probe_name(type));
		return -ENOENT;
	}
	loadlog_install();
	r = attach_type(p, type);
	loadlog_reset();
	if (r) {
		w = strrchr(p->warnings, '\n');
		w = w && w[1] ? w + 1 : p->warnings;
		snprintf(err, errlen, "%s", w);
	}
	return r;
}

/* Destroys the links of stack type t (the perf events of oncpu with its period re-draws). */
static void detach_type(struct probes *p, int t)
{
	if (stack_types[t].probe == PROBE_LEAK) {
		leak_probes__free(p->leak);
		p->leak = NULL;
	}
	if (stack_types[t].probe == PROBE_ONCPU) {
		period_jitter__free(p->jitter); /* before the perf events it re-arms close */
		p->jitter = NULL;
	}
	for (size_t i = 0; i < p->ntype_links[t]; i++)
		bpf_link__destroy(p->type_links[t][i]);
	p->ntype_links[t] = 0;
	p->types &= ~stack_types[t].probe;
}

int probes__detach(struct probes *p, unsigned type)
{
	int t = stack_type_of_probe(type);

	if (t < 0)
		return -EINVAL;
	if (p->types & type)
		detach_type(p, t);
	return 0;
}

int probes__fd(const struct probes *p)
{
	return drain__fd(p->rb);
}

/* A drain of the ring buffer, waiting up to timeout_ms or (timeout_ms 0) until deadline_ns. */
static int probes_drain(struct probes *p, int timeout_ms, uint64_t deadline_ns)
{
	int n;

	if (p->sb)
		sideband__mark(p->sb);
	n = deadline_ns ? drain__consume(p->rb, deadline_ns) : drain__poll(p->rb, timeout_ms);
	/* Every record taken before the mark has been read: the side band can catch up. */
	if (n >= 0 && !drain__cut(p->rb) && p->sb)
		sideband__flush(p->sb);
	return n;
}

int probes__poll(struct probes *p, int timeout_ms)
{
	return probes_drain(p, timeout_ms, 0);
}

int probes__consume(struct probes *p, uint64_t deadline_ns)
{
	return probes_drain(p, 0, deadline_ns);
}

int probes__add_pid(struct probes *p, int tgid)
{
	if (!p->pid_filter || tgid <= 0)
		return -EINVAL;
	return targets_add_pid(p->skel->obj, tgid);
}

int probes__leak_scan(struct probes *p, const int *pids, size_t n, bool again)
{
	if (!p->leak)
		return 0;
	if (!pids && !p->leak_all) {
		pids = p->leak_pids;
		n = p->nleak_pids;
	}
	return leak_probes__scan(p->leak, pids, n, again);
}

void probes__leak_exit(struct probes *p, int tgid)
{
	if (p->leak)
		leak_probes__forget(p->leak, tgid);
}

int probes__leak_forget(struct probes *p, uint32_t tgid, uint64_t addr)
{
	struct gt_leak_key k = { .tgid = tgid, .addr = addr };

	return bpf_map__delete_elem(p->skel->maps.gt_leak_live, &k, sizeof(k), 0);
}

void probes__leak_pause(struct probes *p)
{
	p->skel->bss->leak_paused = true;
}

uint64_t probes__leak_sample(const struct probes *p)
{
	return p->leak_sample;
}

bool probes__leak_session(const struct probes *p)
{
	return p->skel && bpf_program__autoload(p->skel->progs.gt_leak_session);
}

int probes__leak_uninject(struct probes *p, int pid)
{
	int err;

	if (!p->leak)
		return -ENOENT;
	err = leak_probes__inject(p->leak, pid, NULL, false);
	if (!err)
		leak_probes__scan(p->leak, &pid, 1, true);
	return err;
}

int probes__leak_path(const struct probes *p, int pid)
{
	return p->leak ? (int)leak_probes__path(p->leak, pid) : LEAK_PATH_UNKNOWN;
}

int probes__leak_unhooked(const struct probes *p, int pid, char *why, size_t len)
{
	return p->leak ? leak_probes__unhooked(p->leak, pid, why, len) : -ENOENT;
}

int probes__add_python(struct probes *p, int tgid, const struct gt_py_proc *pp)
{
	__u32 key = (__u32)tgid;

	if (tgid <= 0)
		return -EINVAL;
	return bpf_map__update_elem(p->skel->maps.gt_py_procs, &key, sizeof(key), pp, sizeof(*pp),
				    BPF_ANY);
}

void probes__stats(const struct probes *p, struct probe_stats *st)
{
	int ncpus = libbpf_num_possible_cpus();
	struct gt_counters *c;
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	st->lost_user = p->lost_user;
	st->leak_files = p->leak ? leak_probes__files(p->leak) : 0;
	st->leak_marker_files = p->leak ? leak_probes__marker_files(p->leak) : 0;
	if (p->jitter)
		period_jitter__stats(p->jitter, &st->period_rearms, &st->period_refused);
	if (p->sb) {
		st->sb_events = sideband__events(p->sb);
		st->sb_lost = sideband__lost(p->sb);
	}
	if (ncpus <= 0)
		return;
	c = calloc(ncpus, sizeof(*c));
	if (!c)
		return;
	if (!bpf_map__lookup_elem(p->skel->maps.gt_counters, &zero, sizeof(zero), c,
				  ncpus * sizeof(*c), 0)) {
		for (int i = 0; i < ncpus; i++) {
			st->total += c[i].total;
			st->samples += c[i].samples;
			st->drops += c[i].drops;
			st->kstack_fail += c[i].kstack_fail;
			st->ustack_fail += c[i].ustack_fail;
			st->filtered += c[i].filtered;
			st->py_walks += c[i].py_walks;
			st->py_no_tstate += c[i].py_no_tstate;
			st->leak_calls += c[i].leak_calls;
			st->leak_sampled += c[i].leak_sampled;
			st->leak_frees += c[i].leak_frees;
			st->leak_drops += c[i].leak_drops;
			st->growth_maps += c[i].growth_maps;
			st->growth_unmaps += c[i].growth_unmaps;
			for (int k = 0; k < 2; k++) {
				st->skipped[k] += c[i].skipped[k];
				if (c[i].period[k] > st->period[k])
					st->period[k] = c[i].period[k];
			}
		}
	}
	free(c);
}

void probes__free(struct probes *p)
{
	if (!p)
		return;
	drain__free(p->rb);
	sideband__free(p->sb);
	for (int t = 0; t < STACK_TYPES; t++) {
		detach_type(p, t);
		free(p->type_links[t]);
	}
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	gt_profile__destroy(p->skel);
	free(p->oncpu_cpus);
	free(p->leak_pids);
	free(p->leak_inject);
	free(p);
}
