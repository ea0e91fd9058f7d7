/* Loader of bpf/l7.bpf.c: sets the capture knobs and targets, attaches the syscall tracepoints
 * and the OpenSSL uprobes (one set per libssl file found in /proc/PID/maps), and drains the
 * ring buffer into a callback. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/l7probes.h"
#include "bpf/drain.h"
#include "bpf/loadlog.h"
#include "bpf/tracefs.h"
#include "bpf/percpu.h"
#include "bpf/probes.h"
#include "bpf/targets.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/procfs.h"
#include "l7.skel.h"

#define WARNINGS_MAX 4096
#define DEFAULT_RINGBUF (16u << 20)
#define PID_HEADROOM 1024
#define RESCAN_NEW_S 2.0  /* maps of processes not seen yet */
#define RESCAN_ALL_S 30.0 /* every process again: libraries loaded with dlopen */
#define MAX_TLS_FILES 256

/* The calls whose exit the one exit program handles (their entries are programs of their own). */
static const char *const exit_calls[] = {"read",       "write",	  "readv",   "writev",	 "sendto",
					 "recvfrom",   "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
					 "sendfile64", "connect", "accept",  "accept4"};

struct tls_file {
	dev_t dev;
	ino_t ino;
};

struct l7_probes {
	struct gt_l7 *skel;
	struct drain *rb;
	struct bpf_link **links;
	size_t nlinks;
	l7_event_fn fn;
	void *ctx;
	bool tls;
	struct tls_file tls_files[MAX_TLS_FILES];
	size_t ntls;
	int *seen_pids; /* sorted pids whose maps were read */
	size_t nseen, seen_cap;
	double next_new, next_all;
	uint64_t malformed;
	int *target_pids; /* with targets that are processes only: their pids, else NULL */
	size_t ntarget_pids, target_cap;
	char warnings[WARNINGS_MAX];
};

static void add_warning(struct l7_probes *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	loadlog_vwarn(p->warnings, sizeof(p->warnings), fmt, ap);
	va_end(ap);
}

/* Attaches the entry and return probes of the four OpenSSL calls in the library at path. */
static int attach_tls_file(struct l7_probes *p, const char *path)
{
	static const char *const funcs[] = {"SSL_read", "SSL_write", "SSL_read_ex", "SSL_write_ex"};
	struct bpf_program *entry[] = {
	    p->skel->progs.gt_l7_ssl_read, p->skel->progs.gt_l7_ssl_write,
	    p->skel->progs.gt_l7_ssl_read_ex, p->skel->progs.gt_l7_ssl_write_ex};
	int attached = 0, err = 0;

	for (size_t i = 0; i < 4; i++) {
		for (int ret = 0; ret < 2; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = funcs[i], .retprobe = ret);
			struct bpf_link *link;

			loadlog_reset();
			link = bpf_program__attach_uprobe_opts(
			    ret ? p->skel->progs.gt_l7_ssl_ret : entry[i], -1, path, 0, &uo);
			if (!link) {
				err = -errno;
				continue;
			}
			if (probe_links_add(&p->links, &p->nlinks, link))
				return -ENOMEM;
			attached++;
		}
	}
	return attached ? 0 : err;
}

static bool pid_seen(struct l7_probes *p, int pid)
{
	size_t lo = 0, hi = p->nseen;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->seen_pids[mid] == pid)
			return true;
		if (p->seen_pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (ARRAY_GROW(p->seen_pids, p->seen_cap, p->nseen + 1))
		return true; /* out of memory: do not rescan, nothing breaks */
	memmove(p->seen_pids + lo + 1, p->seen_pids + lo, (p->nseen - lo) * sizeof(int));
	p->seen_pids[lo] = pid;
	p->nseen++;
	return false;
}

static bool tls_known(struct l7_probes *p, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < p->ntls; i++)
		if (p->tls_files[i].dev == dev && p->tls_files[i].ino == ino)
			return true;
	return false;
}

/* Looks for OpenSSL 3's libssl in the maps of pid and attaches to each new file. */
static void scan_pid(struct l7_probes *p, int pid)
{
	char path[64], line[4608];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), full[4700];
		const char *base;
		struct stat st;

		if (!file || !strstr(file, "libssl.so.3"))
			continue;
		file[strcspn(file, "\n")] = 0;
		base = strrchr(file, '/') + 1;
		if (strncmp(base, "libssl.so.3", 11))
			continue;
		/* The file as this process sees it: containers have their own root. */
		snprintf(full, sizeof(full), "/proc/%d/root%s", pid, file);
		if (stat(full, &st) || tls_known(p, st.st_dev, st.st_ino))
			continue;
		if (p->ntls == MAX_TLS_FILES)
			break;
		p->tls_files[p->ntls].dev = st.st_dev;
		p->tls_files[p->ntls].ino = st.st_ino;
		p->ntls++;
		if (attach_tls_file(p, full))
			add_warning(p, "tls: cannot attach OpenSSL probes to %s", file);
	}
	fclose(f);
}

