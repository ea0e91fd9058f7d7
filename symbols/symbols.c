/* The symbol cache: per-process mappings and JIT maps over ELF tables shared by (dev, inode) and
 * build-id, kallsyms, and interned result strings that outlive evicted tables. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "demangle.h"
#include "elf_syms.h"
#include "hmap.h"
#include "jitmap.h"
#include "util/file.h"
#include "kallsyms.h"
#include "proc_maps.h"
#include "symcache.h"
#include "symtab.h"
#include "util/clock.h"
#include "util/thread.h"
#include "util/grow.h"

/* Returns the cache's copy of s (stable until sym_cache__free), or NULL on ENOMEM. */
static const char *intern(struct sym_cache *sc, const char *s)
{
	size_t len = strlen(s);
	const char *k = hmap__get(sc->strs, s, len);
	const void *key;

	if (k)
		return k;
	key = hmap__put(sc->strs, s, len, NULL);
	if (key)
		hmap__put(sc->strs, s, len, (void *)key);
	return key;
}

/* The display (demangled) name for raw symbol name raw, interned; NULL on ENOMEM. */
static const char *display_name(struct sym_cache *sc, const char *raw)
{
	size_t len = strlen(raw);
	const char *d = hmap__get(sc->names, raw, len);
	char *dem;

	if (d)
		return d;
	dem = sym_demangle(raw, !sc->perf_names);
	d = intern(sc, dem ? dem : raw);
	free(dem);
	if (d && !hmap__put(sc->names, raw, len, (void *)d))
		return NULL;
	return d;
}

/* The path of mapping m, interned (once per mapping); NULL on ENOMEM. */
static const char *map_path(struct sym_cache *sc, const struct proc_map *m)
{
	if (!m->interned)
		((struct proc_map *)m)->interned = intern(sc, m->path);
	return m->interned;
}

static void fill(struct sym_info *out, const char *name, const char *module, uint64_t off,
		 int kind)
{
	out->name = name;
	out->module = module;
	out->offset = off;
	out->kind = kind;
	out->file = NULL;
	out->line = 0;
	out->inlined = NULL;
	out->ninlined = 0;
}

/* Fills out with "[unknown]"; the strings are interned at creation, so this cannot fail. */
static int unknown(struct sym_cache *sc, const char *module, uint64_t off, struct sym_info *out)
{
	fill(out, sc->unknown_name, module ? module : intern(sc, ""), off, FRAME_SPECIAL);
	return -ENOENT;
}

struct sym_cache *sym_cache__new(void)
{
	struct sym_cache *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->strs = hmap__new();
	sc->names = hmap__new();
	sc->procs = hmap__new();
	sc->files = hmap__new();
	sc->elf_cap = 256;
	sc->lines = 1;
	sc->inlines = 1;
	if (!sc->strs || !sc->names || !sc->procs || !sc->files ||
	    !(sc->unknown_name = intern(sc, "[unknown]")) || !intern(sc, "")) {
		sym_cache__free(sc);
		return NULL;
	}
	return sc;
}

/* ---- processes ---- */

static void proc_drop_maps(struct sym_cache *sc, struct proc *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->elfs[i])
			elf_cache_unref(sc, p->elfs[i]);
	proc_maps__free(p->maps, p->nmaps);
	free(p->elfs);
	p->maps = NULL;
	p->elfs = NULL;
	p->nmaps = p->maps_cap = 0;
}

static void proc_free(struct sym_cache *sc, struct proc *p)
{
	if (sc->last_proc == p)
		sc->last_proc = NULL;
	proc_drop_maps(sc, p);
	sym_table__free(p->jit);
	free(p);
}

