#include "stack_collector.h"

#include "bpf/leak.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/leak.h"
#include "model/growth.h"
#include "model/hash.h"
#include "model/sanitize.h"
#include "model/stack_cap.h"
#include "symbols/hmap.h"
#include "symbols/jitmap.h"
#include "symbols/python.h"
#include "symbols/unwind.h"
#include "util/clock.h"
#include "util/procfs.h"
#include "util/grow.h"

#define NTYPES STACK_TYPES
#define EMPTY UINT32_MAX
#define MAX_FRAMES (COLLECTOR_MAX_FRAMES + 8) /* identity frames and a stack */
#define PY_RETRY_NS 1000000000ull /* a process that ran no CPython yet is looked at again after */
#define PY_EVAL "_PyEval_EvalFrameDefault"
#define CHAIN_BIT 0x80000000u
#define MAX_CHAIN 64 /* frames one JIT address names at most (its inlining depth) */

/* address -> frame id of one process (pid 0: the kernel), so each address is symbolized once;
 * a process's table goes as a whole when it exits or execs: O(its own entries). */
struct addr_entry {
	uint64_t addr;
	uint32_t frame;
};

struct addr_table {
	struct addr_entry *slots;
	size_t used, mask;
	/* Frames of the addresses that name several (JIT code with inlined methods): an entry's
	 * frame with CHAIN_BIT set is an offset here, of the count followed by the frames. */
	uint32_t *chains;
	size_t nchains, chains_cap;
	uint32_t jit_gen; /* the symbol cache's JIT map generation the entries were made from */
	bool loaded; /* the process's mappings and symbols were read since its exec */
	bool no_ident; /* its identity could not be read (gone): the record's comm serves */
	/* CPython: its interpreter once found (and handed to python_fn); py_seen: an address
	 * named PY_EVAL was seen since the last look; py_never: a look said never (a version
	 * without a layout); py_ns: when it was last looked at. */
	struct py_runtime *py;
	bool py_seen, py_never;
	uint64_t py_ns;
};

struct collector {
	struct frames *ft;
	struct strtab *st;
	struct sym_cache *sc;
	struct ident_cache *ic;
	struct collector_opts o;
	struct profile *profiles[NTYPES];
	struct leak_set *leak; /* the sampled allocations not freed yet */
	uint64_t leak_ts_ns;   /* the time of the record being handled: when a block leaves */
	struct growth_set *growth; /* the anonymous memory mapped and not unmapped yet */
	struct stack_cap caps[NTYPES];
	struct collector_tick *ticks[NTYPES]; /* since the last clear */
	size_t nticks[NTYPES], ticks_cap[NTYPES];
	struct hmap *tables;	     /* pid -> struct addr_table */
	struct addr_table *last;     /* the table of last_pid, or NULL */
	uint32_t last_pid;
	uint32_t cur_pid; /* the process of the stack being named */
	struct collector_stats stats;
	long page_size;
	struct unwinder *uw; /* created on the first record with a user stack copy */
	struct py_names *pn; /* created on the first CPython process */
	uint32_t py_eval_name; /* strtab id of PY_EVAL, EMPTY until interned */
};

static void table_free(struct addr_table *t)
{
	if (t) {
		free(t->slots);
		free(t->chains);
		free(t->py);
	}
	free(t);
}

/* Forgets every address of t (its JIT map changed under it), keeping the memory. */
static void table_clear(struct addr_table *t)
{
	for (size_t i = 0; t->slots && i <= t->mask; i++)
		t->slots[i].frame = EMPTY;
	t->used = 0;
	t->nchains = 0;
}

static void table_free_cb(const void *key, size_t len, void *val, void *arg)
{
	table_free(val);
}

/* pid's table, created on first use; NULL on ENOMEM. */
static struct addr_table *table_of(struct collector *c, uint32_t pid)
{
	struct addr_table *t;

	if (c->last && c->last_pid == pid)
		return c->last;
	t = hmap__get(c->tables, &pid, sizeof(pid));
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || !hmap__put(c->tables, &pid, sizeof(pid), t)) {
			free(t);
			return NULL;
		}
	}
	c->last = t;
	c->last_pid = pid;
	return t;
}

static void leak_tick(void *ctx, const struct leak_block *b, double bytes);

struct collector *collector__new(struct frames *ft, struct sym_cache *sc, struct ident_cache *ic,
				 const struct collector_opts *o)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ft = ft;
	c->st = frames__strtab(ft);
	c->sc = sc;
	c->ic = ic;
	if (o)
		c->o = *o;
	c->page_size = sysconf(_SC_PAGESIZE);
	c->py_eval_name = EMPTY;
	for (int i = 0; i < NTYPES; i++) {
		enum value_kind k = stack_types[i].kind;

		if (i == STACK_MEM && c->o.mem_bytes)
			k = VALUE_BYTES;
		c->profiles[i] = profile__new(ft, k, false);
		if (!c->profiles[i])
			goto fail;
		stack_cap_init(&c->caps[i], c->o.max_stacks);
	}
	if (!c->o.leak_sample)
		c->o.leak_sample = 512u << 10;
	c->leak = leak_set__new();
	c->growth = growth_set__new();
	c->tables = hmap__new();
	if (!c->tables || !c->leak || !c->growth)
		goto fail;
	leak_set__observe(c->leak, leak_tick, c);
	return c;
