/* ELF symbol loading with libelf (gelf) and source lines with libdw. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_syms.h"
#include "gopclntab.h"
#include "hmap.h"
#include "symtab.h"
#include "util/grow.h"

/* Zero-size symbols (hand-written assembly) extend to the next symbol, at most this far. */
#define ELF_MAX_GAP 4096

struct load_seg {
	uint64_t offset, vaddr, filesz;
};

struct elf_syms {
	int fd;
	Elf *elf;
	unsigned char build_id[64];
	size_t build_id_len;
	struct load_seg *segs;
	size_t nsegs;
	struct sym_table *tab;
	int has_debuginfo;
	/* names left in the files (elf_src.lazy_names): the table's entries index names[], which
	 * point into the image's and the debuginfo's mapped string tables, kept until free (the
	 * image as elf, or as dw_elf or go_elf; the debuginfo as names_elf or dw_elf; elf's and
	 * names_elf's descriptors closed once loaded) */
	bool lazy;
	const char **names;
	size_t nnames, names_cap;
	int names_fd;
	Elf *names_elf;
	/* DWARF for lines, from the debuginfo file or the image itself */
	int dw_fd;
	Elf *dw_elf;
	Dwarf *dw;
	/* Go's function table, kept for its inline trees: it reads the image's mapped bytes, so
	 * the image stays open (as go_elf, or as dw_elf when that is the image itself) */
	struct gopcln *go;
	int go_fd;
	Elf *go_elf;
	/* DWARF inline frames by address (struct inl_chain): every process mapping the image
	 * asks again for the same addresses, and the walk down a compile unit is not cheap */
	struct hmap *inl_cache;
	size_t inl_bytes;
};

struct inl_chain {
	size_t n;
	const char *names[]; /* outermost first */
};

static bool elf_ok;

static void elf_init(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

bool elf_syms__ready(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, elf_init);
	return elf_ok;
}

static int read_build_id(Elf *elf, unsigned char *id, size_t *len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t pos = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((pos = gelf_getnote(d, pos, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
			    nh.n_descsz <= 64) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				*len = nh.n_descsz;
				return 0;
			}
		}
	}
	*len = 0;
	return -ENOENT;
}

int elf_syms__begin(int fd, const void *mem, size_t len, struct elf_syms **out)
{
	struct elf_syms *es;

	*out = NULL;
	if (!elf_syms__ready()) {
		if (fd >= 0)
			close(fd);
		return -ENOEXEC;
	}
	es = calloc(1, sizeof(*es));
	if (!es) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	es->fd = fd;
	es->dw_fd = -1;
	es->go_fd = -1;
	es->names_fd = -1;
	if (fd >= 0)
		es->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	else
		es->elf = elf_memory((char *)mem, len);
	if (!es->elf || elf_kind(es->elf) != ELF_K_ELF) {
		elf_syms__free(es);
		return -ENOEXEC;
	}
	read_build_id(es->elf, es->build_id, &es->build_id_len);
	*out = es;
	return 0;
}

const unsigned char *elf_syms__build_id(const struct elf_syms *es, size_t *len)
{
	*len = es->build_id_len;
	return es->build_id_len ? es->build_id : NULL;
}

static int read_segments(struct elf_syms *es)
{
	size_t n;

	if (elf_getphdrnum(es->elf, &n) || !n)
		return 0;
	es->segs = calloc(n, sizeof(*es->segs));
	if (!es->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(es->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		es->segs[es->nsegs++] = (struct load_seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	return 0;
}

static uint32_t sym_prio(const GElf_Sym *s)
{
	uint32_t p;

	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		p = 3;
		break;
	case STB_WEAK:
		p = 2;
		break;
	default:
		p = 1;
	}
	/* functions beat untyped labels at the same address */
	if (GELF_ST_TYPE(s->st_info) != STT_NOTYPE)
		p += 3;
	return p;
}

/* Whether section index idx of elf holds code; the answer is cached in *flags (size n, 0 =
 * unknown, 1 = no, 2 = yes). */
static int exec_section(Elf *elf, size_t idx, unsigned char *flags, size_t n)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (idx >= n)
		return 0;
	if (!flags[idx]) {
		scn = elf_getscn(elf, idx);
		flags[idx] = scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) ? 2 : 1;
	}
	return flags[idx] == 2;
}

