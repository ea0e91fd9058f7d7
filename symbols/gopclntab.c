/* Go's .gopclntab, after the runtime's own reader (runtime/symtab.go) of each version: the
 * header, the function table (entry, record offset) and each function's record (name offset,
 * pc-value tables, funcdata); the inline tree is funcdata FUNCDATA_InlTree, indexed by the
 * pc-value table PCDATA_InlTreeIndex. Every offset comes from the file: all reads are checked
 * against the table or the image's segments. */
#include "gopclntab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PCDATA_INLTREE 2   /* PCDATA_InlTreeIndex */
#define FUNCDATA_INLTREE 3 /* FUNCDATA_InlTree */
#define INLINE_DEPTH 64	   /* deepest inlining followed */
#define NO_FUNCDATA 0xffffffffu

struct gopcln {
	const uint8_t *tab;
	size_t len;
	uint64_t vaddr;
	enum gopcln_version ver;
	unsigned quantum, ps; /* instruction size quantum, pointer size */
	size_t nfunc;
	size_t functab;	  /* offset of the function table */
	size_t funcs;	  /* base of the records' offsets */
	size_t names;	  /* base of the name offsets */
	size_t pctab;	  /* base of the pc-value tables' offsets */
	uint64_t text;	  /* base of the entries (Go 1.18+) */
	uint64_t gofunc;  /* base of funcdata offsets (Go 1.18+), 0 when not found */
	bool gofunc_due;  /* gofunc not looked for yet: only the inline trees need it, and the
			   * search scans the image's data (a reader without inline frames
			   * never pays for it) */
	struct gopcln_seg *segs;
	size_t nsegs;
};

static bool in(size_t len, uint64_t off, uint64_t n)
{
	return off <= len && n <= len - off;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* An n-byte little-endian word at off in the table; false when out of bounds. */
static bool tab_word(const struct gopcln *g, uint64_t off, unsigned n, uint64_t *v)
{
	if (!in(g->len, off, n))
		return false;
	*v = le(g->tab + off, n);
	return true;
}

/* An n-byte word at link-time address addr of the image. */
static bool image_word(const struct gopcln *g, uint64_t addr, unsigned n, uint64_t *v)
{
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct gopcln_seg *s = &g->segs[i];

		if (addr >= s->vaddr && in(s->len, addr - s->vaddr, n)) {
			*v = le(s->data + (addr - s->vaddr), n);
			return true;
		}
	}
	return false;
}

/* Entry i of the function table (0 <= i <= nfunc: the last one is the end of the text,
 * and has no record): the function's entry pc and, with rec, the offset of its record. */
static bool functab(const struct gopcln *g, size_t i, uint64_t *entry, uint64_t *rec)
{
	uint64_t e, r = 0;

	if (g->ver >= GOPCLN_118) {
		if (!tab_word(g, g->functab + (uint64_t)i * 8, 4, &e) ||
		    (rec && !tab_word(g, g->functab + (uint64_t)i * 8 + 4, 4, &r)))
			return false;
		e += g->text;
	} else if (!tab_word(g, g->functab + (uint64_t)i * 2 * g->ps, g->ps, &e) ||
		   (rec && !tab_word(g, g->functab + ((uint64_t)i * 2 + 1) * g->ps, g->ps, &r))) {
		return false;
	}
	*entry = e;
	if (rec)
		*rec = g->funcs + r;
	return true;
}

/* The NUL-terminated name at offset off of the name table. */
static bool name_at(const struct gopcln *g, uint64_t off, struct gopcln_name *name)
{
	const uint8_t *end;

	off += g->names;
	if (off >= g->len)
		return false;
	end = memchr(g->tab + off, 0, g->len - off);
	if (!end || end == g->tab + off)
		return false;
	name->s = (const char *)g->tab + off;
	name->len = (size_t)(end - (g->tab + off));
	return true;
}

/* Offsets inside a function record, by version. */
static unsigned rec_nameoff(const struct gopcln *g)
{
	return g->ver >= GOPCLN_118 ? 4 : g->ps;
}

static unsigned rec_npcdata(const struct gopcln *g)
{
	return g->ver >= GOPCLN_118 ? 28 : g->ps + 24;
}

static unsigned rec_nfuncdata(const struct gopcln *g)
{
	return g->ver == GOPCLN_120 ? 43 : g->ver == GOPCLN_118 ? 39 : g->ps + 35;
}

static bool read_varint(const struct gopcln *g, uint64_t *off, uint32_t *v)
{
	uint32_t r = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*off >= g->len)
			return false;
		uint8_t b = g->tab[(*off)++];

		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/* The value of the pc-value table at offset off (of the pc-value tables) at pc, in a function
 * starting at entry, as the runtime's pcvalue: -1 before the first step, each step a zigzag
 * value delta then a pc delta in quanta; -1 as well when the table is cut short. */
