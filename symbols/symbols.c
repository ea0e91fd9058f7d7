/* The symbol cache: per-process mappings and JIT maps over ELF tables shared by (dev, inode) and
 * build-id, kallsyms, and interned result strings that outlive evicted tables. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
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
#include "symbols.h"
#include "symtab.h"
#include "util/clock.h"
#include "util/grow.h"

#define NSEC 1000000000ULL
#define MAPS_REFRESH_NS (200 * 1000000ULL)  /* re-read maps / JIT map at most this often */
#define KSYMS_RELOAD_NS (10 * NSEC)	     /* re-read kallsyms at most this often */
#define OPEN_RETRY_NS (10 * NSEC)	     /* files that could not be opened are retried after */
#define VDSO_MAX (1 << 20)
#define MAX_KEYS 4

/* A shared ELF table, or a negative entry (syms == NULL) for a file without usable symbols. */
struct elf_obj {
	struct elf_syms *syms;
	uint64_t retry_ns;	     /* negative entries from open failures: retry after; 0: never */
	unsigned refs;		     /* mappings of known processes using it */
	uint64_t last_use;	     /* sc->tick of the last use, for LRU eviction */
	size_t index;		     /* position in sc->objs */
	int fd;			     /* the file (a memfd for the vDSO), kept open for the
				      * unwinder so it resolves once the file is gone; -1 */
	const void *keys[MAX_KEYS]; /* hmap keys ('F' dev ino, 'B' build-id, 'V' vdso) */
	size_t key_lens[MAX_KEYS];
	size_t nkeys;
};

struct proc {
	int pid;
	struct proc_map *maps;
	struct elf_obj **elfs; /* per mapping, NULL until resolved */
	size_t nmaps;
	uint64_t maps_ns; /* when maps were last read (or tried) */
	struct sym_table *jit;
	uint64_t jit_ns;
	uint32_t jit_gen; /* JIT map reads that found one */
	off_t jit_size;	  /* its size then: an unchanged map (maps only grow) is not read again */
	bool tracked;	  /* maps kept from side-band events since its exec: /proc not read */
	char root[48];	  /* "/proc/PID/root" */
};

struct sym_cache {
	struct hmap *strs;  /* plain interned strings (value: the key itself) */
	struct hmap *names; /* raw symbol name -> display name (in strs) */
	struct hmap *procs; /* pid -> struct proc */
	struct hmap *files; /* key -> struct elf_obj */
	struct elf_obj **objs;
	size_t nobjs, objs_cap, unused; /* unused: objs with refs == 0 */
	size_t elf_cap;
	uint64_t tick;
	int lines;
	struct kallsyms *ks;
	uint64_t ks_ns;
	int ks_tried;
	bool ks_pending;	   /* a preload thread is reading kallsyms into ks_pre */
	pthread_t ks_thread;
	struct kallsyms *ks_pre;
	char *debug_root, *kallsyms_path;
	size_t maps_reads, elf_opens, evictions;
	size_t hostile;		      /* files a process controls that were refused */
	char hostile_first[PATH_MAX + 64]; /* the first of them and why */
};

/* Returns the cache's copy of s (stable until sym_cache__free), or NULL on ENOMEM. */
static const char *intern(struct sym_cache *sc, const char *s)
{
	const char *k = hmap__get(sc->strs, s, strlen(s));
	const void *key;

	if (k)
		return k;
	key = hmap__put(sc->strs, s, strlen(s), NULL);
	if (key)
		hmap__put(sc->strs, s, strlen(s), (void *)key);
	return key;
}

/* The display (demangled) name for raw symbol name raw, interned; NULL on ENOMEM. */
static const char *display_name(struct sym_cache *sc, const char *raw)
{
	const char *d = hmap__get(sc->names, raw, strlen(raw));
	char *dem;

	if (d)
		return d;
	dem = sym_demangle(raw);
	d = intern(sc, dem ? dem : raw);
	free(dem);
	if (d && !hmap__put(sc->names, raw, strlen(raw), (void *)d))
		return NULL;
	return d;
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
}

/* Fills out with "[unknown]"; the strings are interned at creation, so this cannot fail. */
static int unknown(struct sym_cache *sc, const char *module, uint64_t off, struct sym_info *out)
{
	fill(out, intern(sc, "[unknown]"), module ? module : intern(sc, ""), off, FRAME_SPECIAL);
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
	if (!sc->strs || !sc->names || !sc->procs || !sc->files || !intern(sc, "[unknown]") ||
	    !intern(sc, "")) {
		sym_cache__free(sc);
		return NULL;
	}
	return sc;
}

/* ---- shared ELF objects ---- */