/* Adds symbol name (NUL-terminated) at start to es's table: its name copied, or in lazy mode
 * only pointed to (it must then stay valid until es is freed). 0 or -ENOMEM. */
static int add_symbol(struct elf_syms *es, uint64_t start, uint64_t size, const char *name,
		      size_t len, uint32_t prio)
{
	if (!es->lazy)
		return sym_table__add(es->tab, start, size, name, len, 0, prio);
	if (es->nnames >= UINT32_MAX || ARRAY_GROW(es->names, es->names_cap, es->nnames + 1))
		return -ENOMEM;
	es->names[es->nnames] = name;
	return sym_table__add_ref(es->tab, start, size, (uint32_t)es->nnames++, 0, prio);
}

/* Section idx of elf as a string table read in place: its bytes, *len of them, ending in a
 * NUL (so that any offset below *len starts a terminated string); NULL when it is not such
 * a table (libelf's elf_strptr then judges each name). */
static const char *string_table(Elf *elf, size_t idx, size_t *len)
{
	Elf_Scn *scn = elf_getscn(elf, idx);
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED))
		return NULL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size || ((const char *)d->d_buf)[d->d_size - 1])
		return NULL;
	*len = d->d_size;
	return d->d_buf;
}

/* Adds the code symbols of every SHT_SYMTAB and SHT_DYNSYM section of elf to es's table. Sets
 * *has_symtab when a full .symtab was found. 0 or -ENOMEM. */
static int add_symbols(struct elf_syms *es, Elf *elf, int *has_symtab)
{
	Elf_Scn *scn = NULL;
	unsigned char *flags;
	size_t nsec = 0;
	bool is64 = gelf_getclass(elf) == ELFCLASS64;
	int err = 0;

	if (elf_getshdrnum(elf, &nsec))
		return 0;
	flags = calloc(nsec ? nsec : 1, 1);
	if (!flags)
		return -ENOMEM;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const Elf64_Sym *raw = NULL;
		const char *strs;
		struct sym_entry *fill;
		size_t count, nraw = 0, slen = 0, room, filled;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		count = sh.sh_size / sh.sh_entsize;
		/* 64-bit symbols in memory order are GElf_Syms already: read in place, as
		 * gelf_getsym would copy them (with its bound) */
		if (is64 && d->d_type == ELF_T_SYM && d->d_buf) {
			raw = d->d_buf;
			nraw = d->d_size / sizeof(*raw);
		}
		strs = string_table(elf, sh.sh_link, &slen);
		/* room for them all at once (as many as the section's data holds, whatever its
		 * header says): tens of thousands of symbols grown by doubling would be copied
		 * (and their pages touched) again at each step; read in place, they are written
		 * straight into it */
		room = d->d_size / (is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
		room = room < count ? room : count;
		if (sym_table__reserve(es->tab, room, 0) ||
		    (es->lazy && (es->nnames + room >= UINT32_MAX ||
				  ARRAY_GROW(es->names, es->names_cap, es->nnames + room)))) {
			err = -ENOMEM;
			break;
		}
		fill = raw && es->lazy ? sym_table__room(es->tab, room) : NULL;
		filled = 0;
		for (size_t i = 1; i < count; i++) {
			GElf_Sym s;
			const char *name;
			int type;

			if (raw && i < nraw)
				s = raw[i];
			else if (raw || !gelf_getsym(d, (int)i, &s))
				continue;
			type = GELF_ST_TYPE(s.st_info);
			if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
				continue;
			if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || !s.st_value)
				continue;
			if (type == STT_NOTYPE && !exec_section(elf, s.st_shndx, flags, nsec))
				continue;
			if (!s.st_name)
				continue; /* no name */
			if (strs)
				name = s.st_name < slen ? strs + s.st_name : NULL;
			else
				name = elf_strptr(elf, sh.sh_link, s.st_name);
			/* "$x"-style mapping symbols and local labels (untyped) name no function;
			 * a function's name is not read here: tens of thousands of them, strewn
			 * over megabytes of strings (libLLVM), cost more to reach than the rest */
			if (!name || (type == STT_NOTYPE && (!*name || name[0] == '$' ||
							     (name[0] == '.' && name[1] == 'L'))))
				continue;
			if (fill && filled < room) {
				es->names[es->nnames] = name;
				sym_entry__set(&fill[filled++], s.st_value, s.st_size,
					       (uint32_t)es->nnames++, 0, sym_prio(&s));
				continue;
			}
			err = add_symbol(es, s.st_value, s.st_size, name, es->lazy ? 0 : strlen(name),
					 sym_prio(&s));
			if (err)
				break;
		}
		if (fill)
			sym_table__added(es->tab, filled);
		if (sh.sh_type == SHT_SYMTAB)
			*has_symtab = 1;
	}
	free(flags);
	return err;
}

