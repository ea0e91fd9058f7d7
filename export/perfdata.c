/* perf.data reader: see perfdata.h and docs/perfdata.md.
 *
 * The file is untrusted bytes: every field is read with memcpy after a bounds check, and a
 * record that overruns itself is counted bad, never read past. Records are replayed in time
 * order, as perf script's ordered events do, so each sample is named against the mappings and
 * comm its process had when it was taken. */
#include "perfdata.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../symbols/elf_syms.h"
#include "../symbols/hmap.h"
#include "../symbols/symbols.h"
#include "../symbols/unwind.h"
#include "../util/grow.h"
#include "../model/hash.h"

#define PD_MAGIC "PERFILE2"
#define FILE_HEADER_SIZE 104 /* struct perf_file_header */
#define PIPE_HEADER_SIZE 16  /* struct perf_pipe_file_header */

/* Record types (linux/perf_event.h, perf's event.h). */
enum {
	REC_MMAP = 1,
	REC_LOST = 2,
	REC_COMM = 3,
	REC_EXIT = 4,
	REC_FORK = 7,
	REC_SAMPLE = 9,
	REC_MMAP2 = 10,
	REC_KSYMBOL = 17,
	REC_HEADER_ATTR = 64,
	REC_TRACING_DATA = 66,
	REC_BUILD_ID = 67,
	REC_AUXTRACE = 71,
	REC_EVENT_UPDATE = 78,
	REC_HEADER_FEATURE = 80,
	REC_COMPRESSED = 81,
};

enum {
	S_IDENTIFIER = 1 << 16,
	S_IP = 1 << 0,
	S_TID = 1 << 1,
	S_TIME = 1 << 2,
	S_ADDR = 1 << 3,
	S_READ = 1 << 4,
	S_CALLCHAIN = 1 << 5,
	S_ID = 1 << 6,
	S_CPU = 1 << 7,
	S_PERIOD = 1 << 8,
	S_STREAM_ID = 1 << 9,
	S_RAW = 1 << 10,
	S_BRANCH_STACK = 1 << 11,
	S_REGS_USER = 1 << 12,
	S_STACK_USER = 1 << 13,
};

enum { R_TOTAL_TIME_ENABLED = 1, R_TOTAL_TIME_RUNNING = 2, R_ID = 4, R_GROUP = 8, R_LOST = 16 };

#define MISC_CPUMODE_MASK 7
#define MISC_KERNEL 1
#define MISC_USER 2
#define MISC_COMM_EXEC (1 << 13)
#define MISC_MMAP_DATA (1 << 13)
#define MISC_MMAP_BUILD_ID (1 << 14)
#define MISC_BUILD_ID_SIZE (1 << 15)

#define CONTEXT_HV ((uint64_t)-32)
#define CONTEXT_KERNEL ((uint64_t)-128)
#define CONTEXT_USER ((uint64_t)-512)
#define CONTEXT_MAX ((uint64_t)-4095)

#define FEAT_BUILD_ID 2
#define FEAT_EVENT_DESC 12
#define FEAT_BITS 256

#define BRANCH_HW_INDEX (1ull << 17) /* branch_sample_type: a hw_idx before the entries */
#define REG_BP 6		     /* PERF_REG_X86_BP, SP, IP */
#define REG_SP 7
#define REG_IP 8
#define MAX_FRAMES 1024
#define PROT_EXEC_BIT 4

struct pd_attr {
	uint64_t sample_type, read_format, regs_mask, branch_type;
	bool sample_id_all;
	char name[128];
};

struct pd_id {
	uint64_t id;
	size_t attr;
};

struct pd_rec {
	uint64_t time;
	size_t off;
};

/* What perf's build-id table says a file (or the kernel) was. */
struct pd_bid {
	int pid;
	unsigned char id[20];
	size_t len;
	char *path;
};

/* A kernel symbol the file announced (BPF programs, trampolines): perf names them so. */
struct pd_ksym {
	uint64_t start, end;
	char *name;
};

struct pd_proc {
	uint32_t gen; /* bumped when its mappings change: cached names are then stale */
};

/* One named address: the strings belong to the symbol cache. */
struct pd_sym {
	uint64_t pid_gen, addr; /* pid_gen 0: a free slot (pids are stored + 1) */
	const char *name, *module;
	uint64_t pc; /* what perf prints: map-relative for files, the address otherwise */
	uint64_t off;
	bool known;
};

/* A sample seen before: the same event, process image, comm and call chain collapse to the
 * same stack, which is passed on again without naming or parsing anything. */
struct pd_seen {
	uint64_t hash; /* 0: a free slot */
	size_t key, key_len, stack, stack_len; /* offsets into pd->arena */
	bool filtered;			       /* of an event the filter drops */
};

struct pd {
	const unsigned char *buf;
	size_t len;
	const char *label;
	char *err;
	size_t errlen;
	bool pipe;

	struct pd_attr *attrs;
	size_t nattrs, attrs_cap;
	struct pd_id *ids;
	size_t nids, ids_cap;
	bool ids_sorted;

	struct pd_bid *bids;
	size_t nbids, bids_cap;

	struct pd_rec *recs;
	size_t nrecs, recs_cap;

	struct sym_cache *sc, *own_sc;
	struct unwinder *uw;
	struct hmap *comms; /* tid -> malloc'ed comm */
	struct hmap *procs; /* pid -> struct pd_proc */
	struct hmap *files; /* host path -> resolved path (or "" for none) */
	struct pd_sym *syms;
	size_t nsyms, syms_cap;

	struct perfscript *ps;
	const struct perfscript_opts *o;
	perfscript_stack_fn fn;
	void *ctx;
	char *text; /* perf script text waiting to be fed */
	size_t tlen, tcap;
	struct perfdata_stats st;

	struct pd_ksym *ksyms;
	size_t nksyms, ksyms_cap;
	uint32_t kgen; /* bumped when they change: cached kernel names are then stale */

	int last_pid; /* proc_get's last answer */
	struct pd_proc *last_proc;

