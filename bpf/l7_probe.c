/* Loader of bpf/l7_probe.bpf.c: sets the capture knobs and targets, attaches the syscall
 * tracepoints and the OpenSSL uprobes (bpf/uprobe_lib: one set per libssl file mapped on the
 * box), and drains the ring buffer into a callback. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/l7_probe.h"
#include "bpf/kabi.h"
#include "bpf/drain.h"
#include "bpf/loadlog.h"
#include "bpf/percpu.h"
#include "bpf/probes.h"
#include "bpf/targets.h"
#include "bpf/uprobe_lib.h"
#include "model/hist.h"
#include "model/l7/proto.h"
#include "symbols/go_tls.h"
#include "symbols/hmap.h"
#include "util/clock.h"
#include "util/grow.h"
#include "l7_probe.skel.h"

/* The record's numbers mirror model/l7's enums: the tracker takes them as they come. */
_Static_assert(L7_KPROTO_HTTP == L7_HTTP && L7_KPROTO_REDIS == L7_REDIS &&
		       L7_KPROTO_PGSQL == L7_PGSQL && L7_KPROTO_MYSQL == L7_MYSQL &&
		       L7_KPROTO_DNS == L7_DNS && L7_KPROTO_HTTP2 == L7_HTTP2 &&
		       L7_KPROTO_KAFKA == L7_KAFKA && L7_KPROTO_MONGO == L7_MONGO &&
		       L7_KPROTO_ROCKETMQ == L7_ROCKETMQ,
	       "bpf/l7_event.h L7_KPROTO_* mirror enum l7_proto");
_Static_assert(L7_KROLE_UNKNOWN == L7_ROLE_UNKNOWN && L7_KROLE_CLIENT == L7_ROLE_CLIENT &&
		       L7_KROLE_SERVER == L7_ROLE_SERVER,
	       "bpf/l7_event.h L7_KROLE_* mirror enum l7_role");
_Static_assert(L7_DIR_SEND == 0 && L7_DIR_RECV == 1, "l7_event.dir mirrors enum l7_dir");
/* The socket calls the capture reads from the task's registers, and the TCP states it follows. */
_Static_assert(GT_NR_READ == SYS_read && GT_NR_WRITE == SYS_write && GT_NR_READV == SYS_readv &&
		       GT_NR_WRITEV == SYS_writev && GT_NR_SENDFILE == SYS_sendfile &&
		       GT_NR_SENDTO == SYS_sendto && GT_NR_RECVFROM == SYS_recvfrom &&
		       GT_NR_SENDMSG == SYS_sendmsg && GT_NR_RECVMSG == SYS_recvmsg &&
		       GT_NR_SENDMMSG == SYS_sendmmsg && GT_NR_RECVMMSG == SYS_recvmmsg,
	       "bpf/kabi.h socket call numbers");
_Static_assert(GT_TCP_ESTABLISHED == TCP_ESTABLISHED && GT_TCP_SYN_SENT == TCP_SYN_SENT &&
		       GT_TCP_SYN_RECV == TCP_SYN_RECV && GT_TCP_CLOSE == TCP_CLOSE &&
		       GT_IPPROTO_UDP == IPPROTO_UDP,
	       "bpf/kabi.h TCP states");

#define WARNINGS_MAX 4096
#define DEFAULT_RINGBUF (16u << 20)
#define RESCAN_NEW_S 2.0  /* maps of processes not seen yet */
#define RESCAN_ALL_S 30.0 /* every process again: libraries loaded with dlopen */