static struct proc *proc_new(struct sym_cache *sc, int pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	snprintf(p->root, sizeof(p->root), "/proc/%d/root", pid);
	if (!hmap__put(sc->procs, &pid, sizeof(pid), p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Installs freshly read maps; objects of unchanged mappings are carried over. */
static int proc_set_maps(struct sym_cache *sc, struct proc *p, struct proc_map *maps, size_t n)
{
	struct elf_obj **elfs = calloc(n ? n : 1, sizeof(*elfs));

	if (!elfs) {
		proc_maps__free(maps, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *old = proc_maps__find(p->maps, p->nmaps, maps[i].start);

		if (old && old->start == maps[i].start && old->end == maps[i].end &&
		    old->pgoff == maps[i].pgoff && old->dev == maps[i].dev &&
		    old->inode == maps[i].inode && !strcmp(old->path, maps[i].path)) {
			elfs[i] = p->elfs[old - p->maps];
			p->elfs[old - p->maps] = NULL;
		}
	}
	proc_drop_maps(sc, p);
	p->maps = maps;
	p->elfs = elfs;
	p->nmaps = p->maps_cap = n;
	return 0;
}

static void proc_load_jit(struct sym_cache *sc, struct proc *p)
{
	struct stat st;
	off_t size;
	struct sym_table *t;
	char path[PATH_MAX];
	int err;

	p->jit_ns = clock_mono_ns();
	if (jitmap__path(p->pid, path, sizeof(path)))
		return;
	/* sized before the read, so lines appended meanwhile make the next size differ */
	size = !lstat(path, &st) && S_ISREG(st.st_mode) ? st.st_size : -1;
	if (p->jit && size >= 0 && size == p->jit_size)
		return;
	err = jitmap_load(path, &t);
	if (err == -ELOOP || err == -EFTYPE_NOTREG || err == -EFBIG) {
		/* A symlink, FIFO or huge file where a perf map belongs: refused, and said once. */
		if (!sc->hostile++)
			snprintf(sc->hostile_first, sizeof(sc->hostile_first), "%s: %s", path,
				 file_strerror(err, JITMAP_MAX_BYTES));
	}
	if (err)
		return; /* gone or no JIT: what was read before stays */
	sym_table__free(p->jit);
	p->jit = t;
	p->jit_gen++;
	p->jit_size = size;
}

/* Re-reads p's maps (and JIT map); with eager, resolves every mapping's symbols now. */
static int proc_refresh(struct sym_cache *sc, struct proc *p, int eager)
{
	struct proc_map *maps;
	size_t n;
	int err;

	p->maps_ns = clock_coarse_ns();
	if (!p->tracked) {
		sc->maps_reads++;
		err = proc_maps__read(p->pid, &maps, &n);
		if (!err)
			err = proc_set_maps(sc, p, maps, n);
	} else {
		err = 0;
	}
	proc_load_jit(sc, p);
	if (!err && eager)
		for (size_t i = 0; i < p->nmaps; i++)
			elf_cache_map(sc, p, i);
	return err;
}

static struct proc *proc_get(struct sym_cache *sc, int pid)
{
	struct proc *p;

	if (sc->last_proc && sc->last_proc->pid == pid)
		return sc->last_proc;
	p = hmap__get(sc->procs, &pid, sizeof(pid));
	if (p)
		sc->last_proc = p;
	return p;
}

uint32_t sym_cache__jit_gen(struct sym_cache *sc, int pid)
{
	struct proc *p = proc_get(sc, pid);

	return p ? p->jit_gen : 0;
}

/* pid's state read from /proc now; NULL when pid is gone (nothing is kept for it: a process
 * that exited is known only through what was read while it lived) or on ENOMEM. */
static struct proc *proc_read_new(struct sym_cache *sc, int pid)
{
	struct proc *p = proc_new(sc, pid);

	if (p && proc_refresh(sc, p, 0) && !p->nmaps) {
		hmap__del(sc->procs, &pid, sizeof(pid));
		proc_free(sc, p);
		p = NULL;
	}
	return p;
}

/* Adds the functions inlined at vaddr of es to out, demangled. 0 or -ENOMEM. */
static int user_inlines(struct sym_cache *sc, struct elf_syms *es, uint64_t vaddr,
			struct sym_info *out)
{
	size_t n = elf_syms__inlines(es, vaddr, sc->inlined, ELF_MAX_INLINES);

	for (size_t i = 0; i < n; i++)
		if (!(sc->inlined[i] = display_name(sc, sc->inlined[i])))
			return -ENOMEM;
	out->inlined = sc->inlined;
	out->ninlined = (unsigned)n;
	return 0;
}

/* One lookup over what p holds now: 0 or -ENOENT with out filled, 1 when addr is in no file
 * mapping and no JIT symbol (worth a refresh), -ENOMEM. */
static int user_once(struct sym_cache *sc, struct proc *p, uint64_t addr, struct sym_info *out)
{
	const struct proc_map *m = proc_maps__find(p->maps, p->nmaps, addr);
	const char *name, *module, *file;
	struct elf_obj *o;
	uint64_t file_off, off, vaddr;
	unsigned line;
	char buf[PATH_MAX + 32];

	if (!m || !m->path[0]) {
		const struct sym_entry *e = p->jit ? sym_table__find(p->jit, addr) : NULL;

		if (!e)
			return 1;
		name = display_name(sc, sym_table__name(p->jit, e));
		module = intern(sc, "[jit]");
		if (!name || !module)
			return -ENOMEM;
		fill(out, name, module, addr - e->start, FRAME_JIT);
		return 0;
	}
	module = map_path(sc, m);
	if (!module)
		return -ENOMEM;
	file_off = addr - m->start + m->pgoff;
	o = elf_cache_map(sc, p, m - p->maps);
	if (o && o->syms && (name = elf_syms__find(o->syms, file_off, &off, &vaddr))) {
		name = display_name(sc, name);
		if (!name)
			return -ENOMEM;
		fill(out, name, module, off, FRAME_USER);
		if (sc->lines && !elf_syms__line(o->syms, vaddr, &file, &line)) {
			out->file = intern(sc, file);
			out->line = out->file ? line : 0;
		}
		return sc->inlines ? user_inlines(sc, o->syms, vaddr, out) : 0;
	}
	if (sc->plain_unknowns) {
		fill(out, sc->unknown_name, module, file_off, FRAME_USER);
		return -ENOENT;
	}
	name = strrchr(m->path, '/');
	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, name ? name + 1 : m->path, file_off);
	name = intern(sc, buf);
	if (!name)
		return -ENOMEM;
	fill(out, name, module, file_off, FRAME_USER);
	return -ENOENT;
}

int sym_cache__user(struct sym_cache *sc, int pid, uint64_t addr, struct sym_info *out)
{
	struct proc *p = proc_get(sc, pid);
	const struct proc_map *m;
	int r;

	if (!p && !(p = proc_read_new(sc, pid)))
		return unknown(sc, NULL, addr, out);
	r = user_once(sc, p, addr, out);
	if (r == 1 && clock_coarse_ns() - p->maps_ns >= MAPS_REFRESH_NS) {
		proc_refresh(sc, p, 0);
		r = user_once(sc, p, addr, out);
	}
	if (r == 1) {
		m = proc_maps__find(p->maps, p->nmaps, addr);
		return unknown(sc, m ? intern(sc, "[anon]") : NULL, m ? addr - m->start : addr, out);
	}
	if (r == -ENOMEM)
		unknown(sc, NULL, addr, out);
	return r;
}

int sym_cache__process_load(struct sym_cache *sc, int pid)
{
	struct proc *p = proc_get(sc, pid);

	if (p)
		return proc_refresh(sc, p, 1);
	p = proc_read_new(sc, pid);
	if (!p)
		return -ESRCH;
	for (size_t i = 0; i < p->nmaps; i++)
		elf_cache_map(sc, p, i);
	return 0;
}

void sym_cache__process_exit(struct sym_cache *sc, int pid)
{
	struct proc *p = hmap__del(sc->procs, &pid, sizeof(pid));

	if (!p)
		return;
	proc_free(sc, p);
	elf_cache_evict(sc);
}

/* ---- mappings from side-band events ---- */

/* Removes from p whatever [start, end) covers, trimming mappings that stick out of it. */
static void proc_unmap(struct sym_cache *sc, struct proc *p, uint64_t start, uint64_t end)
{
	size_t i = 0;

	while (i < p->nmaps) {
		struct proc_map *m = &p->maps[i];

		if (m->end <= start || m->start >= end) {
			i++;
		} else if (m->start >= start && m->end <= end) {
			if (p->elfs[i])
				elf_cache_unref(sc, p->elfs[i]);
			free(m->path);
			memmove(m, m + 1, (p->nmaps - i - 1) * sizeof(*m));
			memmove(&p->elfs[i], &p->elfs[i + 1], (p->nmaps - i - 1) * sizeof(*p->elfs));
			p->nmaps--;
		} else if (m->start < start) {
			m->end = start; /* a new mapping over its tail (the part past it is lost) */
			i++;
		} else {
			m->pgoff += end - m->start;
			m->start = end;
			i++;
		}
	}
}

/* pid's state for a side-band event, created empty when unknown. */
static struct proc *proc_tracked(struct sym_cache *sc, int pid)
{
	struct proc *p = proc_get(sc, pid);

	if (!p && (p = proc_new(sc, pid)))
		p->maps_ns = clock_coarse_ns();
	return p;
}

int sym_cache__exec(struct sym_cache *sc, int pid)
{
	struct proc *p = proc_tracked(sc, pid);

	if (!p)
		return -ENOMEM;
	proc_drop_maps(sc, p);
	sym_table__free(p->jit);
	p->jit = NULL;
	p->tracked = true;
	return 0;
}

int sym_cache__fork(struct sym_cache *sc, int ppid, int pid)
{
	struct proc *parent = proc_get(sc, ppid), *p;
	size_t n;

	sym_cache__process_exit(sc, pid); /* a reused pid */
	if (!parent && !(parent = proc_new(sc, ppid)))
		return -ENOMEM;
	if (!parent->tracked) {
		/* A parent older than the side band: its mappings now, then its events. */
		proc_refresh(sc, parent, 0);
		if (!parent->nmaps)
			return 0; /* gone: the child is read from /proc if it is ever sampled */
		parent->tracked = true;
	}
	p = proc_tracked(sc, pid);
	if (!p)
		return -ENOMEM;
	n = parent->nmaps;
	p->maps = calloc(n ? n : 1, sizeof(*p->maps));
	p->elfs = calloc(n ? n : 1, sizeof(*p->elfs));
	if (!p->maps || !p->elfs) {
		sym_cache__process_exit(sc, pid);
		return -ENOMEM;
	}
	p->maps_cap = n;
	for (size_t i = 0; i < n; i++) {
		p->maps[i] = parent->maps[i];
		p->maps[i].path = strdup(parent->maps[i].path);
		if (!p->maps[i].path) {
			p->nmaps = i;
			sym_cache__process_exit(sc, pid);
			return -ENOMEM;
		}
		p->elfs[i] = parent->elfs[i];
		if (p->elfs[i])
			elf_cache_ref(sc, p->elfs[i]);
	}
	p->nmaps = n;
	p->tracked = true;
	return 0;
}

int sym_cache__mmap(struct sym_cache *sc, int pid, const struct proc_map *m)
{
	struct proc *p = proc_get(sc, pid);
	size_t i;

	if (!p || m->end <= m->start)
		return 0; /* never sampled and not followed since its exec: /proc will tell */
	proc_unmap(sc, p, m->start, m->end);
	if (p->nmaps == p->maps_cap) {
		size_t ncap = grow_cap(p->maps_cap, p->nmaps + 1, 16, SIZE_MAX / sizeof(*p->maps));

		if (!ncap || ARRAY_RESIZE(p->maps, ncap) || ARRAY_RESIZE(p->elfs, ncap))
			return -ENOMEM;
		p->maps_cap = ncap;
	}
	for (i = p->nmaps; i > 0 && p->maps[i - 1].start > m->start; i--)
		;
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(*p->maps));
	memmove(&p->elfs[i + 1], &p->elfs[i], (p->nmaps - i) * sizeof(*p->elfs));
	p->maps[i] = *m;
	p->maps[i].path = strdup(m->path ? m->path : "");
	p->maps[i].interned = NULL;
	p->elfs[i] = NULL;
	if (!p->maps[i].path) {
		memmove(&p->maps[i], &p->maps[i + 1], (p->nmaps - i) * sizeof(*p->maps));
		memmove(&p->elfs[i], &p->elfs[i + 1], (p->nmaps - i) * sizeof(*p->elfs));
		return -ENOMEM;
	}
	p->nmaps++;
	return 0;
}

int sym_cache__go_frame(struct sym_cache *sc, int pid, uint64_t addr, int32_t *spdelta, bool *top)
{
	struct proc *p = proc_get(sc, pid);
	const struct proc_map *m = p ? proc_maps__find(p->maps, p->nmaps, addr) : NULL;
	struct elf_obj *o = m && m->path[0] ? elf_cache_map(sc, p, m - p->maps) : NULL;

	if (!o || !o->syms)
		return -ENOENT;
	return elf_syms__go_frame(o->syms, addr - m->start + m->pgoff, spdelta, top);
}

int sym_cache__module(struct sym_cache *sc, int pid, uint64_t addr, bool open_file,
		      struct sym_module *out)
{
	struct proc *p = proc_get(sc, pid);
	const struct proc_map *m;
	struct elf_obj *o;

	if (!p && !(p = proc_read_new(sc, pid)))
		return -ENOENT;
	m = proc_maps__find(p->maps, p->nmaps, addr);
	if ((!m || !m->path[0]) && clock_coarse_ns() - p->maps_ns >= MAPS_REFRESH_NS) {
		proc_refresh(sc, p, 0);
		m = proc_maps__find(p->maps, p->nmaps, addr);
	}
	if (!m || !m->path[0])
		return -ENOENT;
	out->fd = -1;
	if (open_file) {
		o = elf_cache_map(sc, p, m - p->maps);
		if (!o || o->fd < 0)
			return -ENOENT;
		out->fd = dup(o->fd);
		if (out->fd < 0)
			return -errno;
	}
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->dev = m->dev;
	out->inode = m->inode;
	out->path = map_path(sc, m);
	if (!out->path) {
		if (out->fd >= 0)
			close(out->fd);
		return -ENOMEM;
	}
	return 0;
}

/* ---- kernel ---- */

static const char *kallsyms_file(const struct sym_cache *sc)
{
	return sc->kallsyms_path ? sc->kallsyms_path : "/proc/kallsyms";
}

/* The preload thread: touches nothing of sc but ks_pre (kallsyms_path is not changed while
 * it runs: every writer joins first). */
static void *kernel_preload_run(void *arg)
{
	struct sym_cache *sc = arg;

	if (kallsyms__load(kallsyms_file(sc), &sc->ks_pre))
		sc->ks_pre = NULL;
	return NULL;
}

int sym_cache__kernel_preload(struct sym_cache *sc)
{
	int err;

	if (sc->ks_tried || sc->ks_pending)
		return 0;
	err = thread_start_quiet(&sc->ks_thread, kernel_preload_run, sc);
	if (err)
		return err;
	sc->ks_pending = true;
	sc->ks_ns = clock_mono_ns();
	return 0;
}

/* Waits for a preload, if one runs, and takes what it read. */
static void kernel_join(struct sym_cache *sc)
{
	if (!sc->ks_pending)
		return;
	pthread_join(sc->ks_thread, NULL);
	sc->ks_pending = false;
	sc->ks_tried = 1;
	if (sc->ks_pre) {
		kallsyms__free(sc->ks);
		sc->ks = sc->ks_pre;
		sc->ks_pre = NULL;
	}
}

static void kernel_load(struct sym_cache *sc)
{
	struct kallsyms *ks;

	sc->ks_tried = 1;
	sc->ks_ns = clock_mono_ns();
	if (kallsyms__load(kallsyms_file(sc), &ks))
		return; /* keep what we had */
	kallsyms__free(sc->ks);
	sc->ks = ks;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void kernel_prefetch_free(struct sym_cache *sc)
{
	free(sc->kaddrs);
	free(sc->khits);
	free(sc->karena);
	sc->kaddrs = NULL;
	sc->khits = NULL;
	sc->karena = NULL;
	sc->nkaddrs = 0;
}

int sym_cache__kernel_prefetch(struct sym_cache *sc, uint64_t *addrs, size_t n)
{
	size_t u = 0;
	int err;

	kernel_prefetch_free(sc);
	if (!n)
		return 0;
	qsort(addrs, n, sizeof(*addrs), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!u || addrs[i] != addrs[u - 1])
			addrs[u++] = addrs[i];
	sc->kaddrs = malloc(u * sizeof(*sc->kaddrs));
	sc->khits = malloc(u * sizeof(*sc->khits));
	if (!sc->kaddrs || !sc->khits) {
		kernel_prefetch_free(sc);
		return -ENOMEM;
	}
	memcpy(sc->kaddrs, addrs, u * sizeof(*addrs));
	kernel_join(sc); /* kallsyms_path is stable from here */
	err = kallsyms__resolve(kallsyms_file(sc), sc->kaddrs, u, sc->khits, &sc->karena);
	if (err) {
		kernel_prefetch_free(sc);
		return err;
	}
	sc->nkaddrs = u;
	return 0;
}

/* The prefetched name of addr: 1 when addr was named ahead (*name NULL: unknown), else 0. */
static int kernel_prefetched(const struct sym_cache *sc, uint64_t addr, const char **name,
			     const char **module, uint64_t *off)
{
	size_t lo = 0, hi = sc->nkaddrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc->kaddrs[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == sc->nkaddrs || sc->kaddrs[lo] != addr)
		return 0;
	*name = sc->khits[lo].name;
	*module = sc->khits[lo].module;
	*off = sc->khits[lo].off;
	return 1;
}

int sym_cache__kernel(struct sym_cache *sc, uint64_t addr, struct sym_info *out)
{
	const char *name = NULL, *module = NULL;
	uint64_t off = 0;

	if (kernel_prefetched(sc, addr, &name, &module, &off))
		goto named;
	kernel_join(sc);
	if (!sc->ks_tried || (!sc->ks && clock_mono_ns() - sc->ks_ns >= KSYMS_RELOAD_NS))
		kernel_load(sc);
	if (sc->ks)
		name = kallsyms__find(sc->ks, addr, &off, &module);
	if (!name && sc->ks && clock_mono_ns() - sc->ks_ns >= KSYMS_RELOAD_NS) {
		/* maybe a module loaded since */
		kernel_load(sc);
		name = kallsyms__find(sc->ks, addr, &off, &module);
	}
named:
	if (name) {
		name = display_name(sc, name);
		module = intern(sc, module);
	}
	if (!name || !module)
		return unknown(sc, intern(sc, "[kernel.kallsyms]"), addr, out);
	fill(out, name, module, off, FRAME_KERNEL);
	return 0;
}

/* ---- settings, stats, teardown ---- */

static int set_path(char **dst, const char *src)
{
	char *s = NULL;

	if (src && !(s = strdup(src)))
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int sym_cache__set_debug_root(struct sym_cache *sc, const char *dir)
{
	return set_path(&sc->debug_root, dir);
}

int sym_cache__set_kallsyms_path(struct sym_cache *sc, const char *path)
{
	int err;

	kernel_join(sc);
	err = set_path(&sc->kallsyms_path, path);

	if (!err) {
		sc->ks_tried = 0; /* read the new file at the next lookup */
		kernel_prefetch_free(sc);
	}
	return err;
}

void sym_cache__set_elf_cap(struct sym_cache *sc, size_t max)
{
	sc->elf_cap = max;
	elf_cache_evict(sc);
}

void sym_cache__set_lines(struct sym_cache *sc, int on)
{
	sc->lines = on;
}

void sym_cache__set_inlines(struct sym_cache *sc, int on)
{
	sc->inlines = on;
}

void sym_cache__set_lazy_names(struct sym_cache *sc, int on)
{
	sc->lazy_names = on;
}

void sym_cache__set_plain_unknowns(struct sym_cache *sc, int on)
{
	sc->plain_unknowns = on;
}

void sym_cache__set_perf_names(struct sym_cache *sc, int on)
{
	sc->perf_names = on;
}

static void proc_stats(const void *key, size_t len, void *val, void *arg)
{
	const struct proc *p = val;
	struct sym_stats *st = arg;

	st->maps += p->nmaps;
	st->mem_bytes += sizeof(*p) + p->nmaps * (sizeof(*p->maps) + sizeof(*p->elfs));
	for (size_t i = 0; i < p->nmaps; i++)
		st->mem_bytes += strlen(p->maps[i].path) + 1;
	if (p->jit) {
		st->jit_symbols += sym_table__count(p->jit);
		st->mem_bytes += sym_table__mem(p->jit);
	}
}

void sym_cache__stats(const struct sym_cache *sc, struct sym_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->processes = hmap__count(sc->procs);
	out->maps_reads = sc->maps_reads;
	out->elf_opens = sc->elf_opens;
	out->elf_evictions = sc->evictions;
	out->strings = hmap__count(sc->strs);
	out->mem_bytes = sizeof(*sc) + hmap__mem(sc->strs) + hmap__mem(sc->names) +
			 hmap__mem(sc->procs) + hmap__mem(sc->files) +
			 sc->objs_cap * sizeof(*sc->objs);
	hmap__each(sc->procs, proc_stats, out);
	for (size_t i = 0; i < sc->nobjs; i++) {
		const struct elf_obj *o = sc->objs[i];

		out->mem_bytes += sizeof(*o);
		if (!o->syms) {
			out->elf_negative++;
			continue;
		}
		out->elf_cached++;
		out->elf_symbols += elf_syms__count(o->syms);
		out->mem_bytes += elf_syms__mem(o->syms);
	}
	if (sc->ks) {
		out->kernel_symbols = kallsyms__count(sc->ks);
		out->mem_bytes += kallsyms__mem(sc->ks);
	}
	out->hostile_files = sc->hostile;
}

const char *sym_cache__warning(const struct sym_cache *sc, char *buf, size_t len)
{
	if (!sc->hostile)
		return NULL;
	snprintf(buf, len, "skipped %s (refused %zu time%s)", sc->hostile_first, sc->hostile,
		 sc->hostile == 1 ? "" : "s");
	return buf;
}

static void proc_free_cb(const void *key, size_t len, void *val, void *arg)
{
	proc_free(arg, val);
}

void sym_cache__free(struct sym_cache *sc)
{
	if (!sc)
		return;
	if (sc->procs)
		hmap__each(sc->procs, proc_free_cb, sc);
	for (size_t i = 0; i < sc->nobjs; i++) {
		elf_syms__free(sc->objs[i]->syms);
		if (sc->objs[i]->fd >= 0)
			close(sc->objs[i]->fd);
		free(sc->objs[i]);
	}
	free(sc->objs);
	elf_preload__free(sc->pre);
	kernel_join(sc);
	kallsyms__free(sc->ks);
	kernel_prefetch_free(sc);
	hmap__free(sc->procs);
	hmap__free(sc->files);
	hmap__free(sc->names);
	hmap__free(sc->strs);
	free(sc->debug_root);
	free(sc->kallsyms_path);
	free(sc);
}