struct tls_scan {
	struct l7_probes *p;
	bool all; /* also the processes scanned before */
};

static int scan_one(void *ctx, int pid)
{
	struct tls_scan *s = ctx;

	if (!pid_seen(s->p, pid) || s->all)
		scan_pid(s->p, pid);
	return 0;
}

static void scan_tls(struct l7_probes *p, bool all)
{
	struct tls_scan s = { p, all };

	/* Only processes are targets: their libraries are the ones that matter, and reading
	 * every new process's maps costs much on a box that starts many. */
	for (size_t i = 0; i < p->ntarget_pids; i++)
		scan_one(&s, p->target_pids[i]);
	if (!p->ntarget_pids)
		procfs_each_id("/proc", scan_one, &s);
}

int l7_event_check(const void *data, size_t size)
{
	const struct l7_event *e = data;

	if (size < sizeof(*e) || e->cap > size - sizeof(*e) || e->cap > L7_CAPTURE_MAX ||
	    (e->type != L7_EV_DATA && e->type != L7_EV_CLOSE))
		return -EINVAL;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct l7_probes *p = ctx;
	const struct l7_event *e = data;

	if (l7_event_check(data, size)) {
		p->malformed++;
		return 0;
	}
	p->fn(p->ctx, e, (const uint8_t *)(e + 1));
	return 0;
}

static size_t ringbuf_size(size_t want)
{
	size_t sz = (size_t)sysconf(_SC_PAGESIZE);

	if (!want)
		want = DEFAULT_RINGBUF;
	while (sz < want && sz < (1ul << 30))
		sz <<= 1;
	return sz;
}

struct l7_probes *l7_probes__open(const struct l7_probe_opts *o, l7_event_fn fn, void *ctx,
				  char *err, size_t errlen)
{
	struct probe_opts none;
	const struct probe_opts *t = o->targets;
	struct l7_probes *p = NULL;
	struct bpf_program *prog;
	size_t rbsize = ringbuf_size(o->ringbuf_bytes);
	int ncpus = libbpf_num_possible_cpus(), rc;

	if (!t) {
		probe_opts__init(&none);
		t = &none;
	}
	if (loader_begin("l7: ", err, errlen))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "l7: out of memory");
		return NULL;
	}
	p->fn = fn;
	p->ctx = ctx;
	tracefs_ensure(); /* the syscall probes are classic tracepoints */
	p->skel = gt_l7__open();
	if (!p->skel) {
		snprintf(err, errlen, "l7: cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	TARGETS_SET_RODATA(p->skel->rodata, t);
	p->skel->rodata->capture_bytes = o->capture ? o->capture : L7_CAPTURE_DEFAULT;
	if (p->skel->rodata->capture_bytes > L7_CAPTURE_MAX)
		p->skel->rodata->capture_bytes = L7_CAPTURE_MAX;
	p->skel->rodata->proto_mask = o->proto_mask ? o->proto_mask : ~0u;
	p->skel->rodata->want_stacks = !o->no_stacks;
	p->skel->rodata->wakeup_bytes = rbsize / 8;
	p->skel->rodata->follow_children = t->follow_children;
	rc = t->follow_children ? 0 : bpf_program__set_autoload(p->skel->progs.gt_l7_fork, false);
	p->tls = !o->no_tls;
	if (t->npids && !t->ntids && !(t->comm && t->comm[0]) && !t->ncgroups &&
	    !t->follow_children) {
		p->target_pids = malloc(t->npids * sizeof(int));
		if (p->target_pids) {
			memcpy(p->target_pids, t->pids, t->npids * sizeof(int));
			p->ntarget_pids = p->target_cap = t->npids;
		}
	}
	if (!p->tls) {
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_ssl_read, false);
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_ssl_write, false);
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_ssl_read_ex, false);
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_ssl_write_ex, false);
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_ssl_ret, false);
	}
	rc = rc ?: bpf_map__set_max_entries(p->skel->maps.gt_l7_events, rbsize);
	rc = rc ?: bpf_map__set_max_entries(p->skel->maps.gt_l7_scratch, ncpus > 0 ? ncpus : 1);
	if (o->no_stacks)
		rc = rc ?: bpf_map__set_max_entries(p->skel->maps.gt_l7_stacks, 1);
	rc = rc ?: targets_size(p->skel->obj, t, PID_HEADROOM);
	rc = rc ?: gt_l7__load(p->skel);
	rc = rc ?: targets_fill(p->skel->obj, t);
	if (rc) {
		snprintf(err, errlen, "l7: cannot load the L7 capture: %s%s%s", strerror(-rc),
			 loadlog_reason()[0] ? " (libbpf: " : "",
			 loadlog_reason()[0] ? loadlog_reason() : "");
		if (loadlog_reason()[0])
			strncat(err, ")", errlen - strlen(err) - 1);
		goto fail;
	}
	for (size_t i = 0; i < sizeof(exit_calls) / sizeof(exit_calls[0]); i++) {
		char tp[64];
		struct bpf_link *link;

		snprintf(tp, sizeof(tp), "sys_exit_%s", exit_calls[i]);
		loadlog_reset();
		link = bpf_program__attach_tracepoint(p->skel->progs.gt_l7_exit, "syscalls", tp);
		if (!link) {
			rc = -errno;
			snprintf(err, errlen, "l7: cannot attach syscalls/%s: %s", tp,
				 strerror(-rc));
			goto fail;
		}
		if (probe_links_add(&p->links, &p->nlinks, link)) {
			snprintf(err, errlen, "l7: out of memory");
			goto fail;
		}
	}
	bpf_object__for_each_program(prog, p->skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);
		struct bpf_link *link;

		if (strncmp(sec, "tp/", 3) &&
		    !(strncmp(sec, "tp_btf/", 7) == 0 && bpf_program__autoload(prog)))
			continue;
		loadlog_reset();
		link = bpf_program__attach(prog);
		if (!link) {
			rc = -errno;
			snprintf(err, errlen, "l7: cannot attach %s: %s", sec + 3, strerror(-rc));
			goto fail;
		}
		if (probe_links_add(&p->links, &p->nlinks, link)) {
			snprintf(err, errlen, "l7: out of memory");
			goto fail;
		}
	}
	p->rb = drain__new(bpf_map__fd(p->skel->maps.gt_l7_events), on_record, p);
	if (!p->rb) {
		snprintf(err, errlen, "l7: cannot set up the ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (p->tls) {
		scan_tls(p, true);
		if (!p->ntls)
			add_warning(p,
				    "tls: no process maps OpenSSL 3's libssl.so.3 yet; "
				    "looking again every %.0f s",
				    RESCAN_NEW_S);
	}
	p->next_new = clock_mono_s() + RESCAN_NEW_S;
	p->next_all = clock_mono_s() + RESCAN_ALL_S;
	return p;
fail:
	l7_probes__free(p);
	return NULL;
}

