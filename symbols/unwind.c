/* DWARF unwinding of copied user stacks with libdw: each process gets a Dwfl whose modules are
 * reported one by one as the walk reaches them (as perf does), from the mappings and open files
 * of the symbol cache (so processes that are gone, or mapped files since deleted, still unwind),
 * and a thread state whose callbacks serve the sample being unwound: its registers, and memory
 * reads from its stack copy only, never from the live process (which has moved on since). */
#include "unwind.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hmap.h"
#include "model/hash.h"
#include "symbols.h"
#include "util/grow.h"

#define DEFAULT_PROCS 64
#define MEMO_SLOTS 32	/* remembered walks per process */
#define MEMO_READS 256	/* stack words a remembered walk may have read */

/* A walk remembered: libdw's walk depends only on the registers, the stack words it read and
 * the modules, so a sample with the same registers and the same values at those words (a
 * thread blocking or faulting again where it did before) replays the result without libdw. */
struct uw_memo {
	uint64_t ip, sp, bp, len; /* the registers and the copy's length */
	uint32_t nreads, npcs, max;
	bool full; /* the copy's stack_full */
	enum unwind_status status;
	uint64_t *words; /* nreads addresses, nreads values (or ~0 with bit 0 of the address set
			  * when the read failed), then npcs pcs */
};

/* x86_64 DWARF register numbers. */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RIP 16

/* Registers of a frame: where a libdw walk starts, or a Go frame. */
struct uw_regs {
	uint64_t ip, sp, bp;
	bool caller; /* ip is a return address (not the sampled instruction) */
};

struct uw_proc {
	int pid;
	Dwfl *dwfl;
	uint64_t used;	     /* unwinder tick of the last use, for the LRU */
	struct unwinder *u;
	/* The sample being unwound and what the walk saw. */
	const struct unwind_sample *s;
	struct uw_regs start; /* where the libdw walk starts */
	bool listed;	  /* next_thread already returned the sample's thread */
	bool beyond_copy; /* a read past the end of the copy failed */
	uint64_t reads[2 * MEMO_READS]; /* what the walk read: address, value (bit 0: failed) */
	uint32_t nreads;		/* > MEMO_READS: too many to remember */
	struct uw_memo memo[MEMO_SLOTS];
};

/* One mapped file, opened once for every process that maps it: its Elf handle is lent to each
 * Dwfl (libelf counts the references), so a new process costs no mmap of its libraries. */
struct uw_file {
	uint64_t dev, inode;
	Elf *elf;	    /* NULL when not ELF, or dropped by the cap */
	uint64_t lo, hi;    /* link-time span of its PT_LOADs, lo aligned as libdw aligns it */
	uint64_t used;	    /* unwinder tick of the last use */
	const char *path;   /* owned by the symbol cache */
	bool go;	    /* has Go's .gopclntab: its Go frames are stepped with it */
};

struct unwinder {
	struct sym_cache *sc; /* borrowed: mappings and files */
	struct hmap *procs; /* pid -> struct uw_proc */
	struct hmap *files; /* (dev, inode) -> struct uw_file */
	size_t open_files;  /* files with an Elf handle */
	size_t max_procs;
	uint64_t tick;
	Elf *arch;		/* an empty x86_64 ELF header: tells libdw the architecture */
	Elf64_Ehdr arch_hdr;
	struct unwind_stats st;
};

int unwind_stack_word(const void *stack, size_t len, uint64_t sp, uint64_t addr, uint64_t *out)
{
	if (addr < sp || len < sizeof(*out) || addr - sp > len - sizeof(*out))
		return -EFAULT;
	memcpy(out, (const char *)stack + (addr - sp), sizeof(*out));
	return 0;
}

/* Lends the module's shared Elf handle (its user data is its struct uw_file). */
static int lend_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct uw_file *f = *userdata;

	*elfp = NULL;
	if (f && f->elf)
		*elfp = elf_begin(-1, ELF_C_READ_MMAP, f->elf); /* one more reference */
	return -1;
}

