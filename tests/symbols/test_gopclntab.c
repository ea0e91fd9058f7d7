/* Go's .gopclntab reader (symbols/gopclntab) on tables of every version, built here byte by
 * byte after the Go runtime's layouts (runtime/symtab.go of Go 1.2, 1.16, 1.18 and 1.20):
 * names, function bounds, pc-to-SP deltas, outermost frames and inline trees; every prefix of
 * each table (cut files) is read without a read out of bounds; bad headers are refused.
 * Real binaries of Debian's Go are covered by tests/record/test_go.sh. With GOPCLN_SEEDS=DIR
 * the four tables are written there (the seeds of fuzz/fuzz_gopclntab). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "symbols/gopclntab.h"

#define VADDR 0x4a0000ull /* where the blob (table, inline tree, module data) is linked */
#define TEXT 0x401000ull

struct blob {
	uint8_t b[4096];
	size_t len;
};

static size_t put(struct blob *bl, size_t at, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		bl->b[at + i] = (uint8_t)(v >> (8 * i));
	if (at + n > bl->len)
		bl->len = at + n;
	return at + n;
}

static size_t put_str(struct blob *bl, size_t at, const char *s)
{
	memcpy(bl->b + at, s, strlen(s) + 1);
	if (at + strlen(s) + 1 > bl->len)
		bl->len = at + strlen(s) + 1;
	return at + strlen(s) + 1;
}

static size_t put_varint(struct blob *bl, size_t at, uint32_t v)
{
	while (v >= 0x80) {
		at = put(bl, at, (v & 0x7f) | 0x80, 1);
		v >>= 7;
	}
	return put(bl, at, v, 1);
}

/* A pc-value table: value vals[i] up to pc offset ends[i] (quantum 1), as Go's linker
 * writes it (zigzag value deltas from -1, pc deltas, a 0 at the end). */
static size_t put_pcvalue(struct blob *bl, size_t at, const int32_t *vals, const uint32_t *ends,
			  size_t n)
{
	int32_t prev = -1;
	uint32_t pc = 0;

	for (size_t i = 0; i < n; i++) {
		int32_t d = vals[i] - prev;

		at = put_varint(bl, at, ((uint32_t)d << 1) ^ (uint32_t)(d >> 31));
		at = put_varint(bl, at, ends[i] - pc);
		prev = vals[i];
		pc = ends[i];
	}
	return put(bl, at, 0, 1);
}

/* The functions every table holds: main.outer (with two levels of inlining), main.leaf and
 * runtime.goexit. */
static const char *const fnames[] = { "main.outer", "main.leaf", "runtime.goexit" };
static const uint64_t fentry[] = { TEXT, TEXT + 0x100, TEXT + 0x180 }, fend = TEXT + 0x1a0;

/* Builds a table of version ver (magic) into bl; the blob also holds the inline tree and,
 * from 1.18, the module data (unless no_moduledata). */
