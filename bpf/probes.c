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
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/probes.h"
#include "profile.skel.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define PROBE_PROC 0x100 /* internal: exec/exit/fork tracepoints */
#define WARNINGS_MAX 4096
#define DEFAULT_RINGBUF (8u << 20)
#define DEFAULT_RINGBUF_DWARF (32u << 20) /* a record carries a stack copy of up to 16 KiB */
#define PID_HEADROOM 1024    /* room for probes__add_pid */
#define FOLLOW_HEADROOM 8192 /* room for followed children */
#define TRACEFS "/sys/kernel/tracing"

struct probes {
	struct gt_profile *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	size_t nlinks;
	probe_event_fn fn;
	void *ctx;
	unsigned types; /* PROBE_* that attached */
	bool pid_filter;
	uint64_t lost_user;
	char warnings[WARNINGS_MAX];
};

/* The first libbpf warning since the last reset: the reason quoted in our warning lines. */
static __thread char libbpf_reason[256];

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	const char *s = line;

	if (level != LIBBPF_WARN || libbpf_reason[0])
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (!strncmp(s, "libbpf: ", 8))
		s += 8;
	snprintf(libbpf_reason, sizeof(libbpf_reason), "%.*s", (int)strcspn(s, "\n"), s);
	return 0;
}

void probe_opts__init(struct probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->types = PROBE_ONCPU;
	o->freq = 99;
	o->cpu = -1;
	o->kernel_stacks = true;
	o->user_stacks = true;
	o->min_block_us = 1000;
}

static const char *probe_name(unsigned type)
{
	switch (type) {
	case PROBE_ONCPU:
		return "oncpu";
	case PROBE_OFFCPU:
		return "offcpu";
	case PROBE_MEM:
		return "mem";
	default:
		return "exec/exit";
	}
}

static void add_warning(struct probes *p, const char *fmt, ...)
{
	size_t len = strlen(p->warnings);
	va_list ap;

	if (len + 2 >= sizeof(p->warnings))
		return;
	va_start(ap, fmt);
	vsnprintf(p->warnings + len, sizeof(p->warnings) - len - 1, fmt, ap);
	va_end(ap);
	len = strlen(p->warnings);
	if (libbpf_reason[0])
		snprintf(p->warnings + len, sizeof(p->warnings) - len - 1, " (libbpf: %s)",
			 libbpf_reason);
	strcat(p->warnings, "\n");
	libbpf_reason[0] = 0;
}