fail:
	collector__free(c);
	return NULL;
}


void collector__free(struct collector *c)
{
	if (!c)
		return;
	for (int i = 0; i < NTYPES; i++) {
		profile__free(c->profiles[i]);
		free(c->ticks[i]);
	}
	leak_set__free(c->leak);
	growth_set__free(c->growth);
	unwinder__free(c->uw);
	py_names__free(c->pn);
	if (c->tables) {
		hmap__each(c->tables, table_free_cb, NULL);
		hmap__free(c->tables);
	}
	free(c);
}

/* Interns an untrusted name as a frame, sanitized. */
static uint32_t intern(struct collector *c, const char *name, size_t len, const char *module,
		       enum frame_kind kind, const char *file, unsigned line)
{
	struct frame f = { .kind = kind, .line = line };
	char buf[1024];
	char *clean = buf;

	if (!sanitize_is_clean(name, len)) {
		if (SANITIZE_MAX(len) > sizeof(buf))
			len = sizeof(buf) / 3;
		len = sanitize_text(name, len, buf);
		name = clean;
	}
	f.name = strtab__intern(c->st, name, len);
	f.module = module && *module ? strtab__intern(c->st, module, strlen(module)) : 0;
	f.file = file && *file ? strtab__intern(c->st, file, strlen(file)) : 0;
	if (f.name == EMPTY || f.module == EMPTY || f.file == EMPTY)
		return EMPTY;
	return frames__intern(c->ft, &f);
}

static size_t slot_of(const struct addr_table *t, uint64_t addr)
{
	return hash_mix(addr) & t->mask;
}

/* The cached frame of addr in t, or EMPTY. */
static uint32_t cache_find(const struct addr_table *t, uint64_t addr)
{
	if (!t->slots)
		return EMPTY;
	for (size_t i = slot_of(t, addr); t->slots[i].frame != EMPTY; i = (i + 1) & t->mask)
		if (t->slots[i].addr == addr)
			return t->slots[i].frame;
	return EMPTY;
}

/* Caches frame for addr, which must not be cached yet; without memory to grow, the entry is
 * simply not kept. */
static void cache_insert(struct addr_table *t, uint64_t addr, uint32_t frame)
{
	size_t i;

	if ((t->used + 1) * 4 > (t->mask + 1) * 3 || !t->slots) {
		size_t size = t->slots ? (t->mask + 1) * 2 : 64;
		struct addr_entry *old = t->slots, *n = malloc(size * sizeof(*n));
		size_t oldsize = old ? t->mask + 1 : 0;

		if (!n)
			return;
		for (i = 0; i < size; i++)
			n[i].frame = EMPTY;
		t->slots = n;
		t->mask = size - 1;
		for (size_t k = 0; k < oldsize; k++) {
			if (old[k].frame == EMPTY)
				continue;
			for (i = slot_of(t, old[k].addr); n[i].frame != EMPTY; i = (i + 1) & t->mask)
				;
			n[i] = old[k];
		}
		free(old);
	}
	for (i = slot_of(t, addr); t->slots[i].frame != EMPTY; i = (i + 1) & t->mask)
		;
	t->slots[i] = (struct addr_entry){ addr, frame };
	t->used++;
}

/* Stores the frames f[0..n) as a chain of t; its cache value, or EMPTY without memory. */
static uint32_t chain_add(struct addr_table *t, const uint32_t *f, size_t n)
{
	size_t at = t->nchains;

	if (at + n + 1 >= CHAIN_BIT)
		return EMPTY;
	if (ARRAY_GROW(t->chains, t->chains_cap, at + n + 1))
		return EMPTY;
	t->chains[at] = (uint32_t)n;
	memcpy(t->chains + at + 1, f, n * sizeof(*f));
	t->nchains = at + n + 1;
	return CHAIN_BIT | (uint32_t)at;
}

/* Interns the frames of a JIT symbol into f (room for MAX_CHAIN): one, or for an inlining
 * chain "outer->inlined->innermost" (symbols/jitmap.h) the compiled method then each method
 * inlined in it, innermost last, as FRAME_INLINED frames. Returns how many (0: ENOMEM). */
static size_t jit_frames(struct collector *c, const struct sym_info *si, uint32_t *f)
{
	const char *p = si->name, *sep;
	size_t n = 0;
	char name[1100];
	int len;

	for (;;) {
		sep = n + 1 < MAX_CHAIN ? strstr(p, JITMAP_INLINE_SEP) : NULL;
		len = sep ? (int)(sep - p) : (int)strlen(p);
		if (c->o.annotate) {
			len = snprintf(name, sizeof(name), "%.*s%s", len > 1000 ? 1000 : len, p,
				       n ? "_[i]" : "_[j]");
			f[n] = intern(c, name, (size_t)len, si->module, n ? FRAME_INLINED : FRAME_JIT,
				      NULL, 0);
		} else {
			f[n] = intern(c, p, (size_t)len, si->module, n ? FRAME_INLINED : FRAME_JIT,
				      NULL, 0);
		}
		if (f[n++] == EMPTY)
			return 0;
		if (!sep)
			return n;
		p = sep + strlen(JITMAP_INLINE_SEP);
	}
}

