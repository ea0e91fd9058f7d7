#include "collector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/hash.h"
#include "model/sanitize.h"
#include "symbols/unwind.h"

#define NTYPES 3
#define EMPTY UINT32_MAX
#define MAX_FRAMES (2 * GT_MAX_STACK + 8)

/* (pid, address) -> frame id, so each address is symbolized once; pid 0 holds kernel ones. */
struct addr_entry {
	uint64_t addr;
	uint32_t pid;
	uint32_t frame;
};

struct collector {
	struct frames *ft;
	struct strtab *st;
	struct sym_cache *sc;
	struct ident_cache *ic;
	struct collector_opts o;
	struct profile *profiles[NTYPES];
	struct addr_entry *cache;
	size_t cache_used, cache_mask;
	struct collector_stats stats;
	long page_size;
	struct unwinder *uw; /* created on the first record with a user stack copy */
};

static int type_index(enum gt_event_type t)
{
	switch (t) {
	case GT_EV_ONCPU:
		return 0;
	case GT_EV_OFFCPU:
		return 1;
	case GT_EV_MEM:
		return 2;
	default:
		return -1;
	}
}

const char *collector_type_name(enum gt_event_type type)
{
	static const char *const names[NTYPES] = { "oncpu", "offcpu", "mem" };
	int i = type_index(type);

	return i < 0 ? "unknown" : names[i];
}

static int cache_init(struct collector *c, size_t size)
{
	c->cache = malloc(size * sizeof(*c->cache));
	if (!c->cache)
		return -ENOMEM;
	for (size_t i = 0; i < size; i++)
		c->cache[i].frame = EMPTY;
	c->cache_mask = size - 1;
	c->cache_used = 0;
	return 0;
}