static void obj_destroy(struct sym_cache *sc, struct elf_obj *o)
{
	for (size_t i = 0; i < o->nkeys; i++)
		hmap__del(sc->files, o->keys[i], o->key_lens[i]);
	sc->objs[o->index] = sc->objs[--sc->nobjs];
	sc->objs[o->index]->index = o->index;
	if (!o->refs)
		sc->unused--;
	elf_syms__free(o->syms);
	if (o->fd >= 0)
		close(o->fd);
	free(o);
}

/* Drops least recently used tables nobody maps until at most elf_cap are unused. */
static void evict(struct sym_cache *sc)
{
	while (sc->unused > sc->elf_cap) {
		struct elf_obj *victim = NULL;

		for (size_t i = 0; i < sc->nobjs; i++) {
			struct elf_obj *o = sc->objs[i];

			if (!o->refs && (!victim || o->last_use < victim->last_use))
				victim = o;
		}
		if (!victim)
			return;
		obj_destroy(sc, victim);
		sc->evictions++;
	}
}

static void obj_ref(struct sym_cache *sc, struct elf_obj *o)
{
	if (!o->refs++)
		sc->unused--;
	o->last_use = ++sc->tick;
}

static void obj_unref(struct sym_cache *sc, struct elf_obj *o)
{
	if (!--o->refs)
		sc->unused++;
}

static void obj_add_key(struct sym_cache *sc, struct elf_obj *o, const void *key, size_t len)
{
	const void *k;

	if (o->nkeys == MAX_KEYS || hmap__get(sc->files, key, len))
		return;
	k = hmap__put(sc->files, key, len, o);
	if (!k)
		return;
	o->keys[o->nkeys] = k;
	o->key_lens[o->nkeys++] = len;
}

/* Creates an object (taking syms) registered under key; it starts referenced once by the caller.
 * NULL on ENOMEM. */
static struct elf_obj *obj_new(struct sym_cache *sc, struct elf_syms *syms, const void *key,
			       size_t len)
{
	struct elf_obj *o = calloc(1, sizeof(*o));

	if (o && ARRAY_GROW(sc->objs, sc->objs_cap, sc->nobjs + 1)) {
		free(o);
		o = NULL;
	}
	if (!o) {
		elf_syms__free(syms);
		return NULL;
	}
	o->syms = syms;
	o->fd = -1;
	o->index = sc->nobjs;
	sc->objs[sc->nobjs++] = o;
	sc->unused++;
	obj_add_key(sc, o, key, len);
	obj_ref(sc, o);
	return o;
}

/* Finishes es (already begun) into a shared object: an existing one with the same build-id is
 * reused; key is the caller's lookup key (dev/inode or vdso image). Returns a referenced object,
 * or NULL on ENOMEM (es is consumed either way). */
static struct elf_obj *obj_from_syms(struct sym_cache *sc, struct elf_syms *es,
				     const struct elf_src *src, const void *key, size_t len)
{
	unsigned char bkey[1 + 64];
	const unsigned char *bid;
	struct elf_obj *o;
	size_t blen;
	int err;

	bid = elf_syms__build_id(es, &blen);
	if (bid) {
		bkey[0] = 'B';
		memcpy(bkey + 1, bid, blen);
		o = hmap__get(sc->files, bkey, blen + 1);
		if (o && o->syms) {
			elf_syms__free(es);
			obj_add_key(sc, o, key, len);
			obj_ref(sc, o);
			return o;
		}
	}
	err = elf_syms__load(es, src);
	if (err == -ENOMEM) {
		elf_syms__free(es);
		return NULL;
	}
	if (err) {
		/* no symbols: remembered as negative for good */
		elf_syms__free(es);
		es = NULL;
	}
	o = obj_new(sc, es, key, len);
	if (o && bid && es)
		obj_add_key(sc, o, bkey, blen + 1);
	return o;
}

/* Opens the file of mapping m of p: through the process's root (containers), through map_files
 * for deleted files, or on the host when the process is gone and dev/inode still match. */
static int open_mapped(const struct proc *p, const struct proc_map *m)
{
	char path[PATH_MAX];
	struct stat st;
	int fd = -1;

	if (!m->deleted && snprintf(path, sizeof(path), "%s%s", p->root, m->path) < (int)sizeof(path))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, p->pid,
			 m->start, m->end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 && !m->deleted && !stat(m->path, &st) && st.st_dev == m->dev &&
	    st.st_ino == m->inode)
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
	return fd;
}