/* Root, or CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN) in the effective set. */
static bool privileged(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {0};
	uint64_t eff;

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	if (eff & (1ull << CAP_SYS_ADMIN))
		return true;
	return (eff & (1ull << CAP_BPF)) && (eff & (1ull << CAP_PERFMON));
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

static void mount_tracefs(void)
{
	if (access(TRACEFS "/events", F_OK) && access("/sys/kernel/debug/tracing/events", F_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
}

static size_t ringbuf_size(size_t want, bool dwarf)
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

/* Opens and loads the skeleton with the programs of `types` only; NULL on failure (with
 * libbpf_reason set). */
static struct gt_profile *load_skel(const struct probe_opts *o, unsigned types, bool mem_btf)
{
	struct gt_profile *skel;
	bool pids = o->npids || o->follow_children;
	size_t npids =
	    o->npids + (pids ? PID_HEADROOM : 0) + (o->follow_children ? FOLLOW_HEADROOM : 0);
	unsigned ustack = o->user_stacks ? ustack_bytes(o->ustack_copy) : 0;
	size_t rbsize;
	int err;

	libbpf_reason[0] = 0;
	skel = gt_profile__open();
	if (!skel)
		return NULL;
	bpf_program__set_autoload(skel->progs.gt_oncpu, types & PROBE_ONCPU);
	bpf_program__set_autoload(skel->progs.gt_offcpu, types & PROBE_OFFCPU);
	bpf_program__set_autoload(skel->progs.gt_mem_btf, (types & PROBE_MEM) && mem_btf);
	bpf_program__set_autoload(skel->progs.gt_mem_tp, (types & PROBE_MEM) && !mem_btf);
	bpf_program__set_autoload(skel->progs.gt_proc_exec, types & PROBE_PROC);
	bpf_program__set_autoload(skel->progs.gt_proc_exit, types & PROBE_PROC);
	bpf_program__set_autoload(skel->progs.gt_proc_fork,
				  (types & PROBE_PROC) && o->follow_children);

	skel->rodata->filter_pids_enabled = pids;
	skel->rodata->filter_tids_enabled = o->ntids > 0;
	skel->rodata->filter_cgroups_enabled = o->ncgroups > 0;
	if (o->comm && o->comm[0]) {
		skel->rodata->filter_comm_enabled = true;
		strncpy((char *)skel->rodata->target_comm, o->comm, GT_COMM_LEN - 1);
	}
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

	rbsize = ringbuf_size(o->ringbuf_bytes, ustack > 0);
	skel->rodata->wakeup_bytes = rbsize / 4;
	err = bpf_map__set_max_entries(skel->maps.gt_events, rbsize);
	err = err ?: bpf_map__set_value_size(skel->maps.gt_offcpu_start,
					     sizeof(struct gt_event) +
						 (ustack ? sizeof(struct gt_uregs) + ustack : 0));
	err = err ?: bpf_map__set_max_entries(skel->maps.gt_pids, npids ? npids : 1);
	err = err ?: bpf_map__set_max_entries(skel->maps.gt_tids, o->ntids ? o->ntids : 1);
	err = err ?: bpf_map__set_max_entries(skel->maps.gt_cgroups, o->ncgroups ? o->ncgroups : 1);
	err = err ?: gt_profile__load(skel);
	if (err) {
		gt_profile__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* Loads everything wanted; if the verifier or the kernel refuses, finds out which probes are
 * to blame by loading each alone (mem gets a second chance as a classic tracepoint), warns
 * about those and loads the rest. */
static struct gt_profile *load_what_works(struct probes *p, const struct probe_opts *o,
					  unsigned *types, bool mem_btf)
{
	const unsigned kinds[] = {PROBE_ONCPU, PROBE_OFFCPU, PROBE_MEM, PROBE_PROC};
	struct gt_profile *skel = load_skel(o, *types, mem_btf);

	if (skel)
		return skel;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(*types & kinds[i]))
			continue;
		skel = load_skel(o, kinds[i], mem_btf);
		if (!skel && kinds[i] == PROBE_MEM && mem_btf) {
			mem_btf = false;
			mount_tracefs();
			skel = load_skel(o, kinds[i], mem_btf);
		}
		if (skel) {
			gt_profile__destroy(skel);
			continue;
		}
		add_warning(p, "%s: cannot load: %s", probe_name(kinds[i]), strerror(errno));
		*types &= ~kinds[i];
	}
	return *types ? load_skel(o, *types, mem_btf) : NULL;
}

static int add_link(struct probes *p, struct bpf_link *link)
{
	struct bpf_link **links = realloc(p->links, (p->nlinks + 1) * sizeof(*links));

	if (!links) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	p->links = links;
	p->links[p->nlinks++] = link;
	return 0;
}

static int attach_prog(struct probes *p, struct bpf_program *prog)
{
	struct bpf_link *link;

	libbpf_reason[0] = 0;
	link = bpf_program__attach(prog);
	if (!link)
		return -errno;
	return add_link(p, link);
}

/* Fills bits[] with the online CPUs from /sys; returns how many, or -errno. */
static int online_cpus(bool *bits, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int a, b, n = 0;
	char sep;

	if (!f)
		return -errno;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%d", &b) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		for (int c = a; c <= b && c < max; c++, n++)
			bits[c] = true;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n;
}

/* One CPU-clock perf event per CPU, each carrying the program; counts as attached if any CPU
 * did. The link owns the perf fd. */
static int attach_oncpu(struct probes *p, const struct probe_opts *o)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .size = sizeof(attr),
	    .freq = 1,
	    .sample_freq = o->freq ? o->freq : 99,
	};
	int ncpus = libbpf_num_possible_cpus(), attached = 0, err = -ENODEV;
	bool *cpus;

	libbpf_reason[0] = 0;
	if (ncpus <= 0)
		return ncpus ? ncpus : -ENODEV;
	cpus = calloc(ncpus, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	if (o->cpu >= 0) {
		if (o->cpu < ncpus)
			cpus[o->cpu] = true;
	} else if (online_cpus(cpus, ncpus) <= 0) {
		for (int c = 0; c < ncpus; c++)
			cpus[c] = true;
	}
	for (int c = 0; c < ncpus; c++) {
		struct bpf_link *link;
		int fd;

		if (!cpus[c])
			continue;
		fd = syscall(SYS_perf_event_open, &attr, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		link = bpf_program__attach_perf_event(p->skel->progs.gt_oncpu, fd);
		if (!link) {
			err = -errno;
			close(fd);
			continue;
		}
		err = add_link(p, link);
		if (err)
			break;
		attached++;
	}
	free(cpus);
	return attached ? 0 : err;
}

static int fill_targets(struct probes *p, const struct probe_opts *o)
{
	__u8 one = 1;
	int err = 0;

	for (size_t i = 0; i < o->npids && !err; i++) {
		__u32 pid = o->pids[i];

		err = bpf_map__update_elem(p->skel->maps.gt_pids, &pid, sizeof(pid), &one, 1, 0);
	}
	for (size_t i = 0; i < o->ntids && !err; i++) {
		__u32 tid = o->tids[i];

		err = bpf_map__update_elem(p->skel->maps.gt_tids, &tid, sizeof(tid), &one, 1, 0);
	}
	for (size_t i = 0; i < o->ncgroups && !err; i++) {
		__u64 id = o->cgroup_ids[i];

		err = bpf_map__update_elem(p->skel->maps.gt_cgroups, &id, sizeof(id), &one, 1, 0);
	}
	return err;
}

int probe_record_check(const void *data, size_t size)
{
	const struct gt_event *e = data;
	const struct gt_uregs *u;
	size_t used;

	if (size < GT_EVENT_HDR_SIZE || e->kstack_len > GT_MAX_STACK ||
	    e->ustack_len > GT_MAX_STACK)
		return -EINVAL;
	used = GT_EVENT_HDR_SIZE + (e->kstack_len + e->ustack_len) * sizeof(__u64);
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
	p->fn(p->ctx, data);
	return 0;
}

/* Attaches every loaded program; drops from p->types the probes that could not attach. */
static void attach_all(struct probes *p, const struct probe_opts *o)
{
	struct gt_profile *s = p->skel;
	int err;

	if (p->types & PROBE_ONCPU) {
		err = attach_oncpu(p, o);
		if (err) {
			add_warning(p, "oncpu: cannot open CPU-clock perf events at %u Hz: %s",
				    o->freq ? o->freq : 99, strerror(-err));
			p->types &= ~PROBE_ONCPU;
		}
	}
	if (p->types & PROBE_OFFCPU) {
		err = attach_prog(p, s->progs.gt_offcpu);
		if (err) {
			add_warning(p, "offcpu: cannot attach sched_switch: %s", strerror(-err));
			p->types &= ~PROBE_OFFCPU;
		}
	}
	if (p->types & PROBE_MEM) {
		struct bpf_program *prog = bpf_program__autoload(s->progs.gt_mem_btf)
					       ? s->progs.gt_mem_btf
					       : s->progs.gt_mem_tp;

		err = attach_prog(p, prog);
		if (err) {
			add_warning(p, "mem: cannot attach page_fault_user: %s", strerror(-err));
			p->types &= ~PROBE_MEM;
		}
	}
	if (p->types & PROBE_PROC) {
		err = attach_prog(p, s->progs.gt_proc_exec);
		err = err ?: attach_prog(p, s->progs.gt_proc_exit);
		if (!err && o->follow_children)
			err = attach_prog(p, s->progs.gt_proc_fork);
		if (err)
			add_warning(p, "exec/exit: cannot attach sched_process_*: %s",
				    strerror(-err));
	}
}

struct probes *probes__open(const struct probe_opts *o, probe_event_fn fn, void *ctx, char *err,
			    size_t errlen)
{
	struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
	unsigned wanted;
	struct probes *p = NULL;
	struct probe_opts defaults;
	bool mem_btf = true;

	if (!o) {
		probe_opts__init(&defaults);
		o = &defaults;
	}
	wanted = (o->types ? o->types : PROBE_ONCPU) & (PROBE_ONCPU | PROBE_OFFCPU | PROBE_MEM);
	if (!privileged()) {
		snprintf(
		    err, errlen,
		    "not root: loading BPF programs needs CAP_BPF and CAP_PERFMON (run with sudo)");
		return NULL;
	}
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
	libbpf_set_print(print_libbpf);
	libbpf_reason[0] = 0;
	setrlimit(RLIMIT_MEMLOCK, &unlimited); /* pre-5.11 kernels charge maps to it */
	if (wanted & PROBE_MEM) {
		mem_btf = mem_use_btf();
		if (!mem_btf)
			mount_tracefs();
	}

	p->types = wanted | PROBE_PROC;
	p->skel = load_what_works(p, o, &p->types, mem_btf);
	if (!p->skel) {
		snprintf(err, errlen, "cannot load BPF programs: %.*s",
			 (int)strcspn(p->warnings, "\n"),
			 p->warnings[0] ? p->warnings : "unknown error");
		goto cleanup;
	}
	if (fill_targets(p, o)) {
		snprintf(err, errlen, "cannot fill the target maps: %s", strerror(errno));
		goto cleanup;
	}
	attach_all(p, o);
	if (!(p->types & wanted)) {
		snprintf(err, errlen, "no probe could start: %.*s", (int)strcspn(p->warnings, "\n"),
			 p->warnings);
		goto cleanup;
	}
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.gt_events), on_record, p, NULL);
	if (!p->rb) {
		snprintf(err, errlen, "cannot map the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	libbpf_reason[0] = 0;
	return p;

cleanup:
	probes__free(p);
	libbpf_reason[0] = 0;
	return NULL;
}

const char *probes__warnings(const struct probes *p)
{
	return p->warnings;
}

unsigned probes__types(const struct probes *p)
{
	return p->types & (PROBE_ONCPU | PROBE_OFFCPU | PROBE_MEM);
}

int probes__fd(const struct probes *p)
{
	return ring_buffer__epoll_fd(p->rb);
}

int probes__poll(struct probes *p, int timeout_ms)
{
	int n = 0, m;

	/* Records do not wake the reader until a quarter of the buffer waits (see
	 * profile.bpf.c), so after the wait take whatever arrived without a wakeup. */
	if (timeout_ms != 0) {
		n = ring_buffer__poll(p->rb, timeout_ms);
		if (n < 0)
			return n;
	}
	m = ring_buffer__consume(p->rb);
	return m < 0 ? m : n + m;
}

int probes__add_pid(struct probes *p, int tgid)
{
	__u32 pid = tgid;
	__u8 one = 1;

	if (!p->pid_filter || tgid <= 0)
		return -EINVAL;
	return bpf_map__update_elem(p->skel->maps.gt_pids, &pid, sizeof(pid), &one, 1, 0);
}

void probes__stats(const struct probes *p, struct probe_stats *st)
{
	int ncpus = libbpf_num_possible_cpus();
	struct gt_counters *c;
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	st->lost_user = p->lost_user;
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
		}
	}
	free(c);
}

void probes__free(struct probes *p)
{
	if (!p)
		return;
	ring_buffer__free(p->rb);
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	gt_profile__destroy(p->skel);
	free(p);
}
