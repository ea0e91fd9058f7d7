/* The perf.data reader's naming: processes, comms, mappings and kernel symbols followed from
 * the records, frames named through the symbol room, and the text perf script prints for a
 * sample. See perfdata_int.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "perfdata_int.h"
#include "../symbols/elf_syms.h"
#include "../symbols/hmap.h"
#include "../symbols/symbols.h"
#include "../symbols/unwind.h"
#include "../util/grow.h"
#include "../model/hash.h"

struct pd_proc *pd_proc_get(struct pd *pd, int pid)
{
	unsigned at = (unsigned)pid % 64;
	struct pd_proc *p;

	if (pd->proc_cache[at].proc && pd->proc_cache[at].pid == pid)
		return pd->proc_cache[at].proc; /* states are never freed before the end */
	p = hmap__get(pd->procs, &pid, sizeof(pid));
	if (p) {
		pd->proc_cache[at].pid = pid;
		pd->proc_cache[at].proc = p;
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
	if (pd->comm_cache[(unsigned)tid % 64].tid == tid)
		pd->comm_cache[(unsigned)tid % 64].tid = 0;
	if (!hmap__put(pd->comms, &tid, sizeof(tid), c)) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

int pd_on_comm(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc)
{
	int pid, tid;
	struct pd_proc *p;

	if (size < 17)
		return 1;
	pid = (int)rd32(r + 8);
	tid = (int)rd32(r + 12);
	p = pd_proc_get(pd, pid);
	if (!p)
		return -ENOMEM;
	if (misc & MISC_COMM_EXEC) {
		if (pid > 0 && sym_cache__exec(pd->sc, pid))
			return -ENOMEM;
		proc_changed(pd, p, pid, true);
	}
	return comm_set(pd, tid, r + 16, strnlen((const char *)r + 16, size - 16));
}

int pd_on_fork(struct pd *pd, const unsigned char *r, size_t size)
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
	if ((ppid > 0 && !pd_proc_get(pd, ppid)) || !(p = pd_proc_get(pd, pid)))
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

/* What a mapped path stands for: the file to read, and its (dev, inode) now. */
struct pd_file {
	bool recorded;	/* perf's build-id table has path */
	bool found;	/* the file to read was found (stat) */
	dev_t dev;
	ino_t ino;
	char path[]; /* the file to read, "" when none */
};

/* The file to read for a mapping of path whose build-id is own (from the record) or else the
 * one perf's table recorded: path itself when it still is that file, else perf's cached copy,
 * else "" (gone: frames stay unknown). Looked up once per path (a busy machine's capture maps
 * the same libraries thousands of times). NULL on ENOMEM. */
static const struct pd_file *file_for(struct pd *pd, const char *path, const struct pd_bid *own)
{
	char dir[PATH_MAX], cached[PATH_MAX + 128];
	const struct pd_bid *b;
	struct pd_file *f;
	const char *r;
	struct stat st;
	size_t len = strlen(path);
	int n;

	f = hmap__get(pd->files, path, len);
	if (f)
		return f;
	b = own ? own : bid_find(pd, path);
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
	f = malloc(sizeof(*f) + strlen(r) + 1);
	if (!f)
		return NULL;
	strcpy(f->path, r);
	f->recorded = b && b != own;
	f->found = r[0] && !stat(r, &st);
	f->dev = f->found ? st.st_dev : 0;
	f->ino = f->found ? st.st_ino : 0;
	if (!hmap__put(pd->files, path, len, f)) {
		free(f);
		return NULL;
	}
	return f;
}

int pd_on_mmap(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc, bool v2)
{
	size_t name_at = v2 ? 72 : 40;
	struct proc_map m = { 0 };
	const struct pd_bid *b = NULL;
	struct pd_bid own;
	const struct pd_file *file;
	struct pd_proc *p;
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
		file = file_for(pd, path, b);
		if (!file) {
			free(path);
			return -ENOMEM;
		}
		/* the file galatop reads, by the (dev, inode) it has now */
		if (file->found && (b || file->recorded || !m.inode || !v2)) {
			m.dev = file->dev;
			m.inode = file->ino;
		}
		m.path = file->path[0] && strcmp(file->path, path) ? (char *)file->path : path;
	} else if (!strncmp(path, "//anon", 6) || !strncmp(path, "/memfd:", 7) ||
		   path[0] == '\0') {
		m.path = (char *)"";
	} else {
		m.path = path; /* [vdso], [heap]... */
	}
	p = pd_proc_get(pd, pid);
	err = p ? sym_cache__mmap(pd->sc, pid, &m) : -ENOMEM;
	if (p)
		proc_changed(pd, p, pid, false);
	free(path);
	return err;
}