/* Writes the frames for addr in pid (0 = kernel) into out (room for MAX_CHAIN), symbolizing
 * it on first sight: one frame, or several for code with inlined functions (JIT methods,
 * DWARF's inlined subroutines, Go's inline trees), innermost last. Returns how many; 0 on
 * ENOMEM. */
static size_t addr_frames(struct collector *c, uint32_t pid, uint64_t addr, uint32_t *out)
{
	struct addr_table *t = table_of(c, pid);
	uint32_t f = t ? cache_find(t, addr) : EMPTY;
	struct sym_info si;
	char name[1100];
	const char *n;
	size_t count = 1;
	int len, err;

	if (f != EMPTY && (f & CHAIN_BIT)) {
		count = t->chains[f & ~CHAIN_BIT];
		memcpy(out, t->chains + (f & ~CHAIN_BIT) + 1, count * sizeof(*out));
		return count;
	}
	if (f != EMPTY) {
		out[0] = f;
		return 1;
	}
	err = pid ? sym_cache__user(c->sc, (int)pid, addr, &si)
		  : sym_cache__kernel(c->sc, addr, &si);
	if (err == -ENOMEM)
		return 0;
	if (err)
		c->stats.unknown_frames++;
	if (si.kind == FRAME_JIT) {
		count = jit_frames(c, &si, out);
		if (!count)
			return 0;
		f = count > 1 && t ? chain_add(t, out, count) : out[0];
	} else {
		n = si.name;
		len = (int)strlen(n);
		if (c->o.annotate && si.kind == FRAME_KERNEL) {
			len = snprintf(name, sizeof(name), "%.1000s_[k]", si.name);
			n = name;
		}
		/* the source line belongs to the innermost inline frame when there are some */
		f = out[0] = intern(c, n, (size_t)len, si.module, si.kind,
				    si.ninlined ? NULL : si.file, si.ninlined ? 0 : si.line);
		if (f == EMPTY)
			return 0;
		for (unsigned i = 0; i < si.ninlined && count < MAX_CHAIN; i++) {
			bool last = i + 1 == si.ninlined;

			n = si.inlined[i];
			len = (int)strlen(n);
			if (c->o.annotate) {
				len = snprintf(name, sizeof(name), "%.1000s_[i]", n);
				n = name;
			}
			out[count] = intern(c, n, (size_t)len, si.module, FRAME_INLINED,
					    last ? si.file : NULL, last ? si.line : 0);
			if (out[count++] == EMPTY)
				return 0;
		}
		if (count > 1)
			f = t ? chain_add(t, out, count) : out[0];
	}
	/* A user address in no known mapping may be in a library mapped after the maps were
	 * read (the sym_cache re-reads them at most every 200 ms): ask again next time. */
	if (f != EMPTY && !(err && pid && si.kind == FRAME_SPECIAL) && (t = table_of(c, pid)))
		cache_insert(t, addr, f);
	if (pid && t && !t->py && !strcmp(si.name, PY_EVAL))
		t->py_seen = true;
	return count;
}

/* The frame for addr in pid (0 = kernel): the innermost one when it names several. */
static uint32_t addr_frame(struct collector *c, uint32_t pid, uint64_t addr)
{
	uint32_t f[MAX_CHAIN];
	size_t n = addr_frames(c, pid, addr, f);

	return n ? f[n - 1] : EMPTY;
}

/* Reads pid's mappings and symbols on its first sample rather than at every exec in the
 * system: most processes are never sampled. */
static void load_once(struct collector *c, uint32_t pid)
{
	struct addr_table *t = table_of(c, pid);

	if (!t || t->loaded)
		return;
	sym_cache__process_load(c->sc, (int)pid);
	t->loaded = true;
}

/* Drops pid's cached addresses (its mappings may be reused by another process). */
static void cache_forget(struct collector *c, uint32_t pid)
{
	if (c->last_pid == pid)
		c->last = NULL;
	table_free(hmap__del(c->tables, &pid, sizeof(pid)));
}

static size_t identity_frames(struct collector *c, const struct gt_event *ev, uint32_t *out)
{
	struct proc_ident id;
	char buf[320];
	size_t n = 0;
	const char *comm = NULL;
	char evcomm[GT_COMM_LEN + 1];
	int len;

	struct addr_table *t;
	int err = -ENOENT;

	if (c->o.group == GROUP_NONE)
		return 0;
	t = ev->pid ? table_of(c, ev->pid) : NULL;
	memcpy(evcomm, ev->comm, GT_COMM_LEN);
	evcomm[GT_COMM_LEN] = '\0';
	/* A process gone before its records are read is not looked for again at each one. */
	if (t && !t->no_ident) {
		err = ident_cache__lookup(c->ic, (int)ev->pid, &id);
		if (err && err != -ENOMEM)
			t->no_ident = true;
	}
	if (!err) {
		if (id.pod_name[0]) {
			len = snprintf(buf, sizeof(buf), "[Pod]%s", id.pod_name);
			out[n++] = intern(c, buf, (size_t)len, NULL, FRAME_POD, NULL, 0);
		}
		if (id.container_name[0]) {
			len = snprintf(buf, sizeof(buf), "[Con]%s", id.container_name);
			out[n++] = intern(c, buf, (size_t)len, NULL, FRAME_CONTAINER, NULL, 0);
		}
		if (id.comm[0])
			comm = id.comm;
	}
	if (!comm)
		comm = evcomm;
	len = group_process_name(c->o.group, ev->pid, comm, buf, sizeof(buf));
	out[n++] = intern(c, buf, (size_t)len, NULL, FRAME_PROCESS, NULL, 0);
	if (c->o.threads || c->o.group == GROUP_THREAD) {
		len = snprintf(buf, sizeof(buf), "[%u]%s", ev->tid, evcomm);
		out[n++] = intern(c, buf, (size_t)len, NULL, FRAME_THREAD, NULL, 0);
	}
	return n;
}