/* Opens path as ELF; on success *fd and *elf are set and its build-id must match want (when
 * both have one). 0 or -errno. */
static int open_debug(const char *path, const unsigned char *want, size_t want_len, int *fd,
		      Elf **elf)
{
	unsigned char id[64];
	size_t len;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (*elf && elf_kind(*elf) == ELF_K_ELF) {
		if (!want_len || read_build_id(*elf, id, &len) || (len == want_len && !memcmp(id, want, len)))
			return 0;
	}
	if (*elf)
		elf_end(*elf);
	close(*fd);
	*fd = -1;
	*elf = NULL;
	return -ENOENT;
}

static const char *debuglink_name(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_size || !memchr(d->d_buf, 0, d->d_size))
			return NULL;
		return d->d_buf;
	}
	return NULL;
}

/* Finds separate debuginfo: <debug_root>/.build-id/xx/rest.debug, then the .gnu_debuglink name
 * next to the file, in its .debug/ subdirectory and under <debug_root>/<dir>/. */
static int find_debuginfo(struct elf_syms *es, const struct elf_src *src, int *fd, Elf **elf)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *link;
	struct stat self, st;

	if (es->build_id_len) {
		int n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", src->debug_root,
				 es->build_id[0]);

		for (size_t i = 1; i < es->build_id_len && n > 0 && (size_t)n < sizeof(path) - 3; i++)
			n += snprintf(path + n, sizeof(path) - n, "%02x", es->build_id[i]);
		if (n > 0 && (size_t)n < sizeof(path) - 7) {
			strcpy(path + n, ".debug");
			if (!open_debug(path, es->build_id, es->build_id_len, fd, elf))
				return 0;
		}
	}
	link = debuglink_name(es->elf);
	if (!link || !src->path || strchr(link, '/'))
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%s", src->path);
	dirname(dir);
	if (es->fd < 0 || fstat(es->fd, &self))
		memset(&self, 0, sizeof(self));
	const char *prefixes[] = { src->root, src->root, src->debug_root };
	const char *subdirs[] = { "", "/.debug", "" };

	for (size_t i = 0; i < 3; i++) {
		int n = snprintf(path, sizeof(path), "%s%s%s/%s", prefixes[i],
				 strcmp(dir, "/") ? dir : "", subdirs[i], link);

		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		/* a debuglink naming the file itself must not count as debuginfo */
		if (!stat(path, &st) && st.st_dev == self.st_dev && st.st_ino == self.st_ino)
			continue;
		if (!open_debug(path, es->build_id, es->build_id_len, fd, elf))
			return 0;
	}
	return -ENOENT;
}