static struct elf_obj *resolve_file(struct sym_cache *sc, struct proc *p, const struct proc_map *m)
{
	struct elf_src src = { p->root, m->path, sc->debug_root ? sc->debug_root : "/usr/lib/debug",
			       sc->lines };
	unsigned char key[17];
	struct elf_syms *es;
	struct elf_obj *o;
	int fd, keep;

	key[0] = 'F';
	memcpy(key + 1, &m->dev, 8);
	memcpy(key + 9, &m->inode, 8);
	o = hmap__get(sc->files, key, sizeof(key));
	if (o && o->retry_ns && clock_mono_ns() >= o->retry_ns && !o->refs) {
		obj_destroy(sc, o);
		o = NULL;
	}
	if (o) {
		obj_ref(sc, o);
		return o;
	}
	sc->elf_opens++;
	fd = open_mapped(p, m);
	if (fd < 0) {
		o = obj_new(sc, NULL, key, sizeof(key));
		if (o)
			o->retry_ns = clock_mono_ns() + OPEN_RETRY_NS;
		return o;
	}
	keep = dup(fd);
	if (elf_syms__begin(fd, NULL, 0, &es))
		o = obj_new(sc, NULL, key, sizeof(key));
	else
		o = obj_from_syms(sc, es, &src, key, sizeof(key));
	if (o && o->fd < 0) {
		o->fd = keep;
		keep = -1;
	}
	if (keep >= 0)
		close(keep);
	return o;
}

/* Size of an ELF image in memory: the end of its section headers or segments. */
static size_t elf_image_size(const unsigned char *img)
{
	const Elf64_Ehdr *eh = (const void *)img;
	size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff + i * eh->e_phentsize);

		if (ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	return end;
}