/* Appends the frames of the user address addr of pid to out (with the scratch f of room
 * MAX_CHAIN), keeping room for the left addresses still to come after the used frames
 * already in the stack: a chain of inlined methods too long keeps its innermost frames.
 * Returns how many were appended. */
static size_t user_frames(struct collector *c, uint32_t pid, uint64_t addr, size_t left,
			  size_t used, uint32_t *out, uint32_t *f)
{
	size_t n = addr_frames(c, pid, addr, f), room = GT_MAX_STACK + 1 - used - left;

	if (!n) {
		out[0] = EMPTY;
		return 1;
	}
	if (room < 1)
		room = 1;
	if (n > room) {
		memmove(f, f + n - room, room * sizeof(*f));
		n = room;
	}
	memcpy(out, f, n * sizeof(*f));
	return n;
}

/* Unwinds the user stack copy of ev and appends its frames, outermost first, to out (a
 * [truncated] or [unwind error] frame before them when the walk was cut short). Returns the
 * number of frames added. */
static size_t unwound_frames(struct collector *c, const struct gt_event *ev, uint32_t *out)
{
	static const char *const markers[] = { [UNWIND_TRUNCATED] = "[truncated]",
					       [UNWIND_ERROR] = "[unwind error]" };
	const struct gt_uregs *u = gt_event_uregs(ev);
	struct unwind_sample s = {
		.pid = (int)ev->pid,
		.tid = (int)ev->tid,
		.ip = u->ip,
		.sp = u->sp,
		.bp = u->bp,
		.stack = u + 1,
		.stack_len = u->size,
		.stack_full = ev->flags & GT_EVF_USTACK_FULL,
	};
	uint64_t pcs[GT_MAX_STACK], t0;
	enum unwind_status st;
	size_t n, k = 0;
	uint32_t f[MAX_CHAIN];

	if (!c->uw)
		c->uw = unwinder__new(c->o.unwind_cache, c->sc);
	if (!c->uw) {
		out[0] = intern(c, markers[UNWIND_ERROR], strlen(markers[UNWIND_ERROR]), NULL,
				FRAME_SPECIAL, NULL, 0);
		c->stats.unwind_errors++;
		return 1;
	}
	t0 = clock_mono_ns();
	n = unwinder__unwind(c->uw, &s, pcs, GT_MAX_STACK, &st);
	c->stats.unwind_ns += clock_mono_ns() - t0;
	c->stats.unwound++;
	if (n == GT_MAX_STACK)
		c->stats.truncated++;
	if (st != UNWIND_OK) {
		if (st == UNWIND_TRUNCATED)
			c->stats.unwind_truncated++;
		else
			c->stats.unwind_errors++;
		out[k++] = intern(c, markers[st], strlen(markers[st]), NULL, FRAME_SPECIAL, NULL, 0);
	}
	while (n-- > 0)
		k += user_frames(c, ev->pid, pcs[n], n, k, out + k, f);
	return k;
}

/* Hands the CPython interpreter rt found in pid to python_fn, which has its frames walked. */
static void python_found(struct collector *c, uint32_t pid, const struct py_runtime *rt)
{
	const struct py_layout *l = &rt->layout;
	struct addr_table *t = table_of(c, pid);
	struct gt_py_proc pp = {
		.runtime = rt->runtime,
		.interp_head = l->interp_head,
		.interp_next = l->interp_next,
		.interp_threads = l->interp_threads,
		.tstate_next = l->tstate_next,
		.tstate_native_tid = l->tstate_native_tid,
		.tstate_cframe = l->tstate_cframe == PY_NONE ? GT_PY_NONE : l->tstate_cframe,
		.current_frame = l->current_frame,
		.frame_code = l->frame_code,
		.frame_previous = l->frame_previous,
		.frame_instr = l->frame_instr,
		.frame_owner = l->frame_owner,
		.frame_is_entry = l->frame_is_entry == PY_NONE ? GT_PY_NONE : l->frame_is_entry,
		.code_start = l->code_start,
	};

	if (!t || t->py)
		return;
	t->py = malloc(sizeof(*t->py));
	if (!t->py)
		return;
	*t->py = *rt;
	if (c->o.python_fn(c->o.python_ctx, (int)pid, &pp)) {
		free(t->py);
		t->py = NULL;
		t->py_never = true;
		return;
	}
	c->stats.python_procs++;
}