/* The slot of (pid_gen, addr) in the table (which has room): its name's, or a free one. */
static struct pd_sym_slot *sym_probe(struct pd *pd, uint64_t pid_gen, uint64_t addr, uint64_t h)
{
	size_t mask = pd->sym_slots_cap - 1, i;

	for (i = h & mask; pd->sym_slots[i].hash; i = (i + 1) & mask)
		if (pd->sym_slots[i].addr == addr && pd->sym_slots[i].pid_gen == pid_gen)
			break;
	return &pd->sym_slots[i];
}

/* The slot of (pid_gen, addr): its name's, or a free slot the caller fills. NULL on ENOMEM. */
static struct pd_sym_slot *sym_slot(struct pd *pd, uint64_t pid_gen, uint64_t addr, uint64_t h)
{
	struct pd_sym_slot *slot = pd->sym_slots_cap ? sym_probe(pd, pid_gen, addr, h) : NULL;

	if (slot && slot->hash)
		return slot; /* most frames: named before */
	/* a new one: room for it first (the table may move) */
	if (pd_table_room(&pd->sym_slots, &pd->sym_slots_cap, pd->nsym_slots,
			  sizeof(*pd->sym_slots), 4096))
		return NULL;
	return sym_probe(pd, pid_gen, addr, h);
}

/* The slot of offset off of file m, or a free one the caller fills (m: a mapping of it);
 * *h gets its hash. NULL on ENOMEM. */
static struct pd_file_slot *file_slot(struct pd *pd, const struct sym_module *m, uint64_t off,
				      uint64_t *h)
{
	size_t mask, i;

	*h = hash_mix(hash_mix((uint64_t)(uintptr_t)m->path ^ m->dev) ^ (m->inode * 31 + off)) | 1;
	if (pd_table_room(&pd->file_slots, &pd->file_slots_cap, pd->nfile_slots,
			  sizeof(*pd->file_slots), 1024))
		return NULL;
	mask = pd->file_slots_cap - 1;
	for (i = *h & mask; pd->file_slots[i].hash; i = (i + 1) & mask) {
		const struct pd_file_slot *f = &pd->file_slots[i];

		if (f->off == off && f->path == m->path && f->dev == m->dev && f->inode == m->inode)
			break;
	}
	return &pd->file_slots[i];
}

int pd_on_ksymbol(struct pd *pd, const unsigned char *r, size_t size)
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
	pd_set_name(name, size - 24 + 1, r + 24, size - 24);
	pd->ksyms[pd->nksyms].start = start;
	pd->ksyms[pd->nksyms].end = end;
	pd->ksyms[pd->nksyms++].name = name;
	return 0;
}

/* The name of addr in pid (-1: the kernel), as perf script prints it. NULL on ENOMEM. */
/* The key of addr in pid (-1: the kernel) in the table of named addresses, and its hash;
 * false on ENOMEM. */
static bool sym_key(struct pd *pd, int pid, uint64_t addr, uint64_t *key, uint64_t *h)
{
	struct pd_proc *p = pid >= 0 ? pd_proc_get(pd, pid) : NULL;

	*key = pid < 0 ? 1ull << 63 | pd->kgen
		       : ((uint64_t)(uint32_t)pid + 2) << 32 | (p ? p->gen : 0);
	*h = hash_mix(*key * 31 + addr) | 1;
	return pid < 0 || p;
}