struct l7_probes {
	struct gt_l7_probe *skel;
	struct drain *rb;
	struct bpf_link **links;
	size_t nlinks;
	l7_event_fn fn;
	void *ctx;
	struct uprobe_lib *tls;	  /* NULL with no_tls */
	struct uprobe_lib *gotls; /* Go programs' crypto/tls; NULL with no_tls */
	size_t tls_reported, go_reported; /* files whose failure was turned into a warning */
	bool tls_full_said, go_full_said;
	bool unix_starts; /* gt_l7_send_ready's attach was tried */
	double next_new, next_all;
	uint64_t malformed;
	/* Requests counted in the kernel: the cells' sums at the last read, the free slots, the
	 * slot of each named connection (tgid, fd, gen). */
	struct hmap *cnt_cells, *cnt_slot_of;
	uint32_t *cnt_free;
	size_t cnt_nfree;
	int ncpus;
	int *target_pids; /* with targets that are processes only: their pids, else NULL */
	size_t ntarget_pids, target_cap;
	char warnings[WARNINGS_MAX];
};

static void count_forget(struct l7_probes *p, uint32_t tgid, int32_t fd, uint64_t gen);

static void add_warning(struct l7_probes *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	loadlog_vwarn(p->warnings, sizeof(p->warnings), fmt, ap);
	va_end(ap);
}

/* The OpenSSL 3 calls whose plaintext the capture reads: entry programs per call, one
 * return program for all. */
static struct uprobe_lib *tls_new(struct gt_l7_probe *skel)
{
	const struct uprobe_lib_probe probes[] = {
		{ "SSL_read", skel->progs.gt_l7_ssl_read, false, 0 },
		{ "SSL_write", skel->progs.gt_l7_ssl_write, false, 0 },
		{ "SSL_read_ex", skel->progs.gt_l7_ssl_read_ex, false, 0 },
		{ "SSL_write_ex", skel->progs.gt_l7_ssl_write_ex, false, 0 },
		{ "SSL_read", skel->progs.gt_l7_ssl_ret, true, 0 },
		{ "SSL_write", skel->progs.gt_l7_ssl_ret, true, 0 },
		{ "SSL_read_ex", skel->progs.gt_l7_ssl_ret, true, 0 },
		{ "SSL_write_ex", skel->progs.gt_l7_ssl_ret, true, 0 },
	};
	struct uprobe_lib_opts o = {
		.prefix = "libssl.so.3", .probes = probes, .nprobes = sizeof(probes) / sizeof(probes[0])
	};

	return uprobe_lib__new(&o);
}

/* Go executables: every mapped file but shared libraries is a candidate; its contents
 * decide (go_sites). */
static bool go_match(void *ctx, const char *path)
{
	(void)ctx;
	return !strstr(strrchr(path, '/'), ".so");
}

/* The probes of a Go program linking crypto/tls (symbols/go_tls): Write's and Read's entries
 * and Read's result check (else its RETs), each with the fd offsets as cookie. 0 for other
 * files. */
static int go_sites(void *ctx, const char *full, struct uprobe_lib_site *out)
{
	struct gt_l7_probe *skel = ctx;
	struct go_tls_info gi;
	uint64_t cookie;
	int fd = open(full, O_RDONLY | O_CLOEXEC), err, n = 0;

	if (fd < 0)
		return -errno;
	err = go_tls_inspect(fd, &gi);
	close(fd);
	if (err == -ENOENT || err == -ENOEXEC)
		return 0;
	if (err)
		return err;
	/* As go_fd, go_stack_grows and go_reg in bpf/l7_probe.bpf.c read it: the offsets of conn,
	 * fd, and pfd + Sysfd (16 bits each), whether the probe is on the stack check's JBE, and
	 * from bit 56 the register holding Read's result. */
	cookie = gi.conn_off | (uint64_t)gi.fd_off << 16 |
		 (uint64_t)(uint16_t)(gi.pfd_off + gi.sysfd_off) << 32;
	out[n++] = (struct uprobe_lib_site){ skel->progs.gt_l7_go_write, gi.write_off,
					     cookie | (uint64_t)gi.write_on_check << 48 };
	out[n++] = (struct uprobe_lib_site){ skel->progs.gt_l7_go_read, gi.read_off,
					     cookie | (uint64_t)gi.read_on_check << 48 };
	if (gi.read_result_off)
		out[n++] = (struct uprobe_lib_site){ skel->progs.gt_l7_go_read_ret,
						     gi.read_result_off,
						     cookie | (uint64_t)gi.read_result_reg << 56 };
	for (size_t i = 0; i < gi.nread_rets && n < UPROBE_LIB_MAX_SITES; i++)
		out[n++] = (struct uprobe_lib_site){ skel->progs.gt_l7_go_read_ret,
						     gi.read_rets[i],
						     cookie | (uint64_t)GO_REG_AX << 56 };
	return n;
}