/* Looks for a CPython interpreter in pid (t: its table) now. */
static void python_look(struct collector *c, struct addr_table *t, uint32_t pid)
{
	struct py_runtime rt;
	char why[(sizeof(c->stats.python_why) - 16) / 3], clean[sizeof(why) * 3];
	int err;

	t->py_ns = clock_mono_ns();
	t->py_seen = false;
	err = py_detect((int)pid, &rt, why, sizeof(why));
	if (err == -ENOTSUP) {
		t->py_never = true;
		c->stats.python_unsupported++;
		clean[sanitize_text(why, strnlen(why, sizeof(why)), clean)] = '\0';
		snprintf(c->stats.python_why, sizeof(c->stats.python_why), "pid %u: %s", pid, clean);
	}
	if (!err)
		python_found(c, pid, &rt);
}

/* Looks for a CPython interpreter in pid on its first sample, and again (at most every
 * PY_RETRY_NS) once its stacks name the interpreter loop. */
static void python_check(struct collector *c, uint32_t pid)
{
	struct addr_table *t = table_of(c, pid);

	if (!t || t->py || t->py_never || !c->o.python_fn)
		return;
	if (t->py_ns && (!t->py_seen || clock_mono_ns() - t->py_ns < PY_RETRY_NS))
		return;
	python_look(c, t, pid);
}

static int python_scan_one(void *ctx, int pid)
{
	struct collector *c = ctx;
	struct addr_table *t = pid == getpid() ? NULL : table_of(c, (uint32_t)pid);

	if (t && !t->py)
		python_look(c, t, (uint32_t)pid);
	return 0;
}

void collector__python_scan(struct collector *c, const int *pids, size_t n)
{
	if (!c->o.python_fn)
		return;
	if (!n)
		procfs_each_id("/proc", python_scan_one, c);
	for (size_t i = 0; i < n; i++)
		if (pids[i] > 0)
			python_scan_one(c, pids[i]);
}

/* Interns the frame of one Python frame of pid: "qualname (file.py:line)", the file as
 * module and source; EMPTY on ENOMEM. */
static uint32_t python_frame(struct collector *c, uint32_t pid, const struct py_runtime *rt,
			     const struct gt_pyframe *pf)
{
	struct py_frame_name fn;
	const char *base;
	char name[1100];
	int err = py_names__frame(c->pn, (int)pid, rt, pf->code, pf->lasti, &fn), len;

	if (err == -ENOMEM)
		return EMPTY;
	if (err)
		c->stats.python_unnamed++;
	base = strrchr(fn.file, '/');
	base = base ? base + 1 : fn.file;
	if (!*base)
		len = snprintf(name, sizeof(name), "%.500s", fn.name);
	else if (fn.line)
		len = snprintf(name, sizeof(name), "%.500s (%.500s:%u)", fn.name, base, fn.line);
	else
		len = snprintf(name, sizeof(name), "%.500s (%.500s)", fn.name, base);
	return intern(c, name, (size_t)len, fn.file, FRAME_USER, fn.file, fn.line);
}

/* Drops CPython's perf-map trampolines (python -X perf, 3.12+: JIT frames "py::func:file", one
 * per call of the interpreter loop) from frames[0..*n): the walked frames name those calls,
 * with lines, and reach the root where the native walk stops in the trampolines. */
static void drop_perf_trampolines(struct collector *c, uint32_t *frames, size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		const struct frame *fr = frames[i] == EMPTY ? NULL : frames__get(c->ft, frames[i]);

		if (!fr || fr->kind != FRAME_JIT || strncmp(frames__name(c->ft, frames[i]), "py::", 4))
			frames[k++] = frames[i];
	}
	*n = k;
}

/* Puts the Python frames of ev in place of the interpreter-loop frames of its user stack
 * frames[0..*n) (root first, room for COLLECTOR_MAX_FRAMES). */
static void python_merge(struct collector *c, const struct gt_event *ev, uint32_t *frames,
			 size_t *n)
{
	struct addr_table *t = table_of(c, ev->pid);
	const struct gt_pyframe *pf = gt_event_pyframes(ev);
	uint32_t py[GT_PY_MAX_FRAMES + 1], merged[COLLECTOR_MAX_FRAMES];
	bool entry[GT_PY_MAX_FRAMES + 1], eval[COLLECTOR_MAX_FRAMES];
	size_t np = ev->pystack_len, keep = 0;
	uint64_t t0;

	if (!t || !t->py || !np || np > GT_PY_MAX_FRAMES)
		return;
	t0 = clock_mono_ns();
	drop_perf_trampolines(c, frames, n);
	if (!c->pn && !(c->pn = py_names__new()))
		return;
	if (c->py_eval_name == EMPTY)
		c->py_eval_name = strtab__intern(c->st, PY_EVAL, strlen(PY_EVAL));
	for (size_t i = 0; i < np; i++) {
		py[i] = python_frame(c, ev->pid, t->py, &pf[i]);
		if (py[i] == EMPTY)
			return;
		entry[i] = pf[i].flags & GT_PYF_ENTRY;
	}
	if (pf[np - 1].flags & GT_PYF_TRUNCATED) {
		/* Deeper than the walk goes: the outermost Python frames are missing. */
		entry[np - 1] = false;
		entry[np] = true;
		py[np] = intern(c, "[truncated]", strlen("[truncated]"), NULL, FRAME_SPECIAL, NULL, 0);
		if (py[np++] == EMPTY)
			return;
	}
	for (size_t i = 0; i < *n; i++) {
		const struct frame *fr = frames[i] == EMPTY ? NULL : frames__get(c->ft, frames[i]);

		eval[i] = fr && fr->kind == FRAME_USER && fr->name == c->py_eval_name;
		if (i == keep && fr && fr->kind == FRAME_SPECIAL)
			keep++; /* [truncated], [unwind error]: they stay at the root */
	}
	*n = py_merge(frames, eval, *n, keep, py, entry, np, merged, COLLECTOR_MAX_FRAMES);
	memcpy(frames, merged, *n * sizeof(*frames));
	c->stats.python_stacks++;
	c->stats.python_ns += clock_mono_ns() - t0;
}