static const struct pd_sym *name_of(struct pd *pd, int pid, uint64_t addr)
{
	uint64_t key, h;
	struct pd_sym_slot *slot;
	struct pd_file_slot *fslot = NULL;
	struct sym_module m;
	struct pd_sym *s;
	struct sym_info si;
	uint64_t fh = 0, foff = 0;
	int err;

	if (!sym_key(pd, pid, addr, &key, &h))
		return NULL;
	slot = sym_slot(pd, key, addr, h);
	if (!slot)
		return NULL;
	if (slot->hash)
		return &pd->syms[slot->idx];
	/* an offset of a file is named alike in every process that maps it: once, one entry
	 * for all (the line perf script prints for it differs by the address of a named one
	 * only, which the script drops) */
	if (pid >= 0 && !sym_cache__module(pd->sc, pid, addr, false, &m) && m.path[0] == '/' &&
	    (m.dev || m.inode)) {
		foff = addr - m.start + m.pgoff;
		fslot = file_slot(pd, &m, foff, &fh);
		if (!fslot)
			return NULL;
		if (fslot->hash) {
			*slot = (struct pd_sym_slot){ .hash = h, .pid_gen = key, .addr = addr,
						      .idx = fslot->idx };
			pd->nsym_slots++;
			return &pd->syms[fslot->idx];
		}
	}
	if (BIG_ARRAY_GROW(pd->syms, pd->syms_cap, pd->nsyms + 1))
		return NULL;
	s = &pd->syms[pd->nsyms];
	*s = (struct pd_sym){ 0 };
	for (size_t i = 0; pid < 0 && i < pd->nksyms; i++) {
		const struct pd_ksym *k = &pd->ksyms[i];

		if (addr >= k->start && addr < k->end) {
			*s = (struct pd_sym){ .name = k->name, .module = k->name, .pc = addr,
					      .off = addr - k->start, .known = true,
					      .name_len = (uint32_t)strlen(k->name) };
			s->module_len = s->name_len;
			goto named;
		}
	}
	err = pid < 0 ? sym_cache__kernel(pd->sc, addr, &si)
		      : sym_cache__user(pd->sc, pid, addr, &si);
	if (err == -ENOMEM)
		return NULL;
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
	s->name_len = (uint32_t)strlen(s->known ? s->name : "[unknown]");
	s->module_len = s->module ? (uint32_t)strlen(s->module) : 0;
	if (fslot) {
		*fslot = (struct pd_file_slot){ .hash = fh, .path = m.path, .dev = m.dev,
						.inode = m.inode, .off = foff, .idx = pd->nsyms };
		pd->nfile_slots++;
	}
named:
	*slot = (struct pd_sym_slot){ .hash = h, .pid_gen = key, .addr = addr, .idx = pd->nsyms };
	pd->nsym_slots++;
	return &pd->syms[pd->nsyms++];
}

int pd_text_reserve(struct pd *pd, size_t n)
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

	nl = s->name_len;
	ml = s->module_len;
	if (!mod) {
		ml = (size_t)snprintf(jit, sizeof(jit), "/tmp/perf-%d.map", pid);
		mod = jit;
	}
	if (pd_text_reserve(pd, nl + ml + 64))
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