static struct uprobe_lib *go_tls_new(struct gt_l7_probe *skel)
{
	struct uprobe_lib_opts o = { .match = go_match, .sites = go_sites, .ctx = skel };

	return uprobe_lib__new(&o);
}

/* Probes the files of u (what names them) mapped by processes not looked at yet (all: by
 * every process again, for libraries loaded with dlopen), and warns about each file that
 * failed; *reported and *full_said keep what was said. */
static void scan_lib(struct l7_probes *p, struct uprobe_lib *u, const char *what,
		     size_t *reported, bool *full_said, bool all)
{
	size_t n;

	/* Only processes are targets: their libraries are the ones that matter, and reading
	 * every new process's maps costs much on a box that starts many. */
	uprobe_lib__scan(u, p->target_pids, p->ntarget_pids, all);
	n = uprobe_lib__nfiles(u);
	for (; *reported < n; (*reported)++) {
		const struct uprobe_lib_file *f = uprobe_lib__file(u, *reported);

		if (f->err)
			add_warning(p, "tls: cannot attach %s probes to %s: %s", what, f->path,
				    strerror(-f->err));
	}
	if (uprobe_lib__full(u) && !*full_said) {
		add_warning(p, "tls: more than %zu %s files mapped; the others are not probed", n,
			    what);
		*full_said = true;
	}
}

/* The absolute path execvp would run for file (searching PATH when it has no '/') into out
 * (PATH_MAX bytes); 0 or -ENOENT. */
static int exec_path(const char *file, char *out)
{
	const char *path = getenv("PATH"), *dir;

	if (strchr(file, '/'))
		return realpath(file, out) ? 0 : -ENOENT;
	for (dir = path ? path : "/usr/bin:/bin"; *dir;) {
		size_t n = strcspn(dir, ":");
		char cand[PATH_MAX];

		if (snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, n ? dir : ".", file) <
			    (int)sizeof(cand) &&
		    !access(cand, X_OK) && realpath(cand, out))
			return 0;
		dir += n + (dir[n] == ':');
	}
	return -ENOENT;
}

static void scan_tls(struct l7_probes *p, bool all)
{
	scan_lib(p, p->tls, "OpenSSL", &p->tls_reported, &p->tls_full_said, all);
	scan_lib(p, p->gotls, "Go crypto/tls", &p->go_reported, &p->go_full_said, all);
}

int l7_event_check(const void *data, size_t size)
{
	const struct l7_event *e = data;

	if (size < sizeof(*e) || e->cap > size - sizeof(*e) || e->cap > L7_CAPTURE_MAX ||
	    (e->type != L7_EV_DATA && e->type != L7_EV_CLOSE && e->type != L7_EV_PEER) ||
	    (e->type == L7_EV_PEER && e->cap > L7_UNIX_PATH_MAX))
		return -EINVAL;
	return 0;
}

/* Unix-domain sends' starts (gt_l7_send_ready on every socket's data-ready), attached once
 * such a connection is traced: the TCP-only box does not pay for it. Tried once. */