struct collector *collector__new(struct frames *ft, struct sym_cache *sc, struct ident_cache *ic,
				 const struct collector_opts *o)
{
	static const enum value_kind kinds[NTYPES] = { VALUE_SAMPLES, VALUE_MICROSECONDS,
						       VALUE_FAULTS };
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
	for (int i = 0; i < NTYPES; i++) {
		enum value_kind k = kinds[i];

		if (i == 2 && c->o.mem_bytes)
			k = VALUE_BYTES;
		c->profiles[i] = profile__new(ft, k, false);
		if (!c->profiles[i])
			goto fail;
	}
	if (cache_init(c, 1 << 14))
		goto fail;
	return c;
fail:
	collector__free(c);
	return NULL;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	for (int i = 0; i < NTYPES; i++)
		profile__free(c->profiles[i]);
	unwinder__free(c->uw);
	free(c->cache);
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

static size_t cache_slot(const struct collector *c, uint32_t pid, uint64_t addr)
{
	return hash_pair(pid, (uint32_t)(addr ^ (addr >> 32))) & c->cache_mask;
}

/* Re-files every entry into a table of size slots, leaving out those of pid drop (0: none;
 * kernel entries use pid 0 and are never dropped). On ENOMEM the old table stays. */
static int cache_rebuild(struct collector *c, size_t size, uint32_t drop)
{
	struct addr_entry *old = c->cache;
	size_t oldsize = c->cache_mask + 1, used = c->cache_used;

	if (cache_init(c, size)) {
		c->cache = old;
		c->cache_mask = oldsize - 1;
		c->cache_used = used;
		return -ENOMEM;
	}
	for (size_t i = 0; i < oldsize; i++) {
		size_t j;

		if (old[i].frame == EMPTY || (drop && old[i].pid == drop))
			continue;
		for (j = cache_slot(c, old[i].pid, old[i].addr); c->cache[j].frame != EMPTY;
		     j = (j + 1) & c->cache_mask)
			;
		c->cache[j] = old[i];
		c->cache_used++;
	}
	free(old);
	return 0;
}

/* The cached frame of (pid, addr), or EMPTY. */
static uint32_t cache_find(const struct collector *c, uint32_t pid, uint64_t addr)
{
	for (size_t i = cache_slot(c, pid, addr); c->cache[i].frame != EMPTY;
	     i = (i + 1) & c->cache_mask)
		if (c->cache[i].addr == addr && c->cache[i].pid == pid)
			return c->cache[i].frame;
	return EMPTY;
}

/* Caches frame for (pid, addr), which must not be cached yet; without memory to grow, the
 * entry is simply not kept. */
static void cache_insert(struct collector *c, uint32_t pid, uint64_t addr, uint32_t frame)
{
	size_t i;

	if ((c->cache_used + 1) * 4 > (c->cache_mask + 1) * 3 &&
	    cache_rebuild(c, (c->cache_mask + 1) * 2, 0))
		return;
	for (i = cache_slot(c, pid, addr); c->cache[i].frame != EMPTY; i = (i + 1) & c->cache_mask)
		;
	c->cache[i] = (struct addr_entry){ addr, pid, frame };
	c->cache_used++;
}

/* Returns the frame for addr in pid (0 = kernel), symbolizing it on first sight. */
static uint32_t addr_frame(struct collector *c, uint32_t pid, uint64_t addr)
{
	uint32_t f = cache_find(c, pid, addr);
	struct sym_info si;
	char name[1100];
	const char *n;
	int len, err;

	if (f != EMPTY)
		return f;
	err = pid ? sym_cache__user(c->sc, (int)pid, addr, &si)
		  : sym_cache__kernel(c->sc, addr, &si);
	if (err == -ENOMEM)
		return EMPTY;
	if (err)
		c->stats.unknown_frames++;
	n = si.name;
	len = (int)strlen(n);
	if (c->o.annotate && (si.kind == FRAME_KERNEL || si.kind == FRAME_JIT)) {
		len = snprintf(name, sizeof(name), "%.1000s%s", si.name,
			       si.kind == FRAME_KERNEL ? "_[k]" : "_[j]");
		n = name;
	}
	f = intern(c, n, (size_t)len, si.module, si.kind, si.file, si.line);
	if (f == EMPTY)
		return EMPTY;
	/* A user address in no known mapping may be in a library mapped after the maps were
	 * read (the sym_cache re-reads them at most every 200 ms): ask again next time. */
	if (!(err && pid && si.kind == FRAME_SPECIAL))
		cache_insert(c, pid, addr, f);
	return f;
}

/* (pid, LOADED) is cached once pid's mappings and symbols were read since its exec. */
#define LOADED UINT64_MAX

/* Reads pid's mappings and symbols on its first sample rather than at every exec in the
 * system: most processes are never sampled. */
static void load_once(struct collector *c, uint32_t pid)
{
	if (cache_find(c, pid, LOADED) != EMPTY)
		return;
	sym_cache__process_load(c->sc, (int)pid);
	cache_insert(c, pid, LOADED, 0);
}

/* Drops pid's cached addresses (its mappings may be reused by another process). */
static void cache_forget(struct collector *c, uint32_t pid)
{
	size_t size = c->cache_mask + 1, i;

	/* Most exiting processes were never sampled: look before rebuilding. */
	for (i = 0; i < size; i++)
		if (c->cache[i].frame != EMPTY && c->cache[i].pid == pid)
			break;
	if (i < size)
		cache_rebuild(c, size, pid);
}

static size_t identity_frames(struct collector *c, const struct gt_event *ev, uint32_t *out)
{
	struct proc_ident id;
	char buf[320];
	size_t n = 0;
	const char *comm = NULL;
	char evcomm[GT_COMM_LEN + 1];
	int len;

	memcpy(evcomm, ev->comm, GT_COMM_LEN);
	evcomm[GT_COMM_LEN] = '\0';
	if (ev->pid && ident_cache__lookup(c->ic, (int)ev->pid, &id) == 0) {
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
	len = snprintf(buf, sizeof(buf), "[%u]%s", ev->pid, comm);
	out[n++] = intern(c, buf, (size_t)len, NULL, FRAME_PROCESS, NULL, 0);
	if (c->o.threads) {
		len = snprintf(buf, sizeof(buf), "[%u]%s", ev->tid, evcomm);
		out[n++] = intern(c, buf, (size_t)len, NULL, FRAME_THREAD, NULL, 0);
	}
	return n;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

	if (!c->uw)
		c->uw = unwinder__new(c->o.unwind_cache);
	if (!c->uw) {
		out[0] = intern(c, markers[UNWIND_ERROR], strlen(markers[UNWIND_ERROR]), NULL,
				FRAME_SPECIAL, NULL, 0);
		c->stats.unwind_errors++;
		return 1;
	}
	t0 = now_ns();
	n = unwinder__unwind(c->uw, &s, pcs, GT_MAX_STACK, &st);
	c->stats.unwind_ns += now_ns() - t0;
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
		out[k++] = addr_frame(c, ev->pid, pcs[n]);
	return k;
}

/* Forgets pid's symbols, identity and unwinding state (its image is gone or replaced). */
static void process_forget(struct collector *c, uint32_t pid)
{
	ident_cache__forget(c->ic, (int)pid);
	cache_forget(c, pid);
	if (c->uw)
		unwinder__process_exit(c->uw, (int)pid);
}

void collector__event(struct collector *c, const struct gt_event *ev)
{
	uint32_t frames[MAX_FRAMES];
	size_t n;
	int ti;
	double value;
	unsigned klen = ev->kstack_len, ulen = ev->ustack_len;

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
	ti = type_index(ev->type);
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
	if (ev->pid && !c->o.no_user)
		load_once(c, ev->pid);
	/* Stacks arrive innermost first: walk them backwards so the root comes first. */
	if (!c->o.no_user && ev->pid && (ev->flags & GT_EVF_UREGS))
		n += unwound_frames(c, ev, frames + n);
	else if (!c->o.no_user && ev->pid)
		for (unsigned i = ulen; i-- > 0;)
			frames[n++] = addr_frame(c, ev->pid, ev->stack[klen + i]);
	if (!c->o.no_kernel)
		for (unsigned i = klen; i-- > 0;)
			frames[n++] = addr_frame(c, 0, ev->stack[i]);
	for (size_t i = 0; i < n; i++)
		if (frames[i] == EMPTY)
			return; /* out of memory: drop the sample rather than misfile it */
	value = (double)ev->value;
	if (ev->type == GT_EV_MEM && c->o.mem_bytes)
		value *= (double)c->page_size;
	profile__add_stack(c->profiles[ti], frames, n, value);
}

struct profile *collector__profile(struct collector *c, enum gt_event_type type)
{
	int i = type_index(type);

	return i < 0 ? NULL : c->profiles[i];
}

void collector__clear(struct collector *c)
{
	for (int i = 0; i < NTYPES; i++)
		profile__clear(c->profiles[i]);
}

void collector__stats(const struct collector *c, struct collector_stats *st)
{
	*st = c->stats;
}