/* Forgets pid's symbols, identity and unwinding state (its image is gone or replaced). */
static void process_forget(struct collector *c, uint32_t pid)
{
	py_names__forget(c->pn, (int)pid);
	ident_cache__forget(c->ic, (int)pid);
	cache_forget(c, pid);
	if (c->uw)
		unwinder__process_exit(c->uw, (int)pid);
}

/* Drops pid's cached addresses when its JIT map was read again: code there may have been
 * freed and other code put in its place (the newest lines name it). */
static void jit_check(struct collector *c, uint32_t pid)
{
	struct addr_table *t = table_of(c, pid);
	uint32_t gen = sym_cache__jit_gen(c->sc, (int)pid);

	if (t && t->jit_gen != gen) {
		table_clear(t);
		t->jit_gen = gen;
	}
}

/* JIT frames, and the frames inlined in them (native code's inline frames are in a file). */
static bool is_java(struct collector *c, const struct frame *fr)
{
	const char *m;

	if (!fr || (fr->kind != FRAME_JIT && fr->kind != FRAME_INLINED))
		return false;
	m = fr->kind == FRAME_INLINED && fr->module ? strtab__str(c->st, fr->module) : NULL;
	return fr->kind == FRAME_JIT || (m && !strcmp(m, "[jit]"));
}

/* Whether frame fr comes from the JVM's own library. */
static bool is_libjvm(struct collector *c, const struct frame *fr)
{
	static const char lib[] = "/libjvm.so";
	const char *m;
	size_t len;

	if (!fr || fr->kind != FRAME_USER || !fr->module)
		return false;
	m = strtab__str(c->st, fr->module);
	len = m ? strlen(m) : 0;
	return len >= sizeof(lib) - 1 && !strcmp(m + len - (sizeof(lib) - 1), lib);
}

/* Counts user stacks with Java frames (JIT code) and those whose outermost frame is one (the
 * walk stopped in JIT code: no frame pointers there); with no_java_native, drops the frames
 * of libjvm between two Java frames of frames[0..*n). */
static void java_frames(struct collector *c, uint32_t *frames, size_t *n)
{
	size_t first = SIZE_MAX, last = 0, root = SIZE_MAX, k = 0;

	for (size_t i = 0; i < *n; i++) {
		const struct frame *fr = frames[i] == EMPTY ? NULL : frames__get(c->ft, frames[i]);

		if (root == SIZE_MAX && fr && fr->kind != FRAME_SPECIAL)
			root = i;
		else if (root == SIZE_MAX && fr && !strcmp(frames__name(c->ft, frames[i]), "[truncated]"))
			root = SIZE_MAX - 1; /* cut by the size of the stack copy, not in JIT code */
		if (is_java(c, fr)) {
			if (first == SIZE_MAX)
				first = i;
			last = i;
		}
	}
	if (first == SIZE_MAX)
		return;
	c->stats.java_stacks++;
	if (root == first) {
		c->stats.java_cut++;
		c->stats.java_cut_pid = c->cur_pid;
	}
	if (!c->o.no_java_native || last <= first + 1)
		return;
	for (size_t i = 0; i < *n; i++)
		if (i <= first || i >= last || frames[i] == EMPTY ||
		    !is_libjvm(c, frames__get(c->ft, frames[i])))
			frames[k++] = frames[i];
	*n = k;
}

size_t collector__stack(struct collector *c, const struct gt_event *ev, uint32_t *frames)
{
	unsigned klen = ev->kstack_len, ulen = ev->ustack_len;
	uint32_t f[MAX_CHAIN];
	size_t n = 0;

	if (klen > GT_MAX_STACK)
		klen = GT_MAX_STACK;
	if (ulen > GT_MAX_STACK)
		ulen = GT_MAX_STACK;
	c->cur_pid = ev->pid;
	if (ev->pid && !c->o.no_user) {
		load_once(c, ev->pid);
		jit_check(c, ev->pid);
	}
	/* Stacks arrive innermost first: walk them backwards so the root comes first. */
	if (!c->o.no_user && ev->pid && (ev->flags & GT_EVF_UREGS))
		n += unwound_frames(c, ev, frames + n);
	else if (!c->o.no_user && ev->pid)
		for (unsigned i = ulen; i-- > 0;)
			n += user_frames(c, ev->pid, ev->stack[klen + i], i, n, frames + n, f);
	if (!c->o.no_user && ev->pid) {
		python_check(c, ev->pid);
		python_merge(c, ev, frames, &n);
	}
	if (n)
		java_frames(c, frames, &n);
	if (!c->o.no_kernel)
		for (unsigned i = klen; i-- > 0;)
			frames[n++] = addr_frame(c, 0, ev->stack[i]);
	return n;
}