static void unix_starts_attach(struct l7_probes *p)
{
	struct bpf_link *link;

	p->unix_starts = true;
	if (!bpf_program__autoload(p->skel->progs.gt_l7_send_ready))
		return;
	/* The sends take their starts before the program gives any: a start it gave to a send
	 * that did not take it would stay, and the thread's next send would take it (a request
	 * beginning within the one before it). */
	p->skel->bss->unix_starts = 1;
	/* On failure, requests over Unix-domain sockets start at their send's end. */
	link = bpf_program__attach(p->skel->progs.gt_l7_send_ready);
	if (link && probe_links_add(&p->links, &p->nlinks, link)) {
		bpf_link__destroy(link);
		link = NULL;
	}
	if (!link)
		p->skel->bss->unix_starts = 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct l7_probes *p = ctx;
	const struct l7_event *e = data;

	if (l7_event_check(data, size)) {
		p->malformed++;
		return 0;
	}
	if ((e->flags & L7_EVF_UNIX) && !p->unix_starts)
		unix_starts_attach(p);
	if (e->type == L7_EV_CLOSE && hmap__count(p->cnt_slot_of))
		count_forget(p, e->tgid, e->fd, e->gen);
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
	p->skel = gt_l7_probe__open();
	if (!p->skel) {
		snprintf(err, errlen, "l7: cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	TARGETS_SET_RODATA(p->skel->rodata, t);
	p->skel->rodata->capture_bytes = o->capture ? o->capture : L7_CAPTURE_DEFAULT;
	if (p->skel->rodata->capture_bytes > L7_CAPTURE_MAX)
		p->skel->rodata->capture_bytes = L7_CAPTURE_MAX;
	p->skel->rodata->proto_mask = l7_proto_kernel_mask(o->proto_mask);
	p->skel->rodata->want_stacks = !o->no_stacks && !getenv("GT_NOSTACK");
	p->skel->rodata->wakeup_bytes = rbsize / 8;
	p->skel->rodata->follow_children = t->follow_children;
	p->skel->rodata->count_on = o->count;
	p->ncpus = ncpus > 0 ? ncpus : 1;
	p->cnt_cells = hmap__new();
	p->cnt_slot_of = hmap__new();
	p->cnt_free = malloc(L7C_SLOTS * sizeof(*p->cnt_free));
	for (size_t i = 0; p->cnt_free && i < L7C_SLOTS; i++)
		p->cnt_free[p->cnt_nfree++] = L7C_SLOTS - 1 - (uint32_t)i;
	if (!p->cnt_cells || !p->cnt_slot_of || !p->cnt_free) {
		snprintf(err, errlen, "l7: out of memory");
		goto fail;
	}
	rc = t->follow_children ? 0 : bpf_program__set_autoload(p->skel->progs.gt_l7_fork, false);
	/* Before 6.4 no sock:sk_data_ready: a Unix-domain send's request starts at its end. */
	if (libbpf_find_vmlinux_btf_id("sk_data_ready", BPF_TRACE_RAW_TP) < 0)
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_send_ready, false);
	if (!o->no_tls) {
		p->tls = tls_new(p->skel);
		p->gotls = go_tls_new(p->skel);
		if (!p->tls || !p->gotls) {
			snprintf(err, errlen, "l7: out of memory");
			goto fail;
		}
	}
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
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_go_write, false);
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_go_read, false);
		rc = rc ?: bpf_program__set_autoload(p->skel->progs.gt_l7_go_read_ret, false);
	}
	rc = rc ?: bpf_map__set_max_entries(p->skel->maps.gt_l7_events, rbsize);
	rc = rc ?: bpf_map__set_max_entries(p->skel->maps.gt_l7_scratch, ncpus > 0 ? ncpus : 1);
	if (o->no_stacks)
		rc = rc ?: bpf_map__set_max_entries(p->skel->maps.gt_l7_stacks, 1);
	rc = rc ?: targets_size(p->skel->obj, t);
	rc = rc ?: gt_l7_probe__load(p->skel);
	rc = rc ?: targets_fill(p->skel->obj, t);
	if (rc) {
		snprintf(err, errlen, "l7: cannot load the L7 capture: %s%s%s", strerror(-rc),
			 loadlog_reason()[0] ? " (libbpf: " : "",
			 loadlog_reason()[0] ? loadlog_reason() : "");
		if (loadlog_reason()[0])
			strncat(err, ")", errlen - strlen(err) - 1);
		goto fail;
	}
	bpf_object__for_each_program(prog, p->skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);
		struct bpf_link *link;

		if (strncmp(sec, "tp/", 3) &&
		    !(strncmp(sec, "tp_btf/", 7) == 0 && bpf_program__autoload(prog)))
			continue;
		if (prog == p->skel->progs.gt_l7_send_ready)
			continue; /* at the first Unix-domain connection (on_record) */
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
		char exe[PATH_MAX];

		if (o->exec_file && !exec_path(o->exec_file, exe))
			uprobe_lib__scan_path(p->gotls, exe);
		scan_tls(p, true);
		if (!uprobe_lib__nfiles(p->tls))
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
	st->tls_files = p->tls ? uprobe_lib__attached(p->tls) : 0;
	st->go_files = p->gotls ? uprobe_lib__attached(p->gotls) : 0;
	st->malformed = p->malformed;
	percpu_sum_u64(p->skel->maps.gt_l7_counters, (uint64_t *)&st->k,
		       sizeof(st->k) / sizeof(__u64));
}