int pd_frame(struct pd *pd, int pid, uint64_t addr, bool kernel)
{
	struct pd_sym *s = (struct pd_sym *)name_of(pd, kernel ? -1 : pid, addr);
	bool mode = perfscript__frame_mode(pd->ps);
	const char *frame;
	size_t at = pd->tlen, len;
	int err;

	if (!s)
		return -ENOMEM;
	if (s->parsed[mode] == PD_FRAME_UNPARSED && !s->known && !pd->o->include_addrs) {
		/* parsed as the first unknown frame of its module was */
		void *rep = pd->unk_rep && pd->unk_module == s->module
				    ? pd->unk_rep
				    : hmap__get(pd->unknowns, &s->module, sizeof(s->module));
		size_t i = (size_t)(uintptr_t)rep - 1;

		if (!rep && !hmap__put(pd->unknowns, &s->module, sizeof(s->module),
				       (void *)(uintptr_t)(s - pd->syms + 1)))
			return -ENOMEM;
		pd->unk_module = s->module; /* junk addresses come in runs of one module */
		pd->unk_rep = rep ? rep : (void *)(uintptr_t)(s - pd->syms + 1);
		if (rep && pd->syms[i].parsed[mode] != PD_FRAME_UNPARSED) {
			s->parsed[mode] = pd->syms[i].parsed[mode];
			s->frame_at[mode] = pd->syms[i].frame_at[mode];
			s->frame_len[mode] = pd->syms[i].frame_len[mode];
		}
	}
	if (s->parsed[mode] == PD_FRAME_UNPARSED) {
		/* the line perf script prints, parsed once for every sample it is in */
		err = put_frame(pd, pid, s);
		if (err)
			return err;
		err = perfscript__frame_parse(pd->ps, pd->text + at, pd->tlen - at - 1, &frame, &len);
		if (err <= 0)
			return err ? err : pd_flush_text(pd); /* not a frame line: fed as it is */
		pd->tlen = at;
		if (frame && (len > UINT32_MAX || pd_arena_put(pd, frame, len, &s->frame_at[mode])))
			return -ENOMEM;
		s->frame_len[mode] = (uint32_t)len;
		s->parsed[mode] = frame ? PD_FRAME_ADDS : PD_FRAME_NOTHING;
	}
	return perfscript__frame_push(pd->ps, s->parsed[mode] == PD_FRAME_ADDS ?
					      pd->arena + s->frame_at[mode] : NULL,
				      s->frame_len[mode]);
}

/* The user register r of the sample (the mask says which are there, in bit order). */
static bool sample_reg(const struct pd_attr *a, const struct pd_sample *s, int r, uint64_t *v)
{
	if (!s->regs || !(a->regs_mask >> r & 1))
		return false;
	*v = rd64(s->regs + 8 * __builtin_popcountll(a->regs_mask & ((1ull << r) - 1)));
	return true;
}

size_t pd_unwind_user(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s,
		      uint64_t *pcs, size_t max)
{
	struct unwind_sample us = { .pid = s->pid, .tid = s->tid };
	enum unwind_status status;
	size_t n;

	if (!sample_reg(a, s, REG_IP, &us.ip) || !sample_reg(a, s, REG_SP, &us.sp) ||
	    !sample_reg(a, s, REG_BP, &us.bp) || !s->stack_dyn)
		return 0;
	if (!pd->uw && !(pd->uw = unwinder__new(0, pd->sc)))
		return 0; /* no unwinding on this architecture: the kernel part only */
	us.stack = s->stack;
	us.stack_len = s->stack_dyn;
	us.stack_full = s->stack_dyn >= s->stack_size;
	n = unwinder__unwind(pd->uw, &us, pcs, max, &status);
	pd->st.unwound++;
	return n;
}

/* The comm of tid, or perf's name for a thread it never saw: "swapper" for the idle task (perf
 * names it so from the start), else ":TID" (in a static buffer). */
const char *pd_comm_of(struct pd *pd, int tid)
{
	static char def[24];
	unsigned at = (unsigned)tid % 64;
	const char *comm;

	if (tid && pd->comm_cache[at].tid == tid)
		return pd->comm_cache[at].comm;
	comm = hmap__get(pd->comms, &tid, sizeof(tid));
	if (comm) {
		pd->comm_cache[at].tid = tid;
		pd->comm_cache[at].comm = comm;
		return comm;
	}
	if (tid == 0)
		return "swapper";
	snprintf(def, sizeof(def), ":%d", tid);
	return def;
}

/* Appends v (negative when neg) in decimal at p, right-aligned in at least width bytes, padded
 * with pad: printf's "%*d" (pad ' ') or "%0*u" (pad '0', v >= 0). The end of it. */