/* No separate debuginfo: x86_64 code carries .eh_frame, and libdw would otherwise open (and
 * decompress) a library's whole debuginfo in every process whose outermost frame has no CFI,
 * looking for a .debug_frame there. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = lend_elf,
	.find_debuginfo = no_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	struct uw_proc *p = arg;

	if (p->listed || !p->s)
		return 0;
	p->listed = true;
	*thread_arg = p;
	return p->s->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	*thread_arg = arg;
	return true;
}

/* Reads a word of the sample's stack copy, remembering the read for replays. */
static bool read_word(struct uw_proc *p, uint64_t addr, uint64_t *result)
{
	const struct unwind_sample *s = p->s;
	uint64_t w;
	bool ok = !unwind_stack_word(s->stack, s->stack_len, s->sp, addr, &w);

	if (p->nreads < MEMO_READS) {
		p->reads[2 * p->nreads] = addr | !ok;
		p->reads[2 * p->nreads + 1] = ok ? w : 0;
	}
	p->nreads++;
	if (!ok) {
		if (addr >= s->sp + s->stack_len)
			p->beyond_copy = true;
		return false;
	}
	*result = w;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	uint64_t w;

	if (!read_word(arg, addr, &w))
		return false;
	*result = w;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct uw_regs *s = &((struct uw_proc *)arg)->start;
	Dwarf_Word bp_sp[2] = { s->bp, s->sp }, ip = s->ip;

	if (!dwfl_thread_state_registers(thread, DW_RBP, 2, bp_sp) ||
	    !dwfl_thread_state_registers(thread, DW_RIP, 1, &ip))
		return false;
	dwfl_thread_state_register_pc(thread, ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* A fresh Dwfl with p's thread state and no modules yet. 0 or -errno. */
static void memo_clear(struct uw_proc *p)
{
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		free(p->memo[i].words);
		p->memo[i].words = NULL;
	}
}

static int proc_begin(struct unwinder *u, struct uw_proc *p)
{
	memo_clear(p); /* remembered walks went through the modules of the old Dwfl */
	dwfl_end(p->dwfl);
	p->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	if (!dwfl_attach_state(p->dwfl, u->arch, p->pid, &thread_callbacks, p)) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return -EINVAL;
	}
	return 0;
}

#define FILES_OPEN_MAX 512 /* Elf handles kept; past it the least recently used are closed */

/* Closes the Elf handle of the least recently used file (Dwfls using it keep their reference). */
struct file_scan {
	struct uw_file *oldest;
};

static void find_oldest_file(const void *key, size_t len, void *val, void *arg)
{
	struct file_scan *scan = arg;
	struct uw_file *f = val;

	if (f->elf && (!scan->oldest || f->used < scan->oldest->used))
		scan->oldest = f;
}

/* Reads the span of f's loadable segments; false when it is not a loadable ELF file. */
static bool file_span(struct uw_file *f)
{
	size_t phnum;
	bool first = true;

	if (elf_kind(f->elf) != ELF_K_ELF || elf_getphdrnum(f->elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(f->elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		if (first) /* as libdw: the first PT_LOAD, aligned down to its p_align */
			f->lo = ph->p_vaddr & -(ph->p_align ? ph->p_align : 1);
		first = false;
		if (ph->p_vaddr + ph->p_memsz > f->hi)
			f->hi = ph->p_vaddr + ph->p_memsz;
	}
	return !first && f->hi > f->lo;
}

/* Whether elf has Go's function table (.gopclntab, .data.rel.ro.gopclntab when PIE). */
static bool has_gopclntab(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab")))
			return true;
	return false;
}

/* The shared file of mapping m (opened through the symbol cache on first sight); NULL when it
 * cannot be opened as ELF. */
static struct uw_file *file_get(struct unwinder *u, int pid, uint64_t pc, const struct sym_module *m)
{
	uint64_t key[2] = { m->dev, m->inode };
	struct uw_file *f = hmap__get(u->files, key, sizeof(key));
	struct sym_module mo;

	if (f && f->elf) {
		f->used = ++u->tick;
		return f;
	}
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f || !hmap__put(u->files, key, sizeof(key), f)) {
			free(f);
			return NULL;
		}
		f->dev = m->dev;
		f->inode = m->inode;
		f->path = m->path;
	}
	if (sym_cache__module(u->sc, pid, pc, true, &mo))
		return NULL;
	f->elf = elf_begin(mo.fd, ELF_C_READ_MMAP, NULL);
	if (f->elf)
		elf_cntl(f->elf, ELF_C_FDDONE); /* all reads go through the mapping */
	close(mo.fd);
	f->lo = f->hi = 0;
	if (f->elf && !file_span(f)) {
		elf_end(f->elf);
		f->elf = NULL;
	}
	if (!f->elf)
		return NULL;
	f->go = has_gopclntab(f->elf);
	f->used = ++u->tick;
	if (++u->open_files > FILES_OPEN_MAX) {
		struct file_scan scan = { NULL };

		hmap__each(u->files, find_oldest_file, &scan);
		if (scan.oldest && scan.oldest != f) {
			elf_end(scan.oldest->elf);
			scan.oldest->elf = NULL;
			u->open_files--;
		}
	}
	return f;
}