struct conn_id {
	uint32_t tgid;
	int32_t fd;
	uint64_t gen;
};

/* The slot of connection (tgid, fd, gen), + 1; 0 when it has none. */
static uint32_t count_slot_of(const struct l7_probes *p, uint32_t tgid, int32_t fd, uint64_t gen)
{
	struct conn_id id = {tgid, fd, gen};

	return (uint32_t)(uintptr_t)hmap__get(p->cnt_slot_of, &id, sizeof(id));
}

int l7_probes__count_conn(struct l7_probes *p, uint32_t tgid, int32_t fd, uint64_t gen,
			  uint32_t sess)
{
	struct conn_id id = {tgid, fd, gen};
	uint64_t key = (uint64_t)tgid << 32 | (uint32_t)fd;
	struct l7c_name name = {.gen = gen};
	struct l7c_conn *v;
	int err = 0;

	if (count_slot_of(p, tgid, fd, gen))
		return 0;
	if (!p->cnt_nfree)
		return -ENOSPC;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	name.slot = p->cnt_free[p->cnt_nfree - 1];
	v->gen = gen;
	v->sess = sess;
	/* The slot first: the kernel takes the word only for a slot that is the connection's. */
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.gt_l7_cnt_slots), &name.slot, v, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(p->skel->maps.gt_l7_cnt_names), &key, &name, BPF_ANY))
		err = errno == E2BIG ? -ENOSPC : -errno;
	else if (!hmap__put(p->cnt_slot_of, &id, sizeof(id), (void *)(uintptr_t)(name.slot + 1)))
		err = -ENOMEM;
	if (!err)
		p->cnt_nfree--;
	free(v);
	return err;
}

/* Connection (tgid, fd, gen) ended (its close record, which the kernel sends after it settled
 * the connection's counts): its slot is free again, and a word the kernel never took goes. */
static void count_forget(struct l7_probes *p, uint32_t tgid, int32_t fd, uint64_t gen)
{
	struct conn_id id = {tgid, fd, gen};
	uint32_t slot = count_slot_of(p, tgid, fd, gen);
	uint64_t key = (uint64_t)tgid << 32 | (uint32_t)fd;
	int nfd = bpf_map__fd(p->skel->maps.gt_l7_cnt_names);
	struct l7c_name name;

	if (!slot)
		return;
	hmap__del(p->cnt_slot_of, &id, sizeof(id));
	p->cnt_free[p->cnt_nfree++] = slot - 1;
	if (!bpf_map_lookup_elem(nfd, &key, &name) && name.gen == gen)
		bpf_map_delete_elem(nfd, &key);
}