/* A memfd holding img[0..len), or -1. */
static int image_fd(const unsigned char *img, size_t len)
{
	int fd = memfd_create("galatop-vdso", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, img, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static struct elf_obj *resolve_vdso(struct sym_cache *sc, struct proc *p, const struct proc_map *m)
{
	struct elf_src src = { p->root, NULL, "", 0 };
	size_t len = m->end - m->start, klen;
	unsigned char *buf = NULL, *key = NULL;
	const unsigned char *img = NULL, *bid;
	struct elf_syms *es;
	struct elf_obj *o = NULL;
	char path[64];
	int fd;

	/* the process's own image first (a 32-bit process has another vdso); galatop's own one
	 * is the same kernel's image when the process is gone */
	snprintf(path, sizeof(path), "/proc/%d/mem", p->pid);
	if (len <= VDSO_MAX && (buf = malloc(len)) && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (pread(fd, buf, len, m->start) == (ssize_t)len)
			img = buf;
		close(fd);
	}
	if (!img) {
		img = (const void *)getauxval(AT_SYSINFO_EHDR);
		len = img ? elf_image_size(img) : 0;
	}
	if (!len || elf_syms__begin(-1, img, len, &es))
		goto cleanup;
	/* shared by build-id, or by content when the image has none */
	bid = elf_syms__build_id(es, &klen);
	if (!bid) {
		bid = img;
		klen = len;
	}
	key = malloc(klen + 1);
	if (!key) {
		elf_syms__free(es);
		goto cleanup;
	}
	key[0] = 'V';
	memcpy(key + 1, bid, klen);
	o = hmap__get(sc->files, key, klen + 1);
	if (o) {
		elf_syms__free(es);
		obj_ref(sc, o);
	} else {
		o = obj_from_syms(sc, es, &src, key, klen + 1);
	}
	if (o && o->fd < 0) /* a file the unwinder can open as it does the others */
		o->fd = image_fd(img, len);
cleanup:
	free(key);
	free(buf);
	return o;
}

/* The (referenced) shared object of mapping i of p, resolved on first use; NULL for anonymous
 * and pseudo mappings. */
static struct elf_obj *map_elf(struct sym_cache *sc, struct proc *p, size_t i)
{
	const struct proc_map *m = &p->maps[i];

	if (p->elfs[i]) {
		p->elfs[i]->last_use = ++sc->tick;
		return p->elfs[i];
	}
	if (!strcmp(m->path, "[vdso]"))
		p->elfs[i] = resolve_vdso(sc, p, m);
	else if (m->path[0] == '/')
		p->elfs[i] = resolve_file(sc, p, m);
	evict(sc);
	return p->elfs[i];
}

/* ---- processes ---- */

static void proc_drop_maps(struct sym_cache *sc, struct proc *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->elfs[i])
			obj_unref(sc, p->elfs[i]);
	proc_maps__free(p->maps, p->nmaps);
	free(p->elfs);
	p->maps = NULL;
	p->elfs = NULL;
	p->nmaps = 0;
}

static void proc_free(struct sym_cache *sc, struct proc *p)
{
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
	p->nmaps = n;
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
	err = jitmap__load(path, &t);
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

	p->maps_ns = clock_mono_ns();
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
			map_elf(sc, p, i);
	return err;
}

static struct proc *proc_get(struct sym_cache *sc, int pid)
{
	return hmap__get(sc->procs, &pid, sizeof(pid));
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
	module = intern(sc, m->path);
	if (!module)
		return -ENOMEM;
	file_off = addr - m->start + m->pgoff;
	o = map_elf(sc, p, m - p->maps);
	if (o && o->syms && (name = elf_syms__find(o->syms, file_off, &off, &vaddr))) {
		name = display_name(sc, name);
		if (!name)
			return -ENOMEM;
		fill(out, name, module, off, FRAME_USER);
		if (sc->lines && !elf_syms__line(o->syms, vaddr, &file, &line)) {
			out->file = intern(sc, file);
			out->line = out->file ? line : 0;
		}
		return 0;
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
	if (r == 1 && clock_mono_ns() - p->maps_ns >= MAPS_REFRESH_NS) {
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
		map_elf(sc, p, i);
	return 0;
}

void sym_cache__process_exit(struct sym_cache *sc, int pid)
{
	struct proc *p = hmap__del(sc->procs, &pid, sizeof(pid));

	if (!p)
		return;
	proc_free(sc, p);
	evict(sc);
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
				obj_unref(sc, p->elfs[i]);
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
		p->maps_ns = clock_mono_ns();
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
			obj_ref(sc, p->elfs[i]);
	}
	p->nmaps = n;
	p->tracked = true;
	return 0;
}

int sym_cache__mmap(struct sym_cache *sc, int pid, const struct proc_map *m)
{
	struct proc *p = proc_get(sc, pid);
	struct proc_map *maps;
	struct elf_obj **elfs;
	size_t i;

	if (!p || m->end <= m->start)
		return 0; /* never sampled and not followed since its exec: /proc will tell */
	proc_unmap(sc, p, m->start, m->end);
	maps = realloc(p->maps, (p->nmaps + 1) * sizeof(*maps));
	if (maps)
		p->maps = maps;
	elfs = realloc(p->elfs, (p->nmaps + 1) * sizeof(*elfs));
	if (elfs)
		p->elfs = elfs;
	if (!maps || !elfs)
		return -ENOMEM;
	for (i = p->nmaps; i > 0 && p->maps[i - 1].start > m->start; i--)
		;
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(*maps));
	memmove(&p->elfs[i + 1], &p->elfs[i], (p->nmaps - i) * sizeof(*elfs));
	p->maps[i] = *m;
	p->maps[i].path = strdup(m->path ? m->path : "");
	p->elfs[i] = NULL;
	if (!p->maps[i].path) {
		memmove(&p->maps[i], &p->maps[i + 1], (p->nmaps - i) * sizeof(*maps));
		memmove(&p->elfs[i], &p->elfs[i + 1], (p->nmaps - i) * sizeof(*elfs));
		return -ENOMEM;
	}
	p->nmaps++;
	return 0;
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
	if ((!m || !m->path[0]) && clock_mono_ns() - p->maps_ns >= MAPS_REFRESH_NS) {
		proc_refresh(sc, p, 0);
		m = proc_maps__find(p->maps, p->nmaps, addr);
	}
	if (!m || !m->path[0])
		return -ENOENT;
	out->fd = -1;
	if (open_file) {
		o = map_elf(sc, p, m - p->maps);
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
	out->path = intern(sc, m->path);
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
	sigset_t all, old;
	int err;

	if (sc->ks_tried || sc->ks_pending)
		return 0;
	/* Signals stay with the main thread, whose loop watches for them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&sc->ks_thread, NULL, kernel_preload_run, sc);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
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

int sym_cache__kernel(struct sym_cache *sc, uint64_t addr, struct sym_info *out)
{
	const char *name = NULL, *module = NULL;
	uint64_t off = 0;

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

	if (!err)
		sc->ks_tried = 0; /* read the new file at the next lookup */
	return err;
}

void sym_cache__set_elf_cap(struct sym_cache *sc, size_t max)
{
	sc->elf_cap = max;
	evict(sc);
}

void sym_cache__set_lines(struct sym_cache *sc, int on)
{
	sc->lines = on;
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
	kernel_join(sc);
	kallsyms__free(sc->ks);
	hmap__free(sc->procs);
	hmap__free(sc->files);
	hmap__free(sc->names);
	hmap__free(sc->strs);
	free(sc->debug_root);
	free(sc->kallsyms_path);
	free(sc);
}