Elf_Scn *elf_find_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static int has_section(Elf *elf, const char *want)
{
	GElf_Shdr sh;

	return elf_find_section(elf, want, &sh) != NULL;
}

/* Keeps (fd, elf) open for DWARF lines when it has .debug_info; otherwise closes it. */
static void keep_dwarf(struct elf_syms *es, int fd, Elf *elf, int owned)
{
	if (!es->dw && has_section(elf, ".debug_info")) {
		es->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (es->dw) {
			es->dw_elf = elf;
			es->dw_fd = fd;
			return;
		}
	}
	if (owned) {
		elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
}

/* Reads Go's .gopclntab when the image has one: its functions become symbols when the image
 * has no .symtab (go build -ldflags=-s), and the table is kept for inline frames and the
 * unwinder's Go frames. 0 or -ENOMEM (an image without a usable table is not an error). */
static int load_go(struct elf_syms *es, int has_symtab)
{
	struct gopcln_seg *segs;
	GElf_Shdr sh, text;
	size_t size = 0, nsegs = 0;
	const char *raw = elf_rawfile(es->elf, &size);
	struct gopcln *g;
	int err = 0;

	/* position-independent Go binaries have it among the relocated read-only data */
	if (!raw ||
	    (!elf_find_section(es->elf, ".gopclntab", &sh) &&
	     !elf_find_section(es->elf, ".data.rel.ro.gopclntab", &sh)) ||
	    sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
		return 0;
	if (!elf_find_section(es->elf, ".text", &text))
		text.sh_addr = 0;
	segs = calloc(es->nsegs ? es->nsegs : 1, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	for (size_t i = 0; i < es->nsegs; i++) {
		const struct load_seg *l = &es->segs[i];

		if (l->offset <= size && l->filesz <= size - l->offset)
			segs[nsegs++] = (struct gopcln_seg){ l->vaddr, (const uint8_t *)raw + l->offset,
							     l->filesz };
	}
	err = gopcln__new((const uint8_t *)raw + sh.sh_offset, sh.sh_size, sh.sh_addr, text.sh_addr,
			  segs, nsegs, &g);
	free(segs);
	if (err)
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; !has_symtab && !err && i < gopcln__count(g); i++) {
		struct gopcln_name name;
		uint64_t entry, end;

		if (!gopcln__func(g, i, &entry, &end, &name) && end >= entry)
			err = add_symbol(es, entry, end - entry, name.s, name.len, 1);
	}
	if (!err)
		es->go = g;
	else
		gopcln__free(g);
	return err;
}

/* Closes *fd, the descriptor elf was read from, and tells libelf it is gone: what was read of
 * elf (mapped or copied) stays until elf_end. */
static void done_with_fd(Elf *elf, int *fd)
{
	if (!elf || *fd < 0)
		return;
	elf_cntl(elf, ELF_C_FDDONE);
	close(*fd);
	*fd = -1;
}

int elf_syms__load(struct elf_syms *es, const struct elf_src *src)
{
	int has_symtab = 0, dfd = -1, err;
	Elf *delf = NULL;

	es->tab = sym_table__new();
	if (!es->tab)
		return -ENOMEM;
	/* names read in place need the files mapped until es is freed: not for memory images */
	es->lazy = src->lazy_names && es->fd >= 0;
	err = read_segments(es);
	if (!err)
		err = add_symbols(es, es->elf, &has_symtab);
	if (!err && es->fd >= 0)
		err = load_go(es, has_symtab);
	if (err)
		return err;
	if (es->fd >= 0 && (!has_symtab || src->lines) && !find_debuginfo(es, src, &dfd, &delf)) {
		es->has_debuginfo = 1;
		err = add_symbols(es, delf, &has_symtab);
		if (src->lines) {
			keep_dwarf(es, dfd, delf, !es->lazy);
			if (es->lazy && es->dw_elf != delf) {
				es->names_elf = delf;
				es->names_fd = dfd;
			}
		} else if (es->lazy) {
			es->names_elf = delf;
			es->names_fd = dfd;
		} else {
			elf_end(delf);
			close(dfd);
		}
		if (err)
			return err;
	}
	sym_table__finish(es->tab, ELF_MAX_GAP);
	if (src->lines && es->fd >= 0 && !es->dw && has_section(es->elf, ".debug_info")) {
		/* the image carries its own DWARF: keep it open instead of the symbols-only view */
		keep_dwarf(es, es->fd, es->elf, 0);
		if (es->dw) {
			es->fd = -1;
			es->elf = NULL;
		}
	}
	if (es->go && es->elf) { /* the Go table reads the image: keep it */
		es->go_elf = es->elf;
		es->go_fd = es->fd;
		es->elf = NULL;
		es->fd = -1;
	}
	if (es->elf && !es->lazy) {
		elf_end(es->elf);
		es->elf = NULL;
	}
	if (es->fd >= 0 && !es->lazy) {
		close(es->fd);
		es->fd = -1;
	}
	if (es->lazy) {
		ARRAY_SHRINK(es->names, es->names_cap, es->nnames);
		/* the names are read: the files stay mapped, their descriptors go (a reader of
		 * hundreds of binaries would run out of them) */
		done_with_fd(es->elf, &es->fd);
		done_with_fd(es->names_elf, &es->names_fd);
	}
	return sym_table__count(es->tab) ? 0 : -ENODATA;
}

static void free_chain(const void *key, size_t len, void *val, void *arg)
{
	free(val);
}

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	if (es->inl_cache) {
		hmap__each(es->inl_cache, free_chain, NULL);
		hmap__free(es->inl_cache);
	}
	gopcln__free(es->go);
	if (es->go_elf)
		elf_end(es->go_elf);
	if (es->go_fd >= 0)
		close(es->go_fd);
	if (es->dw)
		dwarf_end(es->dw);
	if (es->dw_elf)
		elf_end(es->dw_elf);
	if (es->dw_fd >= 0)
		close(es->dw_fd);
	if (es->elf)
		elf_end(es->elf);
	if (es->fd >= 0)
		close(es->fd);
	if (es->names_elf)
		elf_end(es->names_elf);
	if (es->names_fd >= 0)
		close(es->names_fd);
	free(es->names);
	sym_table__free(es->tab);
	free(es->segs);
	free(es);
}

/* The link-time address of file offset file_off (itself when no segment holds it). */
static uint64_t file_vaddr(const struct elf_syms *es, uint64_t file_off)
{
	for (size_t i = 0; i < es->nsegs; i++) {
		const struct load_seg *s = &es->segs[i];

		if (file_off >= s->offset && file_off - s->offset < s->filesz)
			return file_off - s->offset + s->vaddr;
	}
	return file_off;
}

int elf_syms__go_frame(const struct elf_syms *es, uint64_t file_off, int32_t *spdelta, bool *top)
{
	return es->go ? gopcln__frame(es->go, file_vaddr(es, file_off), spdelta, top) : -ENOENT;
}

const char *elf_syms__find(const struct elf_syms *es, uint64_t file_off, uint64_t *off,
			   uint64_t *vaddr)
{
	const struct sym_entry *e;

	*vaddr = file_vaddr(es, file_off);
	if (!es->tab)
		return NULL;
	e = sym_table__find(es->tab, *vaddr);
	if (!e)
		return NULL;
	*off = *vaddr - e->start;
	return es->lazy ? es->names[e->name] : sym_table__name(es->tab, e);
}

int elf_syms__line(struct elf_syms *es, uint64_t vaddr, const char **file, unsigned *line)
{
	Dwarf_Die cu;
	Dwarf_Line *l;
	int ln = 0;

	if (!es->dw || !dwarf_addrdie(es->dw, vaddr, &cu))
		return -ENOENT;
	l = dwarf_getsrc_die(&cu, vaddr);
	if (!l || dwarf_lineno(l, &ln) || ln <= 0)
		return -ENOENT;
	*file = dwarf_linesrc(l, NULL, NULL);
	if (!*file)
		return -ENOENT;
	*line = ln;
	return 0;
}

size_t elf_syms__count(const struct elf_syms *es)
{
	return es->tab ? sym_table__count(es->tab) : 0;
}

size_t elf_syms__mem(const struct elf_syms *es)
{
	return sizeof(*es) + es->nsegs * sizeof(*es->segs) + (es->tab ? sym_table__mem(es->tab) : 0) +
	       es->names_cap * sizeof(*es->names) +
	       (es->inl_cache ? hmap__mem(es->inl_cache) + es->inl_bytes : 0);
}

int elf_syms__has_debuginfo(const struct elf_syms *es)
{
	return es->has_debuginfo;
}

/* The linkage (mangled) name of an inlined subroutine's function, else its plain name. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		name = dwarf_formstring(&a);
	return name ? name : dwarf_diename(die);
}

/* Walks down from die to the innermost scope holding pc (through namespaces and classes,
 * then the function, its lexical blocks and inlined subroutines), appending the inlined
 * subroutines met to chain[*n], outermost first. True when a function holding pc was found.
 * (dwarf_getscopes goes from an inlined subroutine to its abstract definition's scopes,
 * not to the function it was inlined in.) */
static bool scope_walk(Dwarf_Die *die, uint64_t pc, const char **chain, size_t *n, int depth)
{
	Dwarf_Die c;
	int tag;

	if (depth > 2 * ELF_MAX_INLINES || dwarf_child(die, &c))
		return false;
	do {
		tag = dwarf_tag(&c);
		if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		    tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
			if (scope_walk(&c, pc, chain, n, depth + 1))
				return true;
		} else if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			    tag == DW_TAG_lexical_block) && dwarf_haspc(&c, pc) > 0) {
			const char *name = tag == DW_TAG_inlined_subroutine ? die_name(&c) : NULL;

			if (name && *n < ELF_MAX_INLINES)
				chain[(*n)++] = name;
			scope_walk(&c, pc, chain, n, depth + 1);
			return true;
		}
	} while (!dwarf_siblingof(&c, &c));
	return false;
}