/* The link-time address of file offset off in f, through the PT_LOAD that holds it. */
static bool file_vaddr(const struct uw_file *f, uint64_t off, uint64_t *vaddr)
{
	size_t phnum;

	if (elf_getphdrnum(f->elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(f->elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && off >= ph->p_offset &&
		    off < ph->p_offset + (ph->p_filesz ? ph->p_filesz : 1)) {
			*vaddr = ph->p_vaddr + (off - ph->p_offset);
			return true;
		}
	}
	return false;
}

/* Makes sure the file mapped at pc in p is a module of its Dwfl: reported on first need at the
 * bias its mapping gives (start minus the link-time address of its file offset), with the
 * shared Elf handle. A module left there by a file since unmapped starts the process's Dwfl
 * over when restart is allowed; during a walk (which uses the Dwfl) it returns false instead,
 * so the walk can stop and be done again over a new Dwfl. */
static bool report_pc(struct uw_proc *p, uint64_t pc, bool restart)
{
	struct unwinder *u = p->u;
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, pc);
	struct sym_module m;
	struct uw_file *f;
	uint64_t vaddr, bias;
	void **data;

	if (sym_cache__module(u->sc, p->pid, pc, false, &m))
		return true; /* nothing better known: keep whatever is there */
	if (mod) {
		dwfl_module_info(mod, &data, NULL, NULL, NULL, NULL, NULL, NULL);
		f = *data;
		if (f && f->dev == m.dev && f->inode == m.inode)
			return true;
		if (!restart)
			return false;
		if (proc_begin(u, p))
			return true;
	}
	/* The bias from pc's own file offset, not the mapping's: lld starts a segment in the
	 * middle of the page that ends the one before, so the page at pgoff holds the end of
	 * the previous segment too and pgoff alone would pick that one (0x1000 off). */
	f = file_get(u, p->pid, pc, &m);
	if (!f || !file_vaddr(f, pc - m.start + m.pgoff, &vaddr))
		return true;
	bias = pc - vaddr;
	u->st.reports++;
	mod = dwfl_report_module(p->dwfl, f->path, bias + f->lo, bias + f->hi);
	if (!mod)
		return true;
	dwfl_module_info(mod, &data, NULL, NULL, NULL, NULL, NULL, NULL);
	*data = f;
	return true;
}

static void proc_free(struct uw_proc *p)
{
	if (!p)
		return;
	memo_clear(p);
	dwfl_end(p->dwfl);
	free(p);
}

struct lru_scan {
	struct uw_proc *oldest;
};

static void find_oldest(const void *key, size_t len, void *val, void *arg)
{
	struct lru_scan *scan = arg;
	struct uw_proc *p = val;

	if (!scan->oldest || p->used < scan->oldest->used)
		scan->oldest = p;
}

/* pid's state, created (evicting the least recently used past the cap) on first sight; NULL
 * on ENOMEM. */
static struct uw_proc *proc_get(struct unwinder *u, int pid)
{
	struct uw_proc *p = hmap__get(u->procs, &pid, sizeof(pid));