static char *put_dec(char *p, bool neg, uint64_t v, int width, char pad)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
				    "31323334353637383940414243444546474849505152535455565758596061"
				    "62636465666768697071727374757677787980818283848586878889909192"
				    "93949596979899";
	uint64_t ten = 10;
	int n = 1;
	char *e;

	/* its digits counted, then written from the last, two at a time: a header holds five
	 * numbers, for thousands of samples */
	while (n < 20 && v >= ten) {
		n++;
		ten = n < 20 ? ten * 10 : ten;
	}
	for (int k = n + neg; k < width; k++)
		*p++ = pad;
	if (neg)
		*p++ = '-';
	e = p + n;
	while (v >= 100) {
		const char *d = pairs + 2 * (v % 100);

		*--e = d[1];
		*--e = d[0];
		v /= 100;
	}
	if (v >= 10) {
		*--e = pairs[2 * v + 1];
		*--e = pairs[2 * v];
	} else {
		*--e = (char)('0' + v);
	}
	return p + n;
}

/* An int as printf's "%*d", or "%-*d" when left. */
static char *put_int(char *p, int v, int width, bool left)
{
	char *start = p;

	p = put_dec(p, v < 0, v < 0 ? -(uint64_t)(int64_t)v : (uint64_t)v, left ? 0 : width, ' ');
	while (p - start < width)
		*p++ = ' ';
	return p;
}

int pd_put_header(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s)
{
	const char *comm = s->comm;
	uint64_t t = a->sample_type;
	size_t cl = strlen(comm), nl = strlen(a->name);
	char *p;

	if (pd_text_reserve(pd, cl + nl + 128))
		return -ENOMEM;
	/* perf 6.1's columns, so that the script's header regex splits them as it splits
	 * perf's; but PID/TID when the root frame shows them (perf prints the TID only):
	 * "%s %5d/%-5d " or "%s %5d ", "[%03u] ", "%5lu.%06lu: ", "%10lu ", "%s: \n" */
	p = pd->text + pd->tlen;
	memcpy(p, comm, cl);
	p += cl;
	*p++ = ' ';
	if (pd->o->include_pid || pd->o->include_tid) {
		p = put_int(p, s->pid, 5, false);
		*p++ = '/';
		p = put_int(p, s->tid, 5, true);
	} else {
		p = put_int(p, s->tid, 5, false);
	}
	*p++ = ' ';
	if (t & S_CPU) {
		*p++ = '[';
		p = put_dec(p, false, s->cpu, 3, '0');
		*p++ = ']';
		*p++ = ' ';
	}
	if (t & S_TIME) {
		p = put_dec(p, false, s->time / 1000000000, 5, ' ');
		*p++ = '.';
		p = put_dec(p, false, s->time % 1000000000 / 1000, 6, '0');
		*p++ = ':';
		*p++ = ' ';
	}
	if (t & S_PERIOD) {
		p = put_dec(p, false, s->period, 10, ' ');
		*p++ = ' ';
	}
	memcpy(p, a->name, nl);
	p += nl;
	memcpy(p, ": \n", 3);
	pd->tlen = (size_t)(p + 3 - pd->text);
	return 0;
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
 * recording ended (a file with the modules loaded then; pd->kprefetch: read for the samples'
 * addresses only, once they are listed), else the running kernel's when the build-ids agree
 * (or nothing says; /proc/kallsyms costs 100+ ms of kernel time: read on a thread once the
 * records are listed, if a sample has a kernel frame). 0 or -ENOMEM. */
int pd_choose_kallsyms(struct pd *pd)
{
	const struct pd_bid *b = bid_find(pd, "[kernel.kallsyms]");
	char dir[PATH_MAX], path[PATH_MAX + 128];
	unsigned char run[20];
	size_t rlen;
	int n;

	if (!b)
		return 0;
	cache_dir(dir, sizeof(dir));
	n = snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/", dir);
	for (size_t i = 0; i < b->len && n > 0 && (size_t)n < sizeof(path) - 16; i++)
		n += snprintf(path + n, sizeof(path) - n, "%02x", b->id[i]);
	if (n <= 0 || (size_t)n >= sizeof(path) - 16)
		return 0;
	strcat(path, "/kallsyms");
	if (!access(path, R_OK)) {
		pd->kprefetch = true;
		return sym_cache__set_kallsyms_path(pd->sc, path);
	}
	rlen = running_kernel_bid(run);
	if (rlen && (rlen != b->len || memcmp(run, b->id, rlen)))
		pd->st.other_kernel = true;
	return 0;
}