size_t elf_syms__inlines(struct elf_syms *es, uint64_t vaddr, const char **names, size_t max)
{
	struct gopcln_name go[ELF_MAX_INLINES];
	const char *chain[ELF_MAX_INLINES];
	struct inl_chain *c;
	Dwarf_Die cu;
	size_t n = 0, k;

	if (max > ELF_MAX_INLINES)
		max = ELF_MAX_INLINES;
	if (es->go) {
		n = gopcln__inlines(es->go, vaddr, go, max);
		for (size_t i = 0; i < n; i++)
			names[i] = go[i].s; /* NUL-terminated in the table */
		return n;
	}
	if (!max || !es->dw)
		return 0;
	c = es->inl_cache ? hmap__get(es->inl_cache, &vaddr, sizeof(vaddr)) : NULL;
	if (!c) {
		if (dwarf_addrdie(es->dw, vaddr, &cu))
			scope_walk(&cu, vaddr, chain, &n, 0);
		if (!es->inl_cache)
			es->inl_cache = hmap__new();
		c = malloc(sizeof(*c) + n * sizeof(*chain));
		if (c) {
			c->n = n;
			memcpy(c->names, chain, n * sizeof(*chain));
		}
		if (c && es->inl_cache && hmap__put(es->inl_cache, &vaddr, sizeof(vaddr), c)) {
			es->inl_bytes += sizeof(*c) + n * sizeof(*chain);
		} else {
			free(c);
			c = NULL;
		}
	} else {
		n = c->n;
		memcpy(chain, c->names, n * sizeof(*chain));
	}
	k = n < max ? n : max; /* the innermost k, outermost first */
	for (size_t i = 0; i < k; i++)
		names[i] = chain[n - k + i];
	return k;
}