	if (p) {
		p->used = ++u->tick;
		return p;
	}
	if (hmap__count(u->procs) >= u->max_procs) {
		struct lru_scan scan = { NULL };

		hmap__each(u->procs, find_oldest, &scan);
		if (scan.oldest) {
			hmap__del(u->procs, &scan.oldest->pid, sizeof(scan.oldest->pid));
			proc_free(scan.oldest);
			u->st.evictions++;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->used = ++u->tick;
	p->u = u;
	if (!hmap__put(u->procs, &pid, sizeof(pid), p)) {
		free(p);
		return NULL;
	}
	proc_begin(u, p);
	return p;
}

struct walk {
	uint64_t *pcs;
	size_t n, max;
	struct uw_proc *p;
	bool stale;	  /* stopped at a module of a file no longer mapped there */
	size_t first;	  /* pcs index of the libdw walk's first frame */
	bool to_go;	  /* the libdw walk stopped at a Go frame, whose registers are go */
	struct uw_regs go;
};

/* Whether pc is in a Go function with a pc-to-SP table (see go_steps): only files with a
 * .gopclntab are asked about (the symbol cache reads their table). */
static bool is_go(struct uw_proc *p, uint64_t pc, int32_t *delta, bool *top)
{
	Dwfl_Module *mod;
	struct uw_file *f;
	void **data;

	if (!report_pc(p, pc, false) || !(mod = dwfl_addrmodule(p->dwfl, pc)))
		return false;
	dwfl_module_info(mod, &data, NULL, NULL, NULL, NULL, NULL, NULL);
	f = *data;
	return f && f->go && !sym_cache__go_frame(p->u->sc, p->pid, pc, delta, top);
}

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp, bp;
	bool activation;
	int32_t delta;
	bool top;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (!activation || (w->n == w->first && w->p->start.caller))
		pc--;
	/* a Go frame above C code (a cgo callback): Go's own tables take the next steps */
	if (w->n > w->first && is_go(w->p, pc, &delta, &top) &&
	    !dwfl_frame_reg(frame, DW_RSP, &sp) && !dwfl_frame_reg(frame, DW_RBP, &bp)) {
		w->go = (struct uw_regs){ activation ? pc : pc + 1, sp, bp, !activation };
		w->to_go = true;
		return DWARF_CB_ABORT;
	}
	w->pcs[w->n++] = pc;
	if (w->n >= w->max)
		return DWARF_CB_ABORT;
	if (!report_pc(w->p, pc, false)) { /* its CFI takes the next step */
		w->stale = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* How a walk that could not read a word of the copy ended. libdw ends its walk, with or
 * without an error, when a return address cannot be read. Past the end of a full copy,
 * frames were cut off; past the end of a copy that ended with the stack mapping, the frame
 * was the outermost one (ld.so's _start has no CFI saying so). */
static enum unwind_status read_failed(const struct uw_proc *p, bool error)
{
	if (p->beyond_copy)
		return p->s->stack_full ? UNWIND_TRUNCATED : UNWIND_OK;
	return error ? UNWIND_ERROR : UNWIND_OK;
}

/* Steps through Go frames from r with the pc-to-SP tables of .gopclntab, as Go's own
 * traceback does (frame pointers would skip the caller of a frameless leaf, and stripped Go
 * binaries have no CFI): the return address sits right above the frame, the caller's frame
 * pointer right below it once pushed. Appends each frame's pc. Returns true when the walk
 * ended there (status in *st), false when r is now a frame outside Go code. */
static bool go_steps(struct uw_proc *p, struct walk *w, struct uw_regs *r,
		     enum unwind_status *st)
{
	uint64_t pc, cfa, ra, bp;
	int32_t delta;
	bool top;

	for (;;) {
		pc = r->caller ? r->ip - 1 : r->ip;
		if (!is_go(p, pc, &delta, &top))
			return false;
		w->pcs[w->n++] = pc;
		*st = UNWIND_OK;
		if (w->n >= w->max || top)
			return true;
		cfa = r->sp + (uint64_t)delta + 8;
		bp = r->bp;
		if (!read_word(p, cfa - 8, &ra) || (delta >= 8 && !read_word(p, cfa - 16, &bp))) {
			*st = read_failed(p, true);
			return true;
		}
		if (!ra)
			return true;
		*r = (struct uw_regs){ ra, cfa, bp, true };
	}
}

/* One walk over p's current Dwfl; returns the status and fills w. */
static enum unwind_status walk(struct uw_proc *p, const struct unwind_sample *s, struct walk *w)
{
	struct uw_regs r = { s->ip, s->sp, s->bp, false };
	enum unwind_status st = UNWIND_ERROR;
	int ret;

	w->n = 0;
	w->stale = false;
	p->s = s;
	p->beyond_copy = false;
	for (int legs = 0; legs < 16; legs++) {
		if (go_steps(p, w, &r, &st))
			break;
		w->first = w->n;
		w->to_go = false;
		p->start = r;
		p->listed = false;
		if (r.caller && !report_pc(p, r.ip - 1, false)) {
			w->stale = true;
			break;
		}
		ret = dwfl_getthread_frames(p->dwfl, s->tid, frame_cb, w);
		if (w->to_go) {
			r = w->go;
			continue;
		}
		st = w->n >= w->max ? UNWIND_OK : read_failed(p, ret != 0);
		break;
	}
	p->s = NULL;
	return st;
}

static struct uw_memo *memo_slot(struct uw_proc *p, const struct unwind_sample *s)
{
	uint64_t k[3] = { s->ip, s->sp, s->bp };

	return &p->memo[hash_bytes(k, sizeof(k)) & (MEMO_SLOTS - 1)];
}

/* Replays a remembered walk of the same registers over the same stack words: the number of
 * pcs, or 0 when there is none. */
static size_t memo_replay(struct uw_proc *p, const struct unwind_sample *s, uint64_t *pcs,
			  size_t max, enum unwind_status *status)
{
	const struct uw_memo *m = memo_slot(p, s);
	uint64_t w;

	if (!m->words || m->ip != s->ip || m->sp != s->sp || m->bp != s->bp ||
	    m->len != s->stack_len || m->full != s->stack_full || m->max != max)
		return 0;
	for (uint32_t i = 0; i < m->nreads; i++) {
		uint64_t addr = m->words[2 * i];
		bool ok = !unwind_stack_word(s->stack, s->stack_len, s->sp, addr & ~1ull, &w);

		if (ok != !(addr & 1) || (ok && w != m->words[2 * i + 1]))
			return 0;
	}
	memcpy(pcs, m->words + 2 * m->nreads, m->npcs * sizeof(*pcs));
	*status = m->status;
	return m->npcs;
}

/* Remembers the walk just done (its reads are in p). */
static void memo_keep(struct uw_proc *p, const struct unwind_sample *s, const uint64_t *pcs,
		      size_t n, size_t max, enum unwind_status status)
{
	struct uw_memo *m = memo_slot(p, s);
	uint64_t *words = m->words;

	if (p->nreads > MEMO_READS || status == UNWIND_ERROR ||
	    ARRAY_RESIZE(words, 2 * p->nreads + n))
		return;
	memcpy(words, p->reads, 2 * p->nreads * sizeof(*words));
	memcpy(words + 2 * p->nreads, pcs, n * sizeof(*pcs));
	*m = (struct uw_memo){ s->ip, s->sp, s->bp, s->stack_len, p->nreads, (uint32_t)n,
			       (uint32_t)max, s->stack_full, status, words };
}

size_t unwinder__unwind(struct unwinder *u, const struct unwind_sample *s, uint64_t *pcs,
			size_t max, enum unwind_status *status)
{
	struct walk w = { .pcs = pcs, .max = max };
	struct uw_proc *p;

	*status = UNWIND_ERROR;
	if (!max)
		return 0;
	p = proc_get(u, s->pid);
	if (p && (w.n = memo_replay(p, s, pcs, max, status))) {
		u->st.replays++;
		return w.n;
	}
	if (p && !p->dwfl)
		proc_begin(u, p);
	if (p && p->dwfl) {
		w.p = p;
		report_pc(p, s->ip, true);
		p->nreads = 0;
		if (p->dwfl)
			*status = walk(p, s, &w);
		if (w.stale && !proc_begin(u, p)) { /* once more, over what is mapped now */
			report_pc(p, s->ip, true);
			p->nreads = 0;
			*status = walk(p, s, &w);
		}
		if (p->dwfl && !w.stale && w.n)
			memo_keep(p, s, pcs, w.n, max, *status);
	}
	if (!w.n) {
		pcs[0] = s->ip;
		w.n = 1;
	}
	return w.n;
}

void unwinder__process_exit(struct unwinder *u, int pid)
{
	proc_free(hmap__del(u->procs, &pid, sizeof(pid)));
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->st;
	st->processes = hmap__count(u->procs);
}

struct unwinder *unwinder__new(size_t max_procs, struct sym_cache *sc)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	Elf64_Ehdr *h;

	if (!u)
		return NULL;
	u->sc = sc;
	u->max_procs = max_procs ? max_procs : DEFAULT_PROCS;
	u->procs = hmap__new();
	u->files = hmap__new();
	h = &u->arch_hdr;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_EXEC;
	h->e_machine = EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	elf_version(EV_CURRENT);
	u->arch = elf_memory((char *)h, sizeof(*h));
	if (!u->procs || !u->files || !u->arch) {
		unwinder__free(u);
		return NULL;
	}
	return u;
}

static void free_proc(const void *key, size_t len, void *val, void *arg)
{
	proc_free(val);
}

static void free_file(const void *key, size_t len, void *val, void *arg)
{
	struct uw_file *f = val;

	if (f->elf)
		elf_end(f->elf);
	free(f);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->procs) {
		hmap__each(u->procs, free_proc, NULL);
		hmap__free(u->procs);
	}
	if (u->files) {
		hmap__each(u->files, free_file, NULL);
		hmap__free(u->files);
	}
	if (u->arch)
		elf_end(u->arch);
	free(u);
}
