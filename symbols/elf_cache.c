/* The ELF object cache of the symbol cache: symbol tables shared across processes by
 * (dev, inode) and build-id, negative entries retried later, the vDSO read from memory, LRU
 * eviction past the cap. See symcache.h. */
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
#include "symcache.h"
#include "symtab.h"
#include "util/clock.h"
#include "util/grow.h"

void elf_cache_destroy(struct sym_cache *sc, struct elf_obj *o)
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
void elf_cache_evict(struct sym_cache *sc)
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
		elf_cache_destroy(sc, victim);
		sc->evictions++;
	}
}

void elf_cache_ref(struct sym_cache *sc, struct elf_obj *o)
{
	if (!o->refs++)
		sc->unused--;
	o->last_use = ++sc->tick;
}

void elf_cache_unref(struct sym_cache *sc, struct elf_obj *o)
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
	elf_cache_ref(sc, o);
	return o;
}

/* Finishes es (already begun) into a shared object: an existing one with the same build-id is
 * reused; key is the caller's lookup key (dev/inode or vdso image). es is loaded from src, or was
 * loaded before when src is NULL (load: what elf_syms__load returned). Returns a referenced
 * object, or NULL on ENOMEM (es is consumed either way). */
static struct elf_obj *obj_from_syms(struct sym_cache *sc, struct elf_syms *es,
				     const struct elf_src *src, int load, const void *key,
				     size_t len)
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
			elf_cache_ref(sc, o);
			return o;
		}
	}
	err = src ? elf_syms__load(es, src) : load;
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

int sym_cache__preload(struct sym_cache *sc, const struct sym_preload *files, size_t n)
{
	elf_preload__free(sc->pre);
	sc->pre = elf_preload__start(files, n, sc->debug_root ? sc->debug_root : "/usr/lib/debug",
				     sc->lines || sc->inlines, sc->lazy_names);
	return sc->pre ? 0 : -ENOMEM;
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
			       sc->lines || sc->inlines, sc->lazy_names };
	unsigned char key[17];
	struct elf_syms *es;
	struct elf_obj *o;
	int fd, keep, load;

	key[0] = 'F';
	memcpy(key + 1, &m->dev, 8);
	memcpy(key + 9, &m->inode, 8);
	o = hmap__get(sc->files, key, sizeof(key));
	if (o && o->retry_ns && clock_mono_ns() >= o->retry_ns && !o->refs) {
		elf_cache_destroy(sc, o);
		o = NULL;
	}
	if (o) {
		elf_cache_ref(sc, o);
		return o;
	}
	sc->elf_opens++;
	if (sc->pre && (m->dev || m->inode) &&
	    elf_preload__take(sc->pre, m->dev, m->inode, &es, &load, &keep)) {
		/* read ahead on the preload thread */
		o = obj_from_syms(sc, es, NULL, load, key, sizeof(key));
	} else {
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
			o = obj_from_syms(sc, es, &src, 0, key, sizeof(key));
	}
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
	struct elf_src src = { .root = p->root, .debug_root = "" };
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
		elf_cache_ref(sc, o);
	} else {
		o = obj_from_syms(sc, es, &src, 0, key, klen + 1);
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
struct elf_obj *elf_cache_map(struct sym_cache *sc, struct proc *p, size_t i)
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
	elf_cache_evict(sc);
	return p->elfs[i];
}
