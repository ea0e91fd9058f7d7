/* DWARF unwinding of copied user stacks with libdw: each process gets a Dwfl with its modules
 * from /proc/PID/maps (opened through /proc/PID/root, so containers work) and a thread state
 * whose callbacks serve the sample being unwound: its registers, and memory reads from its
 * stack copy only, never from the live process (which has moved on since). */
#include "unwind.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hmap.h"

#define DEFAULT_PROCS 64
#define REFRESH_NS 50000000ull /* a process's module list is re-read at most every 50 ms */

/* x86_64 DWARF register numbers. */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RIP 16

struct uw_proc {
	int pid;
	Dwfl *dwfl; /* NULL when the modules could not be read (process gone) */
	uint64_t used;	     /* unwinder tick of the last use, for the LRU */
	uint64_t report_ns;  /* when the modules were last read */
	char root[48];	     /* "/proc/PID/root" */
	/* The sample being unwound and what the walk saw. */
	const struct unwind_sample *s;
	bool listed;	  /* next_thread already returned the sample's thread */
	bool beyond_copy; /* a read past the end of the copy failed */
};

struct unwinder {
	struct hmap *procs; /* pid -> struct uw_proc */
	size_t max_procs;
	uint64_t tick;
	Elf *arch;		/* an empty x86_64 ELF header: tells libdw the architecture */
	Elf64_Ehdr arch_hdr;
	struct unwind_stats st;
};

/* The process whose Dwfl libdw is working on: find_elf has no argument of its own. */
static struct uw_proc *uw_current;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int unwind_stack_word(const void *stack, size_t len, uint64_t sp, uint64_t addr, uint64_t *out)
{
	if (addr < sp || len < sizeof(*out) || addr - sp > len - sizeof(*out))
		return -EFAULT;
	memcpy(out, (const char *)stack + (addr - sp), sizeof(*out));
	return 0;
}

/* Opens a module through the process's root (its mount namespace); anything else (vDSO, files
 * gone from the root) the way libdw's own proc callback does. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	char path[PATH_MAX];
	int fd;

	if (uw_current && name[0] == '/' &&
	    snprintf(path, sizeof(path), "%s%s", uw_current->root, name) < (int)sizeof(path)) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			*file_name = strdup(path);
			if (*file_name)
				return fd;
			close(fd);
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
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

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw_proc *p = arg;
	const struct unwind_sample *s = p->s;
	uint64_t w;

	if (unwind_stack_word(s->stack, s->stack_len, s->sp, addr, &w)) {
		if (addr >= s->sp + s->stack_len)
			p->beyond_copy = true;
		return false;
	}
	*result = w;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_sample *s = ((struct uw_proc *)arg)->s;
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

/* (Re)reads p's modules from /proc/PID/maps; a new Dwfl gets its thread state. 0 or -errno. */
static int proc_report(struct unwinder *u, struct uw_proc *p)
{
	int err;

	p->report_ns = now_ns();
	u->st.reports++;
	if (!p->dwfl) {
		p->dwfl = dwfl_begin(&dwfl_callbacks);
		if (!p->dwfl)
			return -ENOMEM;
		if (!dwfl_attach_state(p->dwfl, u->arch, p->pid, &thread_callbacks, p)) {
			dwfl_end(p->dwfl);
			p->dwfl = NULL;
			return -EINVAL;
		}
	}
	dwfl_report_begin(p->dwfl);
	err = dwfl_linux_proc_report(p->dwfl, p->pid);
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (err)
		return err > 0 ? -err : -ESRCH;
	return 0;
}

static void proc_free(struct uw_proc *p)
{
	if (!p)
		return;
	if (uw_current == p)
		uw_current = NULL;
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
	snprintf(p->root, sizeof(p->root), "/proc/%d/root", pid);
	if (!hmap__put(u->procs, &pid, sizeof(pid), p)) {
		free(p);
		return NULL;
	}
	uw_current = p;
	proc_report(u, p);
	return p;
}

struct walk {
	uint64_t *pcs;
	size_t n, max;
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (!activation)
		pc--;
	w->pcs[w->n++] = pc;
	return w->n >= w->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* One walk over p's current Dwfl; returns the status and fills w. */
static enum unwind_status walk(struct uw_proc *p, const struct unwind_sample *s, struct walk *w)
{
	int ret;

	w->n = 0;
	p->s = s;
	p->listed = false;
	p->beyond_copy = false;
	ret = dwfl_getthread_frames(p->dwfl, s->tid, frame_cb, w);
	p->s = NULL;
	if (w->n >= w->max)
		return UNWIND_OK;
	/* libdw ends the walk, with or without an error, when a return address cannot be read.
	 * Past the end of a full copy, frames were cut off; past the end of a copy that ended
	 * with the stack mapping, the frame was the outermost one (ld.so's _start has no CFI
	 * saying so). */
	if (p->beyond_copy)
		return s->stack_full ? UNWIND_TRUNCATED : UNWIND_OK;
	return ret == 0 ? UNWIND_OK : UNWIND_ERROR;
}

size_t unwinder__unwind(struct unwinder *u, const struct unwind_sample *s, uint64_t *pcs,
			size_t max, enum unwind_status *status)
{
	struct walk w = { pcs, 0, max };
	struct uw_proc *p;
	bool refreshed = false;

	*status = UNWIND_ERROR;
	if (!max)
		return 0;
	p = proc_get(u, s->pid);
	if (!p) {
		pcs[0] = s->ip;
		return 1;
	}
	uw_current = p;
	/* A pc in no known module: a library loaded since the modules were read (dlopen). */
	if ((!p->dwfl || !dwfl_addrmodule(p->dwfl, s->ip)) &&
	    now_ns() - p->report_ns >= REFRESH_NS) {
		proc_report(u, p);
		refreshed = true;
	}
	if (p->dwfl)
		*status = walk(p, s, &w);
	if (*status == UNWIND_ERROR && !refreshed && w.n && p->dwfl &&
	    !dwfl_addrmodule(p->dwfl, w.pcs[w.n - 1]) && now_ns() - p->report_ns >= REFRESH_NS) {
		proc_report(u, p);
		*status = walk(p, s, &w);
	}
	uw_current = NULL;
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

struct unwinder *unwinder__new(size_t max_procs)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	Elf64_Ehdr *h;

	if (!u)
		return NULL;
	u->max_procs = max_procs ? max_procs : DEFAULT_PROCS;
	u->procs = hmap__new();
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
	if (!u->procs || !u->arch) {
		unwinder__free(u);
		return NULL;
	}
	return u;
}

static void free_proc(const void *key, size_t len, void *val, void *arg)
{
	proc_free(val);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->procs) {
		hmap__each(u->procs, free_proc, NULL);
		hmap__free(u->procs);
	}
	if (u->arch)
		elf_end(u->arch);
	free(u);
}