static void build(struct blob *bl, enum gopcln_version ver, int no_moduledata)
{
	static const uint32_t magics[] = { 0, 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1 };
	size_t names, pctab, pcln, at, rec[3], tree, md, pcsp[3], inl, name_off[5];
	uint32_t sp_ends[] = { 1, 0x100 }, leaf_ends[] = { 0x80 }, exit_ends[] = { 0x20 };
	int32_t sp_vals[] = { 0, 0x18 }, zero[] = { 0 };
	uint32_t inl_ends[] = { 0x40, 0x50, 0x60, 0x100 };
	int32_t inl_vals[] = { -1, 0, 1, -1 };
	bool v12 = ver == GOPCLN_12, v116 = ver == GOPCLN_116;
	unsigned hdr_words = v12 ? 1 : v116 ? 7 : 8;
	unsigned recsz = v12 ? 40 : v116 ? 44 : ver == GOPCLN_118 ? 40 : 44;

	memset(bl, 0, sizeof(*bl));
	put(bl, 0, magics[ver], 4);
	put(bl, 6, 1, 1); /* quantum */
	put(bl, 7, 8, 1); /* pointer size */
	/* names (for 1.2, like everything, at offsets from the table's start, after its
	 * function table: 3 pairs and the end pc) */
	at = v12 ? 16 + 3 * 16 + 8 : 8 + 8 * hdr_words;
	names = v12 ? 0 : at;
	const char *all[] = { "main.outer", "main.leaf", "runtime.goexit", "main.inner1", "main.inner2" };
	for (size_t i = 0; i < 5; i++) {
		name_off[i] = at - names;
		at = put_str(bl, at, all[i]);
	}
	/* pc-value tables */
	pctab = v12 ? 0 : at;
	at = put(bl, at, 0, 1); /* offset 0 means "no table" */
	pcsp[0] = at - pctab;
	at = put_pcvalue(bl, at, sp_vals, sp_ends, 2);
	pcsp[1] = at - pctab;
	at = put_pcvalue(bl, at, zero, leaf_ends, 1);
	pcsp[2] = at - pctab;
	at = put_pcvalue(bl, at, zero, exit_ends, 1);
	inl = at - pctab;
	at = put_pcvalue(bl, at, inl_vals, inl_ends, 4);
	/* function table then records */
	at = (at + 7) & ~7ul;
	pcln = v12 ? 16 : at;
	size_t ftab_size = ver >= GOPCLN_118 ? 4 * 8 : 4 * 16;
	size_t recs = (v12 ? at : pcln + ftab_size);

	recs = (recs + 7) & ~7ul;
	for (size_t i = 0; i < 3; i++) {
		uint64_t off = recs + i * 128 - (v12 ? 0 : pcln);

		rec[i] = recs + i * 128;
		if (ver >= GOPCLN_118) {
			put(bl, pcln + i * 8, fentry[i] - TEXT, 4);
			put(bl, pcln + i * 8 + 4, off, 4);
		} else {
			put(bl, pcln + i * 16, fentry[i], 8);
			put(bl, pcln + i * 16 + 8, off, 8);
		}
	}
	if (ver >= GOPCLN_118)
		put(bl, pcln + 3 * 8, fend - TEXT, 4);
	else
		put(bl, pcln + 3 * 16, fend, 8);
	/* records: entry, name, args, frame/deferreturn, pcsp, pcfile, pcln, npcdata, ... */
	tree = recs + 3 * 128;
	for (size_t i = 0; i < 3; i++) {
		size_t r = rec[i], p;
		unsigned base = ver >= GOPCLN_118 ? 4 : 8;

		put(bl, r, ver >= GOPCLN_118 ? fentry[i] - TEXT : fentry[i], base);
		put(bl, r + base, name_off[i], 4);
		put(bl, r + base + 12, pcsp[i], 4);
		put(bl, r + base + 24, i == 0 ? 3 : 0, 4); /* npcdata */
		if (v12)
			put(bl, r + 36, i == 0 ? 4 : 0, 4); /* nfuncdata (int32 in 1.2-1.9) */
		else
			put(bl, r + recsz - 1, i == 0 ? 4 : 0, 1);
		if (i)
			continue;
		p = r + recsz;
		put(bl, p + 2 * 4, inl, 4); /* PCDATA_InlTreeIndex */
		p += 3 * 4;
		if (ver >= GOPCLN_118) {
			for (int k = 0; k < 4; k++)
				put(bl, p + 4 * k, k == 3 ? 0x40 : 0xffffffffu, 4);
		} else {
			if ((VADDR + p) & 4)
				p += 4;
			for (int k = 0; k < 4; k++)
				put(bl, p + 8 * k, k == 3 ? VADDR + tree : 0, 8);
		}
	}
	/* the inline tree: [0] main.inner1 called at pc 0x10 of main.outer, [1] main.inner2 at
	 * 0x44 (inside main.inner1) */
	/* from 1.18 funcdata are offsets from gofunc: the tree's is 0x40 */
	for (int k = 0; k < 2; k++) {
		size_t e = tree + (size_t)k * (ver == GOPCLN_120 ? 16 : 20);

		if (ver == GOPCLN_120) {
			put(bl, e + 4, name_off[3 + k], 4);
			put(bl, e + 8, k ? 0x44 : 0x10, 4);
		} else {
			put(bl, e, k ? 0 : (uint16_t)-1, 2);
			put(bl, e + 12, name_off[3 + k], 4);
			put(bl, e + 16, k ? 0x44 : 0x10, 4);
		}
	}
	md = (tree + 64 + 7) & ~7ul;
	if (ver >= GOPCLN_118 && !no_moduledata) {
		put(bl, md, VADDR, 8);
		put(bl, md + 8, VADDR + names, 8);
		put(bl, md + 22 * 8, TEXT, 8);
		put(bl, md + (ver == GOPCLN_120 ? 40 : 38) * 8, VADDR + tree - 0x40, 8);
	}
	/* header words */
	if (v12) {
		put(bl, 8, 3, 8);
	} else {
		uint64_t w[8] = { 3, 0 }, *x = w + 2;

		if (!v116)
			*x++ = TEXT;
		*x++ = names;
		*x++ = 0;
		*x++ = 0;
		*x++ = pctab;
		*x++ = pcln;
		for (unsigned i = 0; i < hdr_words; i++)
			put(bl, 8 + 8 * i, w[i], 8);
	}
	bl->len = md + 48 * 8;
}

static int open_blob(const struct blob *bl, size_t len, struct gopcln **g)
{
	struct gopcln_seg seg = { VADDR, bl->b, len };

	return gopcln__new(bl->b, len, VADDR, TEXT, &seg, 1, g);
}

static bool name_is(struct gopcln_name n, const char *s)
{
	return n.len == strlen(s) && !memcmp(n.s, s, n.len);
}