static int32_t pcvalue(const struct gopcln *g, uint32_t off, uint64_t entry, uint64_t pc)
{
	uint64_t p = g->pctab + off, at = entry;
	int32_t val = -1;
	uint32_t uv, pcd;

	if (!off)
		return -1;
	for (;;) {
		if (!read_varint(g, &p, &uv) || (uv == 0 && at != entry))
			return -1;
		/* Go's zig-zag delta; wraps as Go's int32 arithmetic does (no C overflow). */
		val = (int32_t)((uint32_t)val + (-(uv & 1) ^ (uv >> 1)));
		if (!read_varint(g, &p, &pcd) || !pcd)
			return -1;
		at += (uint64_t)pcd * g->quantum;
		if (pc < at)
			return val;
	}
}

/* Finds the module data (runtime.firstmoduledata: its first word points at the table, its
 * second at the function names) in the image and reads its gofunc, the base of funcdata
 * offsets from Go 1.18 on. */
static void find_gofunc(struct gopcln *g, uint64_t names_off)
{
	unsigned ps = g->ps, gofunc_word = g->ver == GOPCLN_120 ? 40 : 38, text_word = 22;

	for (size_t i = 0; i < g->nsegs; i++) {
		const struct gopcln_seg *s = &g->segs[i];

		for (size_t o = 0; s->len >= 2 * ps && o <= s->len - 2 * ps; o += ps) {
			uint64_t text, gofunc, v;

			if (le(s->data + o, ps) != g->vaddr ||
			    le(s->data + o + ps, ps) != g->vaddr + names_off)
				continue;
			if (!image_word(g, s->vaddr + o + (uint64_t)text_word * ps, ps, &text) ||
			    text != g->text ||
			    !image_word(g, s->vaddr + o + (uint64_t)gofunc_word * ps, ps, &gofunc) ||
			    !image_word(g, gofunc, 1, &v))
				continue;
			g->gofunc = gofunc;
			return;
		}
	}
}

int gopcln__new(const uint8_t *tab, size_t len, uint64_t tab_vaddr, uint64_t text_vaddr,
		const struct gopcln_seg *segs, size_t nsegs, struct gopcln **out)
{
	struct gopcln *g;
	uint64_t magic, v[8], end;
	unsigned ps;

	*out = NULL;
	if (len < 16 || tab[4] || tab[5] || (tab[6] != 1 && tab[6] != 2 && tab[6] != 4) ||
	    (tab[7] != 4 && tab[7] != 8))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->tab = tab;
	g->len = len;
	g->vaddr = tab_vaddr;
	g->quantum = tab[6];
	g->ps = ps = tab[7];
	magic = le(tab, 4);
	g->ver = magic == 0xfffffffb ? GOPCLN_12 : magic == 0xfffffffa ? GOPCLN_116 :
		 magic == 0xfffffff0 ? GOPCLN_118 : magic == 0xfffffff1 ? GOPCLN_120 : 0;
	/* the header's words after the magic: nfunc, then from 1.16 nfiles, (1.18: textStart,)
	 * funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset */
	for (unsigned i = 0; i < 8; i++)
		if (!tab_word(g, 8 + (uint64_t)i * ps, ps, &v[i]))
			v[i] = 0;
	g->nfunc = v[0];
	if (g->ver == GOPCLN_12) {
		g->functab = 8 + ps;
	} else if (g->ver == GOPCLN_116) {
		g->names = v[2];
		g->pctab = v[5];
		g->funcs = g->functab = v[6];
	} else if (g->ver) {
		g->text = v[2] ? v[2] : text_vaddr;
		g->names = v[3];
		g->pctab = v[6];
		g->funcs = g->functab = v[7];
	}
	/* the table must hold its function table, end entry included */
	if (!g->ver || !g->nfunc || g->nfunc > len || !functab(g, g->nfunc, &end, NULL) ||
	    g->names >= len || g->pctab >= len) {
		free(g);
		return -EINVAL;
	}
	if (g->ver >= GOPCLN_116 && nsegs) {
		g->segs = calloc(nsegs, sizeof(*segs));
		if (!g->segs) {
			free(g);
			return -ENOMEM;
		}
		memcpy(g->segs, segs, nsegs * sizeof(*segs));
		g->nsegs = nsegs;
		g->gofunc_due = g->ver >= GOPCLN_118;
	}
	*out = g;
	return 0;
}

void gopcln__free(struct gopcln *g)
{
	if (!g)
		return;
	free(g->segs);
	free(g);
}

enum gopcln_version gopcln__version(const struct gopcln *g)
{
	return g->ver;
}

size_t gopcln__count(const struct gopcln *g)
{
	return g->nfunc;
}

bool gopcln__has_inline_tree(struct gopcln *g)
{
	if (g->gofunc_due) {
		g->gofunc_due = false;
		find_gofunc(g, g->names);
	}
	return g->ver == GOPCLN_116 ? g->nsegs > 0 : g->ver >= GOPCLN_118 && g->gofunc;
}