void collector__task(struct collector *c, const struct sb_event *ev)
{
	static const char deleted[] = " (deleted)";
	struct proc_map m = { 0 };
	char path[4096];
	size_t len;

	switch (ev->kind) {
	case SB_MMAP:
		len = strnlen(ev->path, sizeof(path) - 1);
		memcpy(path, ev->path, len);
		path[len] = '\0';
		if (len > sizeof(deleted) - 1 &&
		    !strcmp(path + len - (sizeof(deleted) - 1), deleted)) {
			path[len - (sizeof(deleted) - 1)] = '\0';
			m.deleted = 1;
		}
		if (!strcmp(path, "//anon"))
			path[0] = '\0';
		m.start = ev->start;
		m.end = ev->start + ev->len;
		m.pgoff = ev->pgoff;
		m.dev = ev->dev;
		m.inode = ev->inode;
		m.path = path;
		sym_cache__mmap(c->sc, (int)ev->pid, &m);
		break;
	case SB_FORK:
		process_forget(c, ev->pid);
		sym_cache__fork(c->sc, (int)ev->ppid, (int)ev->pid);
		break;
	case SB_EXEC:
		process_forget(c, ev->pid);
		sym_cache__exec(c->sc, (int)ev->pid);
		break;
	case SB_EXIT:
		process_forget(c, ev->pid);
		sym_cache__process_exit(c->sc, (int)ev->pid);
		break;
	}
}

/* Records arrive per CPU, so a bucket's samples may interleave with the previous bucket's:
 * a few entries back are searched before a new one is added. Out of memory drops the tick
 * (the heat map is then short of it; the profile is not). */
static void add_tick(struct collector *c, int ti, uint64_t ts_ns, double value)
{
	uint64_t b = ts_ns / COLLECTOR_TICK_NS * COLLECTOR_TICK_NS;
	size_t n = c->nticks[ti];

	for (size_t k = n; k > 0 && k + 8 > n; k--)
		if (c->ticks[ti][k - 1].ns == b) {
			c->ticks[ti][k - 1].value += value;
			return;
		}
	if (ARRAY_GROW(c->ticks[ti], c->ticks_cap[ti], n + 1))
		return;
	c->ticks[ti][n] = (struct collector_tick){ b, value };
	c->nticks[ti]++;
}

/* leak: the in-process sampler's own frames at the leaf end (its malloc, the marker: see
 * bpf/preload/leak.c) go, so that the stack ends in the allocation's caller as it does with
 * the allocator's uprobes. */
static void drop_preload_frames(struct collector *c, uint32_t *frames, size_t *n)
{
	static const char lib[] = LEAK_PRELOAD_LIB;

	while (*n > 0) {
		const struct frame *fr = frames__get(c->ft, frames[*n - 1]);
		const char *m = fr && fr->module ? strtab__str(c->st, fr->module) : NULL;
		const char *base = m ? strrchr(m, '/') : NULL;

		if (!m || strncmp(base ? base + 1 : m, lib, sizeof(lib) - 1))
			return;
		(*n)--;
	}
}

/* The leak profile's heat: a block's bytes count when it reached the minimum age, and leave
 * at the record that freed (or replaced, or forgot) it. */
static void leak_tick(void *ctx, const struct leak_block *b, double bytes)
{
	struct collector *c = ctx;

	add_tick(c, STACK_LEAK, bytes > 0 ? b->ts_ns + c->o.leak_min_age_ns : c->leak_ts_ns, bytes);
}