static void check_version(enum gopcln_version ver, const char *name)
{
	struct blob bl;
	struct gopcln *g;
	struct gopcln_name nm, inl[4];
	uint64_t entry, end;
	int32_t delta;
	bool top;

	build(&bl, ver, 0);
	CHECK(open_blob(&bl, bl.len, &g) == 0);
	if (!g)
		return;
	CHECK(gopcln__version(g) == ver);
	CHECK(gopcln__count(g) == 3);
	for (size_t i = 0; i < 3; i++) {
		CHECK(gopcln__func(g, i, &entry, &end, &nm) == 0);
		CHECK(entry == fentry[i] && end == (i < 2 ? fentry[i + 1] : fend));
		CHECK(name_is(nm, fnames[i]));
	}
	CHECK(gopcln__func(g, 3, &entry, &end, &nm) == -EINVAL);
	/* pc-to-SP: 0 at the entry, 0x18 after the prologue; goexit is the outermost */
	CHECK(gopcln__frame(g, TEXT, &delta, &top) == 0 && delta == 0 && !top);
	CHECK(gopcln__frame(g, TEXT + 0x55, &delta, &top) == 0 && delta == 0x18 && !top);
	CHECK(gopcln__frame(g, TEXT + 0x110, &delta, &top) == 0 && delta == 0 && !top);
	CHECK(gopcln__frame(g, TEXT + 0x181, &delta, &top) == 0 && top);
	CHECK(gopcln__frame(g, fend, &delta, &top) == -ENOENT);
	CHECK(gopcln__frame(g, TEXT - 1, &delta, &top) == -ENOENT);
	/* inline trees from 1.16 on */
	if (ver == GOPCLN_12) {
		CHECK(!gopcln__has_inline_tree(g));
		CHECK(gopcln__inlines(g, TEXT + 0x55, inl, 4) == 0);
	} else {
		CHECK(gopcln__has_inline_tree(g));
		CHECK(gopcln__inlines(g, TEXT + 0x55, inl, 4) == 2);
		CHECK(name_is(inl[0], "main.inner1") && name_is(inl[1], "main.inner2"));
		CHECK(gopcln__inlines(g, TEXT + 0x55, inl, 1) == 1 && name_is(inl[0], "main.inner2"));
		CHECK(gopcln__inlines(g, TEXT + 0x45, inl, 4) == 1 && name_is(inl[0], "main.inner1"));
		CHECK(gopcln__inlines(g, TEXT + 0x70, inl, 4) == 0);
		CHECK(gopcln__inlines(g, TEXT + 0x110, inl, 4) == 0);
	}
	gopcln__free(g);
	/* every cut of the table reads nothing out of bounds (ASan) */
	for (size_t len = 0; len < bl.len; len++) {
		if (open_blob(&bl, len, &g))
			continue;
		for (size_t i = 0; i < gopcln__count(g); i++)
			gopcln__func(g, i, &entry, &end, &nm);
		for (uint64_t pc = TEXT - 1; pc < fend + 2; pc += 3) {
			gopcln__frame(g, pc, &delta, &top);
			gopcln__inlines(g, pc, inl, 4);
		}
		gopcln__free(g);
	}
	if (getenv("GOPCLN_SEEDS")) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", getenv("GOPCLN_SEEDS"), name);
		f = fopen(path, "wb");
		CHECK(f && fwrite(bl.b, 1, bl.len, f) == bl.len);
		if (f)
			fclose(f);
	}
}

TEST_CASE(go12_table)
{
	check_version(GOPCLN_12, "go12_table");
}

TEST_CASE(go116_table)
{
	check_version(GOPCLN_116, "go116_table");
}

TEST_CASE(go118_table)
{
	check_version(GOPCLN_118, "go118_table");
}

TEST_CASE(go120_table)
{
	check_version(GOPCLN_120, "go120_table");
}

/* Go 1.18+ without module data (not found): names and frames, no inline tree. */
TEST_CASE(go118_without_moduledata_names_only)
{
	struct blob bl;
	struct gopcln *g;
	struct gopcln_name nm, inl[4];
	uint64_t entry, end;

	build(&bl, GOPCLN_118, 1);
	CHECK(open_blob(&bl, bl.len, &g) == 0);
	if (!g)
		return;
	CHECK(!gopcln__has_inline_tree(g));
	CHECK(gopcln__func(g, 1, &entry, &end, &nm) == 0 && name_is(nm, "main.leaf"));
	CHECK(gopcln__inlines(g, TEXT + 0x55, inl, 4) == 0);
	gopcln__free(g);
}

TEST_CASE(bad_headers_refused)
{
	struct blob bl;
	struct gopcln *g;

	build(&bl, GOPCLN_120, 0);
	bl.b[0] = 0xf2; /* unknown magic */
	CHECK(open_blob(&bl, bl.len, &g) == -EINVAL && !g);
	build(&bl, GOPCLN_120, 0);
	bl.b[7] = 3; /* pointer size */
	CHECK(open_blob(&bl, bl.len, &g) == -EINVAL);
	build(&bl, GOPCLN_120, 0);
	put(&bl, 8, 1u << 30, 8); /* more functions than the table holds */
	CHECK(open_blob(&bl, bl.len, &g) == -EINVAL);
	CHECK(open_blob(&bl, 12, &g) == -EINVAL);
}

int main(void)
{
	RUN(go12_table);
	RUN(go116_table);
	RUN(go118_table);
	RUN(go120_table);
	RUN(go118_without_moduledata_names_only);
	RUN(bad_headers_refused);
	HARNESS_EXIT();
}