const char *l7_probes__warnings(const struct l7_probes *p)
{
	return p->warnings;
}

int l7_probes__fd(const struct l7_probes *p)
{
	return drain__fd(p->rb);
}

/* Every few seconds: the TLS uprobes go on libssl files mapped since. */
static void tls_tick(struct l7_probes *p)
{
	if (p->tls) {
		double now = clock_mono_s();

		if (now >= p->next_new) {
			bool all = now >= p->next_all;

			scan_tls(p, all);
			p->next_new = now + RESCAN_NEW_S;
			if (all)
				p->next_all = now + RESCAN_ALL_S;
		}
	}
}

int l7_probes__poll(struct l7_probes *p, int timeout_ms)
{
	tls_tick(p);
	return drain__poll(p->rb, timeout_ms);
}

int l7_probes__consume(struct l7_probes *p, uint64_t deadline_ns)
{
	tls_tick(p);
	return drain__consume(p->rb, deadline_ns);
}

size_t l7_probes__stack(struct l7_probes *p, int32_t id, uint64_t *ips, size_t max)
{
	uint64_t buf[L7_STACK_DEPTH];
	size_t n = 0;

	if (id < 0 ||
	    bpf_map__lookup_elem(p->skel->maps.gt_l7_stacks, &id, sizeof(id), buf, sizeof(buf), 0))
		return 0;
	while (n < max && n < L7_STACK_DEPTH && buf[n])
		ips[n] = buf[n], n++;
	return n;
}

int l7_probes__add_pid(struct l7_probes *p, int tgid)
{
	if (!p->skel->rodata->filter_pids_enabled)
		return -EINVAL;
	if (p->target_pids) {
		if (ARRAY_GROW(p->target_pids, p->target_cap, p->ntarget_pids + 1))
			return -ENOMEM;
		p->target_pids[p->ntarget_pids++] = tgid;
	}
	return targets_add_pid(p->skel->obj, tgid);
}

void l7_probes__stats(const struct l7_probes *p, struct l7_probe_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->tls_files = p->ntls;
	st->malformed = p->malformed;
	percpu_sum_u64(p->skel->maps.gt_l7_counters, (uint64_t *)&st->k,
		       sizeof(st->k) / sizeof(__u64));
}

void l7_probes__free(struct l7_probes *p)
{
	if (!p)
		return;
	drain__free(p->rb);
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	gt_l7__destroy(p->skel);
	free(p->seen_pids);
	free(p->target_pids);
	free(p);
}