int gopcln__func(const struct gopcln *g, size_t i, uint64_t *entry, uint64_t *end,
		 struct gopcln_name *name)
{
	uint64_t rec, nameoff;

	if (i >= g->nfunc || !functab(g, i, entry, &rec) || !functab(g, i + 1, end, NULL) ||
	    !tab_word(g, rec + rec_nameoff(g), 4, &nameoff) || (nameoff & 0x80000000u) ||
	    !name_at(g, nameoff, name))
		return -EINVAL;
	return 0;
}

/* The function holding pc: the last entry at or below it (binary search; a table out of
 * order gives some function, never a read out of bounds). */
static bool find_func(const struct gopcln *g, uint64_t pc, uint64_t *entry, uint64_t *rec)
{
	size_t lo = 0, hi = g->nfunc;
	uint64_t e, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (!functab(g, mid, &e, NULL))
			return false;
		if (e <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !functab(g, lo - 1, entry, rec) || !functab(g, lo, &end, NULL))
		return false;
	return pc < end;
}

static unsigned rec_pcsp(const struct gopcln *g)
{
	return g->ver >= GOPCLN_118 ? 16 : g->ps + 12;
}

int gopcln__frame(const struct gopcln *g, uint64_t pc, int32_t *spdelta, bool *top)
{
	/* where goroutines, threads and the main thread start, and cgo's switch to the system
	 * stack (its Go callers are on the goroutine's stack, elsewhere) */
	static const char *const tops[] = { "runtime.goexit", "runtime.mstart", "runtime.rt0_go",
					    "runtime.asmcgocall" };
	uint64_t entry, rec, off, nameoff;
	struct gopcln_name name;

	if (!find_func(g, pc, &entry, &rec) || !tab_word(g, rec + rec_pcsp(g), 4, &off))
		return -ENOENT;
	*spdelta = pcvalue(g, (uint32_t)off, entry, pc);
	if (*spdelta < 0)
		return -ENOENT;
	*top = false;
	if (tab_word(g, rec + rec_nameoff(g), 4, &nameoff) && !(nameoff & 0x80000000u) &&
	    name_at(g, nameoff, &name))
		for (size_t i = 0; i < sizeof(tops) / sizeof(*tops); i++)
			if (name.len == strlen(tops[i]) && !memcmp(name.s, tops[i], name.len))
				*top = true;
	return 0;
}

size_t gopcln__inlines(struct gopcln *g, uint64_t pc, struct gopcln_name *out, size_t max)
{
	struct gopcln_name chain[INLINE_DEPTH];
	uint64_t entry, rec, npcdata, nfuncdata, tab_off, fd_off, tree, w;
	unsigned size = g->ver == GOPCLN_120 ? 16 : 20, name_at_off = g->ver == GOPCLN_120 ? 4 : 12;
	unsigned hdr = rec_nfuncdata(g) + 1;
	size_t n = 0, k;
	int32_t ix;

	if (!max || !gopcln__has_inline_tree(g) || !find_func(g, pc, &entry, &rec) ||
	    !tab_word(g, rec + rec_npcdata(g), 4, &npcdata) ||
	    !tab_word(g, rec + rec_nfuncdata(g), 1, &nfuncdata) || npcdata <= PCDATA_INLTREE ||
	    nfuncdata <= FUNCDATA_INLTREE ||
	    !tab_word(g, rec + hdr + PCDATA_INLTREE * 4, 4, &tab_off))
		return 0;
	fd_off = rec + hdr + npcdata * 4;
	if (g->ver == GOPCLN_116) {
		/* uintptr funcdata, aligned to a pointer in memory */
		if (g->ps == 8 && ((g->vaddr + fd_off) & 4))
			fd_off += 4;
		if (!tab_word(g, fd_off + FUNCDATA_INLTREE * g->ps, g->ps, &tree) || !tree)
			return 0;
	} else {
		if (!tab_word(g, fd_off + FUNCDATA_INLTREE * 4, 4, &w) || w == NO_FUNCDATA)
			return 0;
		tree = g->gofunc + w;
	}
	ix = pcvalue(g, (uint32_t)tab_off, entry, pc);
	while (ix >= 0 && n < INLINE_DEPTH) {
		uint64_t at = tree + (uint64_t)ix * size, nameoff, parent_pc;

		if (!image_word(g, at + name_at_off, 4, &nameoff) ||
		    !image_word(g, at + name_at_off + 4, 4, &parent_pc) ||
		    (nameoff & 0x80000000u) || !name_at(g, nameoff, &chain[n]))
			break;
		n++;
		/* the call site: an instruction of the caller whose inline index is the parent */
		ix = pcvalue(g, (uint32_t)tab_off, entry, entry + (uint32_t)parent_pc);
	}
	/* chain is innermost first; keep the innermost max, outermost first */
	k = n < max ? n : max;
	for (size_t i = 0; i < k; i++)
		out[i] = chain[k - 1 - i];
	return k;
}