void collector__event(struct collector *c, const struct gt_event *ev)
{
	uint32_t frames[MAX_FRAMES];
	size_t n;
	int ti;
	double value;
	unsigned klen = ev->kstack_len, ulen = ev->ustack_len;

	c->leak_ts_ns = ev->ts_ns;
	if (ev->type == GT_EV_UNMAP) {
		double taken = growth_set__unmap(c->growth, ev->pid, ev->aux, ev->value,
						 c->profiles[STACK_GROWTH]);

		if (taken > 0)
			add_tick(c, STACK_GROWTH, ev->ts_ns, -taken);
		return;
	}
	if (ev->type == GT_EV_FREE) {
		leak_set__release(c->leak, ev->pid, ev->aux, c->profiles[STACK_LEAK]);
		return;
	}
	if (ev->type == GT_EV_EXEC || ev->type == GT_EV_EXIT) {
		/* Its heap is gone: so are its blocks. */
		double gone;

		leak_set__forget_pid(c->leak, ev->pid, c->profiles[STACK_LEAK], c->o.leak_forget_fn,
				     c->o.leak_ctx);
		gone = growth_set__forget_pid(c->growth, ev->pid, c->profiles[STACK_GROWTH]);
		if (gone > 0)
			add_tick(c, STACK_GROWTH, ev->ts_ns, -gone);
	}
	if (ev->type == GT_EV_EXEC) {
		/* A new program in the same pid: new name, new mappings. */
		c->stats.exec++;
		process_forget(c, ev->pid);
		return;
	}
	if (ev->type == GT_EV_EXIT) {
		c->stats.exit++;
		sym_cache__process_exit(c->sc, (int)ev->pid);
		process_forget(c, ev->pid);
		return;
	}
	ti = stack_type_of_record(ev->type);
	if (ti < 0)
		return;
	c->stats.events++;
	if (ev->flags & (GT_EVF_KSTACK_FAIL | GT_EVF_USTACK_FAIL))
		c->stats.stack_fail++;
	if (klen > GT_MAX_STACK)
		klen = GT_MAX_STACK;
	if (ulen > GT_MAX_STACK)
		ulen = GT_MAX_STACK;
	if (klen == GT_MAX_STACK || ulen == GT_MAX_STACK)
		c->stats.truncated++;
	n = identity_frames(c, ev, frames);
	n += collector__stack(c, ev, frames + n);
	for (size_t i = 0; i < n; i++)
		if (frames[i] == EMPTY)
			return; /* out of memory: drop the sample rather than misfile it */
	if (ti == STACK_LEAK) {
		drop_preload_frames(c, frames, &n);
		/* Shown once old enough (collector__leak_age). */
		leak_set__alloc(c->leak, ev->pid, ev->aux, ev->ts_ns, ev->value,
				leak_weight(ev->value, c->o.leak_sample), frames, n,
				c->profiles[STACK_LEAK]);
		return;
	}
	if (ti == STACK_GROWTH) {
		/* What it mapped over (MAP_FIXED) went first. */
		double taken = growth_set__map(c->growth, ev->pid, ev->aux, ev->value, frames, n,
					       c->profiles[STACK_GROWTH]);

		if (taken >= 0)
			add_tick(c, STACK_GROWTH, ev->ts_ns, (double)ev->value - taken);
		return;
	}
	value = (double)ev->value;
	if (ev->type == GT_EV_MEM && c->o.mem_bytes)
		value *= (double)c->page_size;
	profile__add_stack(c->profiles[ti], frames, n, value);
	stack_cap_apply(&c->caps[ti], c->profiles[ti]);
	add_tick(c, ti, ev->ts_ns, value);
}

const struct collector_tick *collector__ticks(const struct collector *c, enum stack_type t,
					      size_t *n)
{
	bool ok = (unsigned)t < NTYPES;

	*n = ok ? c->nticks[t] : 0;
	return ok ? c->ticks[t] : NULL;
}

struct profile *collector__profile(struct collector *c, enum stack_type t)
{
	return (unsigned)t < NTYPES ? c->profiles[t] : NULL;
}

void collector__leak_age(struct collector *c, uint64_t now_ns)
{
	if (now_ns > c->o.leak_min_age_ns)
		leak_set__age(c->leak, now_ns - c->o.leak_min_age_ns, c->profiles[STACK_LEAK]);
}

const struct leak_set *collector__leak(const struct collector *c)
{
	return c->leak;
}

const struct growth_set *collector__growth(const struct collector *c)
{
	return c->growth;
}

void collector__clear(struct collector *c)
{
	for (int i = 0; i < NTYPES; i++) {
		profile__clear(c->profiles[i]);
		c->nticks[i] = 0;
		c->caps[i].next_check = c->caps[i].max ? (uint32_t)c->caps[i].max : UINT32_MAX;
	}
}

int collector__set_frames(struct collector *c, struct frames *ft)
{
	struct profile *fresh[NTYPES] = { NULL };

	for (int i = 0; i < NTYPES; i++) {
		fresh[i] = profile__new(ft, profile__kind(c->profiles[i]), false);
		if (!fresh[i]) {
			for (int k = 0; k < i; k++)
				profile__free(fresh[k]);
			return -ENOMEM;
		}
	}
	if (leak_set__move_frames(c->leak, ft, c->ft) ||
	    growth_set__move_frames(c->growth, ft, c->ft)) {
		for (int i = 0; i < NTYPES; i++)
			profile__free(fresh[i]);
		return -ENOMEM;
	}
	for (int i = 0; i < NTYPES; i++) {
		profile__free(c->profiles[i]);
		c->profiles[i] = fresh[i];
		c->caps[i].next_check = c->caps[i].max ? (uint32_t)c->caps[i].max : UINT32_MAX;
	}
	/* Every cached frame id belongs to the old table: symbolize afresh. */
	hmap__each(c->tables, table_free_cb, NULL);
	hmap__free(c->tables);
	c->tables = hmap__new();
	c->last = NULL;
	c->ft = ft;
	c->st = frames__strtab(ft);
	c->py_eval_name = EMPTY;
	return c->tables ? 0 : -ENOMEM;
}

void collector__stats(const struct collector *c, struct collector_stats *st)
{
	*st = c->stats;
	for (int i = 0; i < NTYPES; i++)
		st->folded += c->caps[i].folded;
	if (c->uw) {
		struct unwind_stats us;

		unwinder__stats(c->uw, &us);
		st->unwind_replays = us.replays;
	}
}