	struct pd_seen *seen;
	size_t nseen, seen_cap;
	char *arena; /* keys and stacks of seen samples */
	size_t alen, acap;
	char *key;   /* the key being built */
	size_t klen, kcap;
	bool passed; /* the parser passed the sample on (else the filter dropped it) */
	size_t passed_at, passed_len; /* its stack, in the arena */
};

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t rd16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static int fail(struct pd *pd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct pd *pd, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(pd->err, pd->errlen, "%s: ", pd->label);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < pd->errlen)
		vsnprintf(pd->err + n, pd->errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

bool perfdata_sniff(const void *buf, size_t len)
{
	return len >= 8 && !memcmp(buf, PD_MAGIC, 8);
}

/* ---- attributes and event names ---- */

/* Reads a perf_event_attr of at most max bytes at p; its own size field says how much. */
static int attr_add(struct pd *pd, const unsigned char *p, size_t max, size_t *used)
{
	struct pd_attr *a;
	uint32_t size;

	if (max < 64)
		return -EINVAL;
	size = rd32(p + 4);
	if (size < 64 || size > max)
		size = max < 128 ? (uint32_t)max : 128; /* PERF_ATTR_SIZE_VER0 files: the room */
	if (ARRAY_GROW(pd->attrs, pd->attrs_cap, pd->nattrs + 1))
		return -ENOMEM;
	a = &pd->attrs[pd->nattrs++];
	memset(a, 0, sizeof(*a));
	a->sample_type = rd64(p + 24);
	a->read_format = rd64(p + 32);
	a->sample_id_all = rd64(p + 40) >> 18 & 1;
	a->branch_type = size >= 80 ? rd64(p + 72) : 0;
	a->regs_mask = size >= 96 ? rd64(p + 80) : 0;
	snprintf(a->name, sizeof(a->name), "event%zu", pd->nattrs - 1);
	*used = size;
	return 0;
}

static int id_add(struct pd *pd, uint64_t id, size_t attr)
{
	if (ARRAY_GROW(pd->ids, pd->ids_cap, pd->nids + 1))
		return -ENOMEM;
	pd->ids[pd->nids].id = id;
	pd->ids[pd->nids++].attr = attr;
	pd->ids_sorted = false;
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct pd_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The attribute of sample id (the first one when ids are not known). */
static struct pd_attr *attr_of(struct pd *pd, uint64_t id)
{
	size_t lo = 0, hi = pd->nids;

	if (pd->nattrs == 1 || !pd->nids)
		return pd->nattrs ? &pd->attrs[0] : NULL;
	if (!pd->ids_sorted) {
		qsort(pd->ids, pd->nids, sizeof(*pd->ids), id_cmp);
		pd->ids_sorted = true;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->ids[mid].id == id)
			return &pd->attrs[pd->ids[mid].attr];
		if (pd->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A name from the file: printable bytes but spaces, at most the room. */
static void set_name(char *dst, size_t room, const unsigned char *s, size_t max)
{
	size_t i;

	for (i = 0; i + 1 < room && i < max && s[i]; i++)
		dst[i] = s[i] <= ' ' || s[i] == 0x7f ? '_' : (char)s[i];
	dst[i] = '\0';
}

/* HEADER_EVENT_DESC: names in the order of the attributes. */
static void read_event_desc(struct pd *pd, const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	uint32_t nr, asz;

	if (len < 8)
		return;
	nr = rd32(p);
	asz = rd32(p + 4);
	p += 8;
	for (uint32_t i = 0; i < nr && i < pd->nattrs; i++) {
		uint32_t nids, slen;

		if ((size_t)(end - p) < (size_t)asz + 8)
			return;
		p += asz;
		nids = rd32(p);
		slen = rd32(p + 4);
		p += 8;
		if ((size_t)(end - p) < slen)
			return;
		set_name(pd->attrs[i].name, sizeof(pd->attrs[i].name), p, slen);
		p += slen;
		if ((size_t)(end - p) / 8 < nids)
			return;
		p += (size_t)nids * 8;
	}
}

/* One build-id record (feature section or pipe-mode record) of size len at p. */
static int bid_add(struct pd *pd, const unsigned char *p, size_t len)
{
	struct pd_bid *b;
	uint16_t misc = rd16(p + 4);
	size_t n;

	if (len < 36)
		return 0;
	if (ARRAY_GROW(pd->bids, pd->bids_cap, pd->nbids + 1))
		return -ENOMEM;
	b = &pd->bids[pd->nbids];
	b->pid = (int)rd32(p + 8);
	memcpy(b->id, p + 12, 20);
	b->len = misc & MISC_BUILD_ID_SIZE ? p[32] : 20;
	if (b->len > 20)
		b->len = 20;
	n = strnlen((const char *)p + 36, len - 36);
	b->path = strndup((const char *)p + 36, n);
	if (!b->path)
		return -ENOMEM;
	pd->nbids++;
	return 0;
}

static int read_build_ids(struct pd *pd, const unsigned char *p, size_t len)
{
	while (len >= 8) {
		size_t size = rd16(p + 6);
		int err;

		if (size < 8 || size > len)
			return 0;
		err = bid_add(pd, p, size);
		if (err)
			return err;
		p += size;
		len -= size;
	}
	return 0;
}

static int read_features(struct pd *pd, const unsigned char *bits, uint64_t at)
{
	for (unsigned f = 0; f < FEAT_BITS; f++) {
		uint64_t off, size;
		int err = 0;

		if (!(bits[f / 8] >> (f % 8) & 1))
			continue;
		if (at > pd->len || pd->len - at < 16)
			return 0; /* a file cut in its features: the samples are whole */
		off = rd64(pd->buf + at);
		size = rd64(pd->buf + at + 8);
		at += 16;
		if (off > pd->len || size > pd->len - off)
			continue;
		if (f == FEAT_EVENT_DESC)
			read_event_desc(pd, pd->buf + off, size);
		else if (f == FEAT_BUILD_ID)
			err = read_build_ids(pd, pd->buf + off, size);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the time of each record ---- */

/* Bytes of the sample_id trailer of non-sample records. */
static size_t trailer_size(uint64_t t)
{
	return 8 * (!!(t & S_TID) + !!(t & S_TIME) + !!(t & S_ID) + !!(t & S_STREAM_ID) +
		    !!(t & S_CPU) + !!(t & S_IDENTIFIER));
}

/* The time of record r (size bytes), or prev when it carries none. */
static uint64_t rec_time(const struct pd *pd, const unsigned char *r, size_t size, uint64_t prev)
{
	uint32_t type = rd32(r);
	const struct pd_attr *a = pd->nattrs ? &pd->attrs[0] : NULL;
	uint64_t t;
	size_t at;

	if (!a || !(a->sample_type & S_TIME))
		return prev;
	t = a->sample_type;
	if (type == REC_SAMPLE) {
		at = 8 + 8 * (!!(t & S_IDENTIFIER) + !!(t & S_IP)) + 4 * 2 * !!(t & S_TID);
		return at + 8 <= size ? rd64(r + at) : prev;
	}
	if (type >= REC_HEADER_ATTR || !a->sample_id_all)
		return prev;
	/* pid/tid, then time, from the trailer's start */
	at = trailer_size(t);
	if (size < 8 + at)
		return prev;
	at = size - at + 8 * !!(t & S_TID);
	return rd64(r + at);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct pd_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* ---- processes, threads, mappings ---- */

static struct pd_proc *proc_get(struct pd *pd, int pid)
{
	struct pd_proc *p;

	if (pd->last_proc && pd->last_pid == pid)
		return pd->last_proc;
	p = hmap__get(pd->procs, &pid, sizeof(pid));
	if (p) {
		pd->last_pid = pid;
		pd->last_proc = p;
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (!hmap__put(pd->procs, &pid, sizeof(pid), p)) {
		free(p);
		return NULL;
	}
	/* followed from the file alone, never from the live /proc */
	if (pid > 0 && sym_cache__exec(pd->sc, pid)) {
		free(hmap__del(pd->procs, &pid, sizeof(pid)));
		return NULL;
	}
	return p;
}

/* pid's mappings changed (exec, fork over a reused pid, new mapping). */
static void proc_changed(struct pd *pd, struct pd_proc *p, int pid, bool image)
{
	p->gen++;
	if (image && pd->uw)
		unwinder__process_exit(pd->uw, pid);
}

static int comm_set(struct pd *pd, int tid, const unsigned char *s, size_t max)
{
	char *c = malloc(max + 1);

	if (!c)
		return -ENOMEM;
	/* one line of perf script text: no control bytes (spaces stay, as perf prints them) */
	for (size_t i = 0; i < max; i++)
		c[i] = s[i] < ' ' || s[i] == 0x7f ? '?' : (char)s[i];
	c[max] = '\0';
	free(hmap__get(pd->comms, &tid, sizeof(tid)));
	if (!hmap__put(pd->comms, &tid, sizeof(tid), c)) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

static int on_comm(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc)
{
	int pid, tid;
	struct pd_proc *p;

	if (size < 17)
		return 1;
	pid = (int)rd32(r + 8);
	tid = (int)rd32(r + 12);
	p = proc_get(pd, pid);
	if (!p)
		return -ENOMEM;
	if (misc & MISC_COMM_EXEC) {
		if (pid > 0 && sym_cache__exec(pd->sc, pid))
			return -ENOMEM;
		proc_changed(pd, p, pid, true);
	}
	return comm_set(pd, tid, r + 16, strnlen((const char *)r + 16, size - 16));
}

static int on_fork(struct pd *pd, const unsigned char *r, size_t size)
{
	int pid, ppid, tid, ptid;
	struct pd_proc *p;
	const char *pc;

	if (size < 32)
		return 1;
	pid = (int)rd32(r + 8);
	ppid = (int)rd32(r + 12);
	tid = (int)rd32(r + 16);
	ptid = (int)rd32(r + 20);
	pc = hmap__get(pd->comms, &ptid, sizeof(ptid));
	if (pc && tid != ptid && comm_set(pd, tid, (const unsigned char *)pc, strlen(pc)))
		return -ENOMEM;
	if (pid == ppid || pid <= 0)
		return 0; /* a new thread: same mappings */
	if ((ppid > 0 && !proc_get(pd, ppid)) || !(p = proc_get(pd, pid)))
		return -ENOMEM;
	/* a child of the idle task (kthreadd, init) starts empty; any other one gets a copy of
	 * its parent's mappings (the parent is followed from the file too, never from /proc) */
	if (ppid > 0 ? sym_cache__fork(pd->sc, ppid, pid) : sym_cache__exec(pd->sc, pid))
		return -ENOMEM;
	proc_changed(pd, p, pid, true);
	return 0;
}

/* The build-id perf recorded for path (any process), or NULL. */
static const struct pd_bid *bid_find(const struct pd *pd, const char *path)
{
	for (size_t i = 0; i < pd->nbids; i++)
		if (!strcmp(pd->bids[i].path, path))
			return &pd->bids[i];
	return NULL;
}

/* Whether the ELF file at path has build-id id[0..len). */
static bool file_has_bid(const char *path, const unsigned char *id, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct elf_syms *es;
	const unsigned char *have;
	size_t hlen;
	bool same;

	if (fd < 0)
		return false;
	if (elf_syms__begin(fd, NULL, 0, &es))
		return false;
	have = elf_syms__build_id(es, &hlen);
	same = have && hlen == len && !memcmp(have, id, len);
	elf_syms__free(es);
	return same;
}

/* perf's build-id cache: $PERF_BUILDID_DIR or ~/.debug. */
static void cache_dir(char *buf, size_t len)
{
	const char *d = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");

	if (d && *d)
		snprintf(buf, len, "%s", d);
	else
		snprintf(buf, len, "%s/.debug", home && *home ? home : "/root");
}

/* The file to read for a mapping of path whose build-id perf recorded as b: path itself when
 * it still is that file, else perf's cached copy, else "" (gone: frames stay unknown). */
static const char *file_for(struct pd *pd, const char *path, const struct pd_bid *b)
{
	char dir[PATH_MAX], cached[PATH_MAX + 128];
	const char *r;
	int n;

	r = hmap__get(pd->files, path, strlen(path));
	if (r)
		return r;
	if (!b || file_has_bid(path, b->id, b->len)) {
		r = path;
	} else {
		cache_dir(dir, sizeof(dir));
		n = snprintf(cached, sizeof(cached), "%s/.build-id/%02x/", dir, b->id[0]);
		for (size_t i = 1; i < b->len && n > 0 && (size_t)n < sizeof(cached) - 8; i++)
			n += snprintf(cached + n, sizeof(cached) - n, "%02x", b->id[i]);
		if (n > 0 && (size_t)n < sizeof(cached) - 8)
			strcat(cached, "/elf");
		r = file_has_bid(cached, b->id, b->len) ? cached : "";
	}
	r = strdup(r);
	if (!r || !hmap__put(pd->files, path, strlen(path), (void *)r)) {
		free((void *)r);
		return NULL;
	}
	return r;
}

static int on_mmap(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc, bool v2)
{
	size_t name_at = v2 ? 72 : 40;
	struct proc_map m = { 0 };
	const struct pd_bid *b = NULL;
	struct pd_bid own;
	struct pd_proc *p;
	struct stat st;
	const char *file;
	char *path;
	int pid, err;

	if (size <= name_at)
		return 1;
	pid = (int)rd32(r + 8);
	if (pid <= 0 || (misc & MISC_CPUMODE_MASK) == MISC_KERNEL)
		return 0; /* the kernel and its modules: named from kallsyms */
	if (v2 ? !(rd32(r + 64) & PROT_EXEC_BIT) : (misc & MISC_MMAP_DATA))
		return 0;
	m.start = rd64(r + 16);
	m.end = m.start + rd64(r + 24);
	m.pgoff = rd64(r + 32);
	if (m.end <= m.start)
		return 1;
	path = strndup((const char *)r + name_at, strnlen((const char *)r + name_at,
							   size - name_at));
	if (!path)
		return -ENOMEM;
	if (v2 && (misc & MISC_MMAP_BUILD_ID)) {
		own.len = r[40] > 20 ? 20 : r[40];
		memcpy(own.id, r + 44, 20);
		b = &own;
	} else if (v2) {
		m.dev = makedev(rd32(r + 40), rd32(r + 44));
		m.inode = rd64(r + 48);
	}
	if (path[0] == '/') {
		if (!b)
			b = bid_find(pd, path);
		file = file_for(pd, path, b);
		if (!file) {
			free(path);
			return -ENOMEM;
		}
		/* the file galatop reads, by the (dev, inode) it has now */
		if (file[0] && !stat(file, &st) && (b || !m.inode || !v2)) {
			m.dev = st.st_dev;
			m.inode = st.st_ino;
		}
		if (file[0] && file != path && strcmp(file, path)) {
			m.path = (char *)file;
		} else {
			m.path = path;
		}
	} else if (!strncmp(path, "//anon", 6) || !strncmp(path, "/memfd:", 7) ||
		   path[0] == '\0') {
		m.path = (char *)"";
	} else {
		m.path = path; /* [vdso], [heap]... */
	}
	p = proc_get(pd, pid);
	err = p ? sym_cache__mmap(pd->sc, pid, &m) : -ENOMEM;
	if (p)
		proc_changed(pd, p, pid, false);
	free(path);
	return err;
}

/* ---- naming ---- */

static struct pd_sym *sym_slot(struct pd *pd, uint64_t pid_gen, uint64_t addr)
{
	size_t mask, i;

	if (pd->nsyms * 2 >= pd->syms_cap) {
		size_t ncap = pd->syms_cap ? pd->syms_cap * 2 : 4096;
		struct pd_sym *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < pd->syms_cap; j++) {
			const struct pd_sym *o = &pd->syms[j];

			if (!o->pid_gen)
				continue;
			for (i = hash_mix(o->pid_gen * 31 + o->addr) & (ncap - 1); n[i].pid_gen;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = *o;
		}
		free(pd->syms);
		pd->syms = n;
		pd->syms_cap = ncap;
	}
	mask = pd->syms_cap - 1;
	for (i = hash_mix(pid_gen * 31 + addr) & mask; pd->syms[i].pid_gen; i = (i + 1) & mask)
		if (pd->syms[i].pid_gen == pid_gen && pd->syms[i].addr == addr)
			return &pd->syms[i];
	return &pd->syms[i];
}

static int on_ksymbol(struct pd *pd, const unsigned char *r, size_t size)
{
	uint64_t start, end;
	size_t i;
	char *name;

	if (size <= 24)
		return 1;
	start = rd64(r + 8);
	end = start + rd32(r + 16);
	for (i = 0; i < pd->nksyms; i++)
		if (pd->ksyms[i].start == start)
			break;
	if (i < pd->nksyms) {
		free(pd->ksyms[i].name);
		pd->ksyms[i] = pd->ksyms[--pd->nksyms];
	}
	pd->kgen++;
	if (rd16(r + 22) & 1) /* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
		return 0;
	if (end <= start)
		return 1;
	name = malloc(size - 24 + 1);
	if (!name || ARRAY_GROW(pd->ksyms, pd->ksyms_cap, pd->nksyms + 1)) {
		free(name);
		return -ENOMEM;
	}
	set_name(name, size - 24 + 1, r + 24, size - 24);
	pd->ksyms[pd->nksyms].start = start;
	pd->ksyms[pd->nksyms].end = end;
	pd->ksyms[pd->nksyms++].name = name;
	return 0;
}

/* The name of addr in pid (-1: the kernel), as perf script prints it. NULL on ENOMEM. */
static const struct pd_sym *name_of(struct pd *pd, int pid, uint64_t addr)
{
	struct pd_proc *p = pid >= 0 ? proc_get(pd, pid) : NULL;
	uint64_t key = pid < 0 ? 1ull << 63 | pd->kgen
			       : ((uint64_t)(uint32_t)pid + 2) << 32 | (p ? p->gen : 0);
	struct pd_sym *s;
	struct sym_info si;
	int err;

	if (pid >= 0 && !p)
		return NULL;
	s = sym_slot(pd, key, addr);
	if (!s)
		return NULL;
	if (s->pid_gen)
		return s;
	for (size_t i = 0; pid < 0 && i < pd->nksyms; i++) {
		const struct pd_ksym *k = &pd->ksyms[i];

		if (addr >= k->start && addr < k->end) {
			*s = (struct pd_sym){ .pid_gen = key, .addr = addr, .name = k->name,
					      .module = k->name, .pc = addr, .off = addr - k->start,
					      .known = true };
			pd->nsyms++;
			return s;
		}
	}
	err = pid < 0 ? sym_cache__kernel(pd->sc, addr, &si)
		      : sym_cache__user(pd->sc, pid, addr, &si);
	if (err == -ENOMEM)
		return NULL;
	s->pid_gen = key;
	s->addr = addr;
	s->known = !err;
	s->name = si.name;
	s->off = si.offset;
	s->pc = addr;
	if (pid < 0) {
		s->module = si.module;
	} else if (si.kind == FRAME_JIT) {
		s->module = NULL; /* perf's /tmp/perf-PID.map, written when printed */
	} else if (!strcmp(si.module, "[anon]")) {
		s->module = "//anon";
	} else if (si.module[0]) {
		s->module = si.module;
		if (!s->known)
			s->pc = si.offset; /* perf prints the map-relative address */
	} else {
		s->module = "[unknown]";
	}
	pd->nsyms++;
	return s;
}

static int text_reserve(struct pd *pd, size_t n)
{
	return ARRAY_GROW(pd->text, pd->tcap, pd->tlen + n);
}

static char *hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* "\t<pc> <sym>+0x<off> (<dso>)\n" as perf script prints a callchain entry. */
static int put_frame(struct pd *pd, int pid, const struct pd_sym *s)
{
	const char *name = s->known ? s->name : "[unknown]";
	char jit[64];
	const char *mod = s->module;
	size_t nl, ml;
	char *p;

	if (!mod) {
		snprintf(jit, sizeof(jit), "/tmp/perf-%d.map", pid);
		mod = jit;
	}
	nl = strlen(name);
	ml = strlen(mod);
	if (text_reserve(pd, nl + ml + 64))
		return -ENOMEM;
	p = pd->text + pd->tlen;
	*p++ = '\t';
	p = hex(p, s->pc);
	*p++ = ' ';
	memcpy(p, name, nl);
	p += nl;
	if (s->known) {
		memcpy(p, "+0x", 3);
		p = hex(p + 3, s->off);
	}
	*p++ = ' ';
	*p++ = '(';
	memcpy(p, mod, ml);
	p += ml;
	*p++ = ')';
	*p++ = '\n';
	pd->tlen = (size_t)(p - pd->text);
	return 0;
}

static int frame(struct pd *pd, int pid, uint64_t addr, bool kernel)
{
	const struct pd_sym *s = name_of(pd, kernel ? -1 : pid, addr);

	if (!s)
		return -ENOMEM;
	return put_frame(pd, pid, s);
}

static int flush_text(struct pd *pd)
{
	int err = pd->tlen ? perfscript__feed(pd->ps, pd->text, pd->tlen) : 0;

	pd->tlen = 0;
	return err;
}

static int arena_put(struct pd *pd, const void *s, size_t n, size_t *at)
{
	if (n > SIZE_MAX / 2 - pd->alen || ARRAY_GROW(pd->arena, pd->acap, pd->alen + n))
		return -ENOMEM;
	memcpy(pd->arena + pd->alen, s, n);
	*at = pd->alen;
	pd->alen += n;
	return 0;
}

/* The parser's callback: keeps the stack for the seen-samples table, then passes it on. */
static int pass_stack(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct pd *pd = ctx;

	if (arena_put(pd, stack, len, &pd->passed_at))
		return -ENOMEM;
	pd->passed = true;
	pd->passed_len = len;
	return pd->fn(pd->ctx, stack, len, count);
}

static int key_put(struct pd *pd, const void *s, size_t n)
{
	if (ARRAY_GROW(pd->key, pd->kcap, pd->klen + n))
		return -ENOMEM;
	memcpy(pd->key + pd->klen, s, n);
	pd->klen += n;
	return 0;
}

/* The slot of the key being built: a seen sample's, or a free one. NULL on ENOMEM. */
static struct pd_seen *seen_slot(struct pd *pd, uint64_t h)
{
	size_t mask, i;

	if (pd->nseen * 2 >= pd->seen_cap) {
		size_t ncap = pd->seen_cap ? pd->seen_cap * 2 : 1024;
		struct pd_seen *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < pd->seen_cap; j++) {
			if (!pd->seen[j].hash)
				continue;
			for (i = pd->seen[j].hash & (ncap - 1); n[i].hash; i = (i + 1) & (ncap - 1))
				;
			n[i] = pd->seen[j];
		}
		free(pd->seen);
		pd->seen = n;
		pd->seen_cap = ncap;
	}
	mask = pd->seen_cap - 1;
	for (i = h & mask; pd->seen[i].hash; i = (i + 1) & mask) {
		const struct pd_seen *e = &pd->seen[i];

		if (e->hash == h && e->key_len == pd->klen &&
		    !memcmp(pd->arena + e->key, pd->key, pd->klen))
			break;
	}
	return &pd->seen[i];
}

/* The parsed fields of a sample that matter here. */
struct pd_sample {
	uint64_t ip, time, period;
	int pid, tid;
	uint32_t cpu;
	const unsigned char *chain;
	uint64_t nchain;
	const unsigned char *regs;
	uint64_t regs_abi;
	const unsigned char *stack;
	uint64_t stack_size, stack_dyn;
};

/* Parses a sample of attr a; false when its fields overrun it. */
static bool parse_sample(const struct pd_attr *a, const unsigned char *p, const unsigned char *end,
			 struct pd_sample *s)
{
	uint64_t t = a->sample_type, n;

#define NEED(k) do { if ((size_t)(end - p) < (size_t)(k)) return false; } while (0)
	memset(s, 0, sizeof(*s));
	s->period = 0;
	if (t & S_IDENTIFIER) { NEED(8); p += 8; }
	if (t & S_IP) { NEED(8); s->ip = rd64(p); p += 8; }
	if (t & S_TID) { NEED(8); s->pid = (int)rd32(p); s->tid = (int)rd32(p + 4); p += 8; }
	if (t & S_TIME) { NEED(8); s->time = rd64(p); p += 8; }
	if (t & S_ADDR) { NEED(8); p += 8; }
	if (t & S_ID) { NEED(8); p += 8; }
	if (t & S_STREAM_ID) { NEED(8); p += 8; }
	if (t & S_CPU) { NEED(8); s->cpu = rd32(p); p += 8; }
	if (t & S_PERIOD) { NEED(8); s->period = rd64(p); p += 8; }
	if (t & S_READ) {
		uint64_t rf = a->read_format, each = 8 * (1 + !!(rf & R_ID) + !!(rf & R_LOST));
		uint64_t times = 8 * (!!(rf & R_TOTAL_TIME_ENABLED) + !!(rf & R_TOTAL_TIME_RUNNING));

		if (rf & R_GROUP) {
			NEED(8);
			n = rd64(p);
			p += 8;
			if (n > (1u << 16))
				return false;
			NEED(times + n * each);
			p += times + n * each;
		} else {
			NEED(times + each);
			p += times + each;
		}
	}
	if (t & S_CALLCHAIN) {
		NEED(8);
		n = rd64(p);
		p += 8;
		if (n > (size_t)(end - p) / 8)
			return false;
		s->chain = p;
		s->nchain = n;
		p += n * 8;
	}
	if (t & S_RAW) {
		NEED(4);
		n = rd32(p);
		p += 4;
		NEED(n);
		p += n;
	}
	if (t & S_BRANCH_STACK) {
		NEED(8);
		n = rd64(p);
		p += 8;
		if (a->branch_type & BRANCH_HW_INDEX) {
			NEED(8);
			p += 8;
		}
		if (n > (size_t)(end - p) / 24)
			return false;
		p += n * 24;
	}
	if (t & S_REGS_USER) {
		NEED(8);
		s->regs_abi = rd64(p);
		p += 8;
		if (s->regs_abi) {
			n = (uint64_t)__builtin_popcountll(a->regs_mask);
			NEED(n * 8);
			s->regs = p;
			p += n * 8;
		}
	}
	if (t & S_STACK_USER) {
		NEED(8);
		n = rd64(p);
		p += 8;
		if (n) {
			if (n > (size_t)(end - p) || (size_t)(end - p) - n < 8)
				return false;
			s->stack = p;
			s->stack_size = n;
			s->stack_dyn = rd64(p + n);
			if (s->stack_dyn > n)
				s->stack_dyn = n;
		}
	}
#undef NEED
	return true;
}

/* The user register r of the sample (the mask says which are there, in bit order). */
static bool sample_reg(const struct pd_attr *a, const struct pd_sample *s, int r, uint64_t *v)
{
	if (!s->regs || !(a->regs_mask >> r & 1))
		return false;
	*v = rd64(s->regs + 8 * __builtin_popcountll(a->regs_mask & ((1ull << r) - 1)));
	return true;
}

static int unwind_user(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s)
{
	struct unwind_sample us = { .pid = s->pid, .tid = s->tid };
	uint64_t pcs[MAX_FRAMES];
	enum unwind_status status;
	size_t n;
	int err;

	if (!sample_reg(a, s, REG_IP, &us.ip) || !sample_reg(a, s, REG_SP, &us.sp) ||
	    !sample_reg(a, s, REG_BP, &us.bp) || !s->stack_dyn)
		return 0;
	if (!pd->uw && !(pd->uw = unwinder__new(0, pd->sc)))
		return 0; /* no unwinding on this architecture: the kernel part only */
	us.stack = s->stack;
	us.stack_len = s->stack_dyn;
	us.stack_full = s->stack_dyn >= s->stack_size;
	n = unwinder__unwind(pd->uw, &us, pcs, MAX_FRAMES, &status);
	pd->st.unwound++;
	for (size_t i = 0; i < n; i++) {
		err = frame(pd, s->pid, pcs[i], false);
		if (err)
			return err;
	}
	return 0;
}

/* The comm of tid, or perf's name for a thread it never saw (":TID", in a static buffer). */
static const char *comm_of(struct pd *pd, int tid)
{
	static char def[24];
	const char *comm = hmap__get(pd->comms, &tid, sizeof(tid));

	if (comm)
		return comm;
	snprintf(def, sizeof(def), ":%d", tid);
	return def;
}

static int put_header(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s)
{
	const char *comm = comm_of(pd, s->tid);
	uint64_t t = a->sample_type;
	char *p;

	if (text_reserve(pd, strlen(comm) + strlen(a->name) + 128))
		return -ENOMEM;
	/* perf 6.1's columns, so that the script's header regex splits them as it splits
	 * perf's; but PID/TID when the root frame shows them (perf prints the TID only) */
	p = pd->text + pd->tlen;
	if (pd->o->include_pid || pd->o->include_tid)
		p += sprintf(p, "%s %5d/%-5d ", comm, s->pid, s->tid);
	else
		p += sprintf(p, "%s %5d ", comm, s->tid);
	if (t & S_CPU)
		p += sprintf(p, "[%03u] ", s->cpu);
	if (t & S_TIME)
		p += sprintf(p, "%5" PRIu64 ".%06" PRIu64 ": ", s->time / 1000000000,
			     s->time % 1000000000 / 1000);
	if (t & S_PERIOD)
		p += sprintf(p, "%10" PRIu64 " ", s->period);
	p += sprintf(p, "%s: \n", a->name);
	pd->tlen = (size_t)(p - pd->text);
	return 0;
}

/* Whether the stack the parser made for a sample of comm starts with the comm (spaces as
 * '_') as its own frame: else the header regex took more of the line (a comm such as "g"
 * or ":-1" that it cannot split), the time too, and no other sample can share that stack. */
static bool pname_is_comm(const char *stack, size_t len, const char *comm)
{
	size_t n = strlen(comm);

	if (len < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (stack[i] != (comm[i] == ' ' ? '_' : comm[i]))
			return false;
	return len == n || stack[n] == ';' || stack[n] == '-';
}

/* Builds the key of a sample in pd->key: what its collapsed stack depends on. */
static int seen_key(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s,
		    uint16_t misc)
{
	struct pd_proc *p = s->pid >= 0 ? proc_get(pd, s->pid) : NULL;
	const char *comm = comm_of(pd, s->tid);
	uint64_t head[3] = {
		(uint64_t)pd->kgen << 32 | (uint64_t)(a - pd->attrs) << 8 |
			(misc & MISC_CPUMODE_MASK),
		(uint64_t)(uint32_t)s->pid << 32 | (p ? p->gen : 0),
		pd->o->include_tid ? (uint64_t)(uint32_t)s->tid : 0,
	};

	if (s->pid >= 0 && !p)
		return -ENOMEM;
	pd->klen = 0;
	if (key_put(pd, head, sizeof(head)) || key_put(pd, comm, strlen(comm) + 1))
		return -ENOMEM;
	if (s->chain)
		return key_put(pd, s->chain, s->nchain * 8);
	return key_put(pd, &s->ip, sizeof(s->ip));
}

static int on_sample(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc)
{
	const struct pd_attr *a;
	struct pd_seen *seen = NULL;
	struct pd_sample s;
	bool kernel = (misc & MISC_CPUMODE_MASK) == MISC_KERNEL;
	uint64_t id = 0;
	int err;

	if (pd->nattrs > 1 && pd->nattrs) {
		uint64_t t = pd->attrs[0].sample_type;
		size_t at = t & S_IDENTIFIER ? 8
			    : 8 + 8 * (!!(t & S_IP) + !!(t & S_TID) + !!(t & S_TIME) +
				       !!(t & S_ADDR));

		if (!(t & (S_IDENTIFIER | S_ID)) || at + 8 > size)
			return 1;
		id = rd64(r + at);
	}
	a = attr_of(pd, id);
	if (!a || !parse_sample(a, r + 8, r + size, &s))
		return 1;
	if (!(a->sample_type & S_TID))
		s.pid = s.tid = -1;
	pd->st.samples++;
	if (!(a->sample_type & S_STACK_USER)) {
		/* a user stack copy differs at every sample: those are never seen before */
		err = seen_key(pd, a, &s, misc);
		if (err)
			return err;
		seen = seen_slot(pd, hash_bytes(pd->key, pd->klen) | 1);
		if (!seen)
			return -ENOMEM;
		if (seen->hash && seen->filtered)
			return 0;
		if (seen->hash)
			return pd->fn(pd->ctx, pd->arena + seen->stack, seen->stack_len,
				      pd->o->count_samples || !s.period ? 1 : s.period);
	}
	err = put_header(pd, a, &s);
	if (!err && s.chain) {
		for (uint64_t i = 0; !err && i < s.nchain; i++) {
			uint64_t ip = rd64(s.chain + 8 * i);

			if (ip >= CONTEXT_MAX) {
				kernel = ip == CONTEXT_KERNEL || ip == CONTEXT_HV;
				continue;
			}
			err = frame(pd, s.pid, ip, kernel);
		}
	} else if (!err && (a->sample_type & S_IP)) {
		err = frame(pd, s.pid, s.ip, kernel);
	}
	if (!err && (a->sample_type & S_STACK_USER) && s.pid > 0)
		err = unwind_user(pd, a, &s);
	if (!err && text_reserve(pd, 1) == 0)
		pd->text[pd->tlen++] = '\n';
	else if (!err)
		err = -ENOMEM;
	if (!err && seen) {
		uint64_t h = hash_bytes(pd->key, pd->klen) | 1;

		pd->passed = false;
		err = flush_text(pd);
		if (!err)
			err = arena_put(pd, pd->key, pd->klen, &seen->key);
		if (!err && (!pd->passed || pname_is_comm(pd->arena + pd->passed_at,
							  pd->passed_len, comm_of(pd, s.tid)))) {
			seen->hash = h;
			seen->key_len = pd->klen;
			seen->filtered = !pd->passed;
			seen->stack = pd->passed_at;
			seen->stack_len = pd->passed_len;
			pd->nseen++;
		}
	} else if (!err && pd->tlen >= (1u << 20)) {
		err = flush_text(pd);
	}
	return err;
}

/* ---- the data section ---- */

/* Bytes that follow record r outside its size (AUXTRACE data, pipe-mode tracing data). */
static uint64_t rec_extra(const unsigned char *r, size_t size)
{
	uint32_t type = rd32(r);

	if (type == REC_AUXTRACE && size >= 16)
		return rd64(r + 8);
	if (type == REC_TRACING_DATA && size >= 12)
		return rd32(r + 8);
	return 0;
}

/* Pipe-mode metadata records: attributes, event names, build-ids. */
static int on_meta(struct pd *pd, const unsigned char *r, size_t size)
{
	uint32_t type = rd32(r);
	size_t used;
	int err;

	if (type == REC_HEADER_ATTR) {
		err = attr_add(pd, r + 8, size - 8, &used);
		if (err)
			return err == -EINVAL ? 1 : err;
		for (size_t at = 8 + used; at + 8 <= size; at += 8)
			if (id_add(pd, rd64(r + at), pd->nattrs - 1))
				return -ENOMEM;
		return 0;
	}
	if (type == REC_EVENT_UPDATE && size > 24 && rd64(r + 8) == 2 /* NAME */) {
		struct pd_attr *a = attr_of(pd, rd64(r + 16));

		if (a)
			set_name(a->name, sizeof(a->name), r + 24, size - 24);
		return 0;
	}
	if (type == REC_BUILD_ID)
		return bid_add(pd, r, size);
	if (type == REC_HEADER_FEATURE && size >= 16) {
		if (rd64(r + 8) == FEAT_EVENT_DESC)
			read_event_desc(pd, r + 16, size - 16);
		return 0;
	}
	return 0;
}

/* Walks the records of [at, end): metadata read now, the rest listed with its time. */
static int list_records(struct pd *pd, size_t at, size_t end)
{
	uint64_t prev = 0;
	int err;

	while (at < end) {
		const unsigned char *r = pd->buf + at;
		size_t size;
		uint64_t extra;
		uint32_t type;

		if (end - at < 8)
			return fail(pd, "truncated perf.data: %zu bytes left at offset %zu, less than "
				    "a record header", end - at, at);
		size = rd16(r + 6);
		type = rd32(r);
		if (size < 8)
			return fail(pd, "corrupt perf.data: record of %zu bytes at offset %zu", size,
				    at);
		if (size > end - at)
			return fail(pd, "truncated perf.data: the record at offset %zu needs %zu "
				    "bytes, %zu are left", at, size, end - at);
		extra = rec_extra(r, size);
		if (extra > end - at - size)
			return fail(pd, "truncated perf.data: the record at offset %zu carries "
				    "%" PRIu64 " more bytes than the file has", at, extra);
		if (type == REC_COMPRESSED)
			return fail(pd, "compressed records (perf record -z): record without -z, "
				    "or decompress with perf inject");
		pd->st.records++;
		if (type >= REC_HEADER_ATTR) {
			err = on_meta(pd, r, size);
			if (err < 0)
				return err;
			pd->st.bad += err > 0;
		} else {
			if (ARRAY_GROW(pd->recs, pd->recs_cap, pd->nrecs + 1))
				return -ENOMEM;
			prev = rec_time(pd, r, size, prev);
			pd->recs[pd->nrecs].time = prev;
			pd->recs[pd->nrecs++].off = at;
		}
		at += size + extra;
	}
	return 0;
}

static int replay(struct pd *pd)
{
	uint64_t good = 0;
	int err = 0;

	qsort(pd->recs, pd->nrecs, sizeof(*pd->recs), rec_cmp);
	for (size_t i = 0; i < pd->nrecs && !err; i++) {
		const unsigned char *r = pd->buf + pd->recs[i].off;
		size_t size = rd16(r + 6);
		uint16_t misc = rd16(r + 4);

		switch (rd32(r)) {
		case REC_SAMPLE: err = on_sample(pd, r, size, misc); break;
		case REC_COMM: err = on_comm(pd, r, size, misc); break;
		case REC_FORK: err = on_fork(pd, r, size); break;
		case REC_MMAP: err = on_mmap(pd, r, size, misc, false); break;
		case REC_MMAP2: err = on_mmap(pd, r, size, misc, true); break;
		case REC_LOST:
			if (size >= 24)
				pd->st.lost += rd64(r + 16);
			break;
		case REC_KSYMBOL: err = on_ksymbol(pd, r, size); break;
		case REC_EXIT: break;
		default: pd->st.unknown++; break;
		}
		if (err > 0) {
			pd->st.bad++;
			err = 0;
		} else if (!err) {
			good++;
		}
	}
	if (!err)
		err = flush_text(pd);
	if (!err && pd->st.bad > good)
		return fail(pd, "corrupt perf.data: %" PRIu64 " of %" PRIu64 " records overrun "
			    "themselves", pd->st.bad, pd->st.bad + good);
	return err;
}

/* Reads the running kernel's build-id from /sys/kernel/notes; 0 when unknown. */
static size_t running_kernel_bid(unsigned char *id)
{
	unsigned char notes[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, notes, sizeof(notes)) : -1;
	size_t at = 0;

	if (fd >= 0)
		close(fd);
	while (n > 0 && at + 12 <= (size_t)n) {
		uint32_t namesz = rd32(notes + at), descsz = rd32(notes + at + 4);
		uint32_t type = rd32(notes + at + 8);
		size_t name_at = at + 12, desc_at = name_at + ((namesz + 3) & ~3u);

		if (desc_at + descsz > (size_t)n)
			break;
		if (type == 3 && namesz == 4 && !memcmp(notes + name_at, "GNU", 4) && descsz <= 20) {
			memcpy(id, notes + desc_at, descsz);
			return descsz;
		}
		at = desc_at + ((descsz + 3) & ~3u);
	}
	return 0;
}

/* Names kernel frames from the recorded kernel: perf's copy of its kallsyms, taken when the
 * recording ended (a file: read in a few ms, where /proc/kallsyms costs 100+ ms of kernel
 * time, and it has the modules loaded then), else the running kernel's when the build-ids
 * agree (or nothing says). Starts reading it on a thread while the records are listed. */
static int choose_kallsyms(struct pd *pd)
{
	const struct pd_bid *b = bid_find(pd, "[kernel.kallsyms]");
	char dir[PATH_MAX], path[PATH_MAX + 128];
	int n, err;

	err = b ? 0 : sym_cache__kernel_preload(pd->sc);
	if (!b)
		return err == -ENOMEM ? err : 0;
	cache_dir(dir, sizeof(dir));
	n = snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/", dir);
	for (size_t i = 0; i < b->len && n > 0 && (size_t)n < sizeof(path) - 16; i++)
		n += snprintf(path + n, sizeof(path) - n, "%02x", b->id[i]);
	if (n <= 0 || (size_t)n >= sizeof(path) - 16)
		return 0;
	strcat(path, "/kallsyms");
	if (!access(path, R_OK)) {
		err = sym_cache__set_kallsyms_path(pd->sc, path);
	} else {
		unsigned char run[20];
		size_t rlen = running_kernel_bid(run);

		if (rlen && (rlen != b->len || memcmp(run, b->id, rlen)))
			pd->st.other_kernel = true;
	}
	if (!err)
		err = sym_cache__kernel_preload(pd->sc);
	return err == -ENOMEM ? err : 0;
}

static int read_file_header(struct pd *pd, size_t *data_at, size_t *data_end)
{
	const unsigned char *b = pd->buf;
	uint64_t attr_size, attrs_off, attrs_size, data_off, data_size;

	if (pd->len < FILE_HEADER_SIZE)
		return fail(pd, "truncated perf.data: %zu bytes, less than its header", pd->len);
	attr_size = rd64(b + 16);
	attrs_off = rd64(b + 24);
	attrs_size = rd64(b + 32);
	data_off = rd64(b + 40);
	data_size = rd64(b + 48);
	if (attr_size >= 64 + 16 && attr_size <= 4096 && !(attrs_size % attr_size) &&
	    attrs_off <= UINT64_MAX - attrs_size && attrs_off + attrs_size > pd->len)
		return fail(pd, "truncated perf.data: its event attributes end at %" PRIu64 " but "
			    "the file has %zu bytes", attrs_off + attrs_size, pd->len);
	if (attr_size < 64 + 16 || attr_size > 4096 || attrs_off > pd->len ||
	    attrs_size > pd->len - attrs_off || attrs_size % attr_size)
		return fail(pd, "corrupt perf.data: bad attribute section (%" PRIu64 " bytes at "
			    "%" PRIu64 ", %" PRIu64 " each)", attrs_size, attrs_off, attr_size);
	if (data_off > pd->len || data_size > pd->len - data_off)
		return fail(pd, "truncated perf.data: its data section ends at %" PRIu64 " but the "
			    "file has %zu bytes", data_off + data_size, pd->len);
	if (!data_size)
		return fail(pd, "perf.data without data: perf record did not finish (its data "
			    "size is 0)");
	for (uint64_t at = attrs_off; at < attrs_off + attrs_size; at += attr_size) {
		const unsigned char *a = b + at;
		uint64_t ids_off = rd64(a + attr_size - 16), ids_size = rd64(a + attr_size - 8);
		size_t used;
		int err = attr_add(pd, a, attr_size - 16, &used);

		if (err)
			return err == -EINVAL ? fail(pd, "corrupt perf.data: bad attribute") : err;
		if (ids_off > pd->len || ids_size > pd->len - ids_off)
			return fail(pd, "corrupt perf.data: the ids of event %zu are outside the file",
				    pd->nattrs - 1);
		for (uint64_t i = 0; i + 8 <= ids_size; i += 8)
			if (id_add(pd, rd64(b + ids_off + i), pd->nattrs - 1))
				return -ENOMEM;
	}
	if (!pd->nattrs)
		return fail(pd, "corrupt perf.data: no events");
	*data_at = data_off;
	*data_end = data_off + data_size;
	return read_features(pd, b + 72, data_off + data_size);
}

static void free_comm(const void *key, size_t len, void *val, void *arg)
{
	free(val);
}

int perfdata_collapse(const void *buf, size_t len, const char *label, struct sym_cache *sc,
		      const struct perfscript_opts *o, perfscript_stack_fn fn, void *ctx,
		      struct perfdata_stats *st, char *err, size_t errlen)
{
	struct pd pd = { .buf = buf, .len = len, .label = label, .err = err, .errlen = errlen,
			 .sc = sc, .o = o, .fn = fn, .ctx = ctx };
	size_t at = 0, end = 0;
	int ret;

	err[0] = '\0';
	if (!perfdata_sniff(buf, len))
		return fail(&pd, "not a perf.data file");
	if (len < 16)
		return fail(&pd, "truncated perf.data: %zu bytes", len);
	pd.pipe = rd64(pd.buf + 8) == PIPE_HEADER_SIZE;
	pd.comms = hmap__new();
	pd.procs = hmap__new();
	pd.files = hmap__new();
	pd.ps = perfscript__new(o, pass_stack, &pd);
	if (!sc) {
		pd.sc = pd.own_sc = sym_cache__new();
		if (pd.sc)
			sym_cache__set_lines(pd.sc, 0);
	}
	if (!pd.comms || !pd.procs || !pd.files || !pd.sc || !pd.ps) {
		ret = -ENOMEM;
		goto out;
	}
	if (pd.pipe) {
		at = PIPE_HEADER_SIZE;
		end = len;
		ret = 0;
	} else {
		ret = read_file_header(&pd, &at, &end);
	}
	if (!ret && pd.own_sc && !pd.pipe)
		ret = choose_kallsyms(&pd); /* pipe mode: after the build-ids, at the end */
	if (!ret)
		ret = list_records(&pd, at, end);
	if (!ret && !pd.nattrs)
		ret = fail(&pd, "truncated perf.data: the stream ends before its event attributes");
	if (!ret && pd.own_sc && pd.pipe)
		ret = choose_kallsyms(&pd);
	if (!ret)
		ret = replay(&pd);
	if (!ret)
		ret = perfscript__end_file(pd.ps);
	if (ret == -EBADMSG) /* the text made here is perf script, unless a bug says otherwise */
		ret = fail(&pd, "internal error: samples not read back");
out:
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "%s: %s", label, strerror(ENOMEM));
	if (st)
		*st = pd.st;
	if (pd.comms)
		hmap__each(pd.comms, free_comm, NULL);
	if (pd.procs)
		hmap__each(pd.procs, free_comm, NULL);
	if (pd.files)
		hmap__each(pd.files, free_comm, NULL);
	hmap__free(pd.comms);
	hmap__free(pd.procs);
	hmap__free(pd.files);
	for (size_t i = 0; i < pd.nbids; i++)
		free(pd.bids[i].path);
	for (size_t i = 0; i < pd.nksyms; i++)
		free(pd.ksyms[i].name);
	free(pd.ksyms);
	free(pd.bids);
	free(pd.attrs);
	free(pd.ids);
	free(pd.recs);
	free(pd.syms);
	free(pd.text);
	free(pd.seen);
	free(pd.arena);
	free(pd.key);
	perfscript__free(pd.ps);
	unwinder__free(pd.uw);
	sym_cache__free(pd.own_sc);
	return ret;
}

int perfdata_collapse_file(FILE *f, const void *head, size_t n, const char *label,
			   const struct perfscript_opts *o, perfscript_stack_fn fn, void *ctx,
			   struct perfdata_stats *st, char *err, size_t errlen)
{
	struct stat sb;
	int fd = fileno(f), ret;
	char *buf = NULL;
	size_t len = n, cap = 0;
	void *map;

	if (fd >= 0 && !fstat(fd, &sb) && S_ISREG(sb.st_mode) && sb.st_size >= (off_t)n &&
	    sb.st_size > 0) {
		map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			madvise(map, (size_t)sb.st_size, MADV_SEQUENTIAL);
			ret = perfdata_collapse(map, (size_t)sb.st_size, label, NULL, o, fn, ctx,
						st, err, errlen);
			munmap(map, (size_t)sb.st_size);
			return ret;
		}
	}
	/* a pipe: the rest of the stream, in growing blocks */
	if (ARRAY_GROW(buf, cap, n + (1u << 20)))
		return -ENOMEM;
	memcpy(buf, head, n);
	for (;;) {
		size_t got = fread(buf + len, 1, cap - len, f);

		len += got;
		if (got == 0)
			break;
		if (len == cap && ARRAY_GROW(buf, cap, len + 1)) {
			free(buf);
			return -ENOMEM;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read %s: %s", label, strerror(errno ? errno : EIO));
		free(buf);
		return -EIO;
	}
	ret = perfdata_collapse(buf, len, label, NULL, o, fn, ctx, st, err, errlen);
	free(buf);
	return ret;
}