int l7_probes__count_endpoint(struct l7_probes *p, uint64_t h, uint32_t ep, uint64_t slow_ns)
{
	struct l7c_ep v = {.ep = ep, .slow_ns = slow_ns};

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.gt_l7_cnt_eps), &h, &v, BPF_ANY))
		return -errno;
	__atomic_add_fetch(&p->skel->bss->eps_gen, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Takes back the slot of one named connection (the kernel sees another generation in it). */
static void count_take_back(const void *key, size_t len, void *val, void *arg)
{
	struct l7_probes *p = arg;
	uint32_t slot = (uint32_t)(uintptr_t)val - 1;
	struct l7c_conn *v = calloc(1, sizeof(*v));

	(void)key, (void)len;
	if (v)
		bpf_map_update_elem(bpf_map__fd(p->skel->maps.gt_l7_cnt_slots), &slot, v, BPF_ANY);
	free(v);
}

void l7_probes__count_stop(struct l7_probes *p)
{
	int mfd = bpf_map__fd(p->skel->maps.gt_l7_cnt_names);
	uint64_t key;

	while (!bpf_map_get_next_key(mfd, NULL, &key))
		if (bpf_map_delete_elem(mfd, &key))
			break;
	hmap__each(p->cnt_slot_of, count_take_back, p);
}

struct pending_walk {
	struct l7_probes *p;
	l7_count_fn fn;
	void *ctx;
	struct l7c_conn *v;
};

/* One named connection's answered request, if it has one (its slot set back to idle). */
static void pending_one(const void *key, size_t len, void *val, void *arg)
{
	const struct conn_id *id = key;
	struct pending_walk *w = arg;
	struct l7c_conn *v = w->v;
	uint32_t slot = (uint32_t)(uintptr_t)val - 1;
	int fd = bpf_map__fd(w->p->skel->maps.gt_l7_cnt_slots);
	struct l7_count_bucket b = {0};
	uint64_t lat;

	(void)len;
	if (bpf_map_lookup_elem(fd, &slot, v) || v->gen != id->gen || v->mode != L7C_ANSWERED)
		return;
	v->mode = L7C_IDLE;
	if (bpf_map_update_elem(fd, &slot, v, BPF_EXIST))
		return;
	lat = v->resp_end > v->req_ts ? v->resp_end - v->req_ts : 0;
	b.sess = v->sess;
	b.ep = v->ep;
	b.bucket = hist_index(lat);
	b.n = 1;
	b.lat_sum = lat;
	b.bytes_recv = v->client ? v->resp_bytes : v->req_len;
	b.bytes_sent = v->client ? v->req_len : v->resp_bytes;
	b.segs_recv = v->segs_in_x;
	b.segs_sent = v->segs_out_x;
	b.first_ns = v->req_ts;
	b.last_ns = v->resp_end;
	w->fn(w->ctx, b.sess, b.ep, &b, 1);
}

int l7_probes__count_pending(struct l7_probes *p, l7_count_fn fn, void *ctx)
{
	struct pending_walk w = {p, fn, ctx, calloc(1, sizeof(struct l7c_conn))};

	if (!w.v)
		return -ENOMEM;
	hmap__each(p->cnt_slot_of, pending_one, &w);
	free(w.v);
	return 0;
}

/* The shadows' values are malloc'd copies of the sums. */
static void shadow_free_one(const void *key, size_t len, void *val, void *arg)
{
	(void)key, (void)len, (void)arg;
	free(val);
}

static void count_shadow_free(struct hmap *m)
{
	if (m)
		hmap__each(m, shadow_free_one, NULL);
	hmap__free(m);
}

/* The growth of the __u64 counters (n per CPU, summed) of key in per-CPU map fd since the last
 * call, through shadow; values is room for one value per CPU. Counters at first and last (<
 * n, else n) are no sums but times: the earliest of the CPUs' (0 = none) and the latest, as they
 * are. 1 when something grew, 0 when not, -errno. */
static int count_growth(struct l7_probes *p, int fd, struct hmap *shadow, const void *key,
			size_t klen, __u64 *values, size_t n, size_t first, size_t last_at,
			__u64 *out)
{
	__u64 *last;
	bool grew = false;

	if (bpf_map_lookup_elem(fd, key, values))
		return -errno;
	memset(out, 0, n * sizeof(*out));
	for (int c = 0; c < p->ncpus; c++)
		for (size_t i = 0; i < n; i++) {
			__u64 v = values[c * n + i];

			if (i == first)
				out[i] = v && (!out[i] || v < out[i]) ? v : out[i];
			else if (i == last_at)
				out[i] = v > out[i] ? v : out[i];
			else
				out[i] += v;
		}
	last = hmap__get(shadow, key, klen);
	if (!last) {
		last = calloc(n, sizeof(*last));
		if (!last || !hmap__put(shadow, key, klen, last)) {
			free(last);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < n; i++) {
		__u64 now = out[i];

		if (i == first || i == last_at)
			continue;
		out[i] = now - last[i];
		grew |= out[i] != 0;
		last[i] = now;
	}
	return grew;
}

static int bucket_cmp(const void *a, const void *b)
{
	const struct l7_count_bucket *x = a, *y = b;

	if (x->sess != y->sess)
		return x->sess < y->sess ? -1 : 1;
	return x->ep != y->ep ? (x->ep < y->ep ? -1 : 1) : 0;
}

int l7_probes__count_read(struct l7_probes *p, l7_count_fn fn, void *ctx)
{
	int fd = bpf_map__fd(p->skel->maps.gt_l7_cnt_cells);
	size_t nv = sizeof(struct l7c_cell) / sizeof(__u64), nbs = 0, bcap = 0;
	__u64 *vals = calloc((size_t)p->ncpus * nv, sizeof(__u64));
	struct l7c_cell_key k, *prev = NULL;
	struct l7_count_bucket *bs = NULL;
	int err = 0;

	if (!vals)
		return -ENOMEM;
	while (!err && !bpf_map_get_next_key(fd, prev, &k)) {
		struct l7c_cell d;
		int g = count_growth(p, fd, p->cnt_cells, &k, sizeof(k), vals, nv,
				     offsetof(struct l7c_cell, first_ns) / sizeof(__u64),
				     offsetof(struct l7c_cell, last_ns) / sizeof(__u64), (__u64 *)&d);

		prev = &k;
		if (g < 0)
			err = g;
		else if (g && ARRAY_GROW(bs, bcap, nbs + 1))
			err = -ENOMEM;
		else if (g)
			bs[nbs++] = (struct l7_count_bucket){
			    k.sess,	 k.ep,	       k.bucket,    d.n,       d.lat_sum, d.bytes_recv,
			    d.bytes_sent, d.segs_recv, d.segs_sent, d.first_ns, d.last_ns};
	}
	if (nbs)
		qsort(bs, nbs, sizeof(*bs), bucket_cmp);
	for (size_t i = 0, j; !err && i < nbs; i = j) {
		for (j = i + 1; j < nbs && !bucket_cmp(&bs[i], &bs[j]); j++)
			;
		fn(ctx, bs[i].sess, bs[i].ep, bs + i, j - i);
	}
	free(bs);
	free(vals);
	return err;
}

void l7_probes__free(struct l7_probes *p)
{
	if (!p)
		return;
	drain__free(p->rb);
	uprobe_lib__free(p->tls);
	uprobe_lib__free(p->gotls);
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	gt_l7_probe__destroy(p->skel);
	count_shadow_free(p->cnt_cells);
	hmap__free(p->cnt_slot_of);
	free(p->cnt_free);
	free(p->target_pids);
	free(p);
}
