/* Go's function table (.gopclntab): function names and the inline tree of binaries whose
 * symbol table and DWARF are stripped (go build -ldflags "-s -w"), for every table version
 * from Go 1.2 to current. A pure parser of untrusted bytes: no I/O, every read bounds-checked.
 * See docs/symbols.md. */
#ifndef GALATOP_SYMBOLS_GOPCLNTAB_H
#define GALATOP_SYMBOLS_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Table versions, by the magic that starts the table. */
enum gopcln_version {
	GOPCLN_12 = 1, /* 0xfffffffb: Go 1.2 to 1.15 */
	GOPCLN_116,    /* 0xfffffffa: Go 1.16 and 1.17 */
	GOPCLN_118,    /* 0xfffffff0: Go 1.18 and 1.19 */
	GOPCLN_120,    /* 0xfffffff1: Go 1.20 and later */
};

/* Loaded bytes of the image the table belongs to (its PT_LOAD segments' file contents), where
 * the inline trees and the module data are read; borrowed. */
struct gopcln_seg {
	uint64_t vaddr;
	const uint8_t *data;
	size_t len;
};

struct gopcln;

/* A function's name: len bytes at s (not NUL-terminated), inside the table. */
struct gopcln_name {
	const char *s;
	size_t len;
};

/* Reads the table tab[0..len) found at link-time address tab_vaddr, in an image whose .text
 * starts at text_vaddr (used when the table's own text start is zero) and whose loaded bytes
 * are segs[0..nsegs) (copied; the bytes are borrowed, as tab is, for the table's life).
 * 0, -EINVAL when tab is not a table of a known version, -ENOMEM. */
int gopcln__new(const uint8_t *tab, size_t len, uint64_t tab_vaddr, uint64_t text_vaddr,
		const struct gopcln_seg *segs, size_t nsegs, struct gopcln **out);
/* Frees g; NULL is a no-op. */
void gopcln__free(struct gopcln *g);
/* The table's version. */
enum gopcln_version gopcln__version(const struct gopcln *g);
/* Number of functions. */
size_t gopcln__count(const struct gopcln *g);
/* Function i (in address order): its entry, its end (the next function's entry) and name.
 * 0, or -EINVAL when its record is out of bounds or has no name. */
int gopcln__func(const struct gopcln *g, size_t i, uint64_t *entry, uint64_t *end,
		 struct gopcln_name *name);
/* The functions inlined at pc (a link-time address), outermost first, into out[0..max) (the
 * function that holds pc, which the symbol table names, is not among them). Returns how many;
 * 0 when none, or when the table gives no inline tree (tables before Go 1.16, a module data
 * not found). */
size_t gopcln__inlines(struct gopcln *g, uint64_t pc, struct gopcln_name *out, size_t max);
/* The stack frame of the function holding pc (a link-time address), from its pc-to-SP-delta
 * table as the runtime's own traceback reads it: *spdelta is how far the stack pointer is
 * below the return address slot at pc (0 at the entry), *top whether the function is the
 * outermost of a stack (runtime.goexit, runtime.mstart, runtime.rt0_go; runtime.asmcgocall,
 * which runs C code on the thread's system stack). 0, or -ENOENT when no function holds pc
 * or its table does not say. */
int gopcln__frame(const struct gopcln *g, uint64_t pc, int32_t *spdelta, bool *top);
/* Whether the inline trees can be read (Go 1.16+, and from 1.18 the module data was found:
 * looked for in the image on the first call, here or in gopcln__inlines). */
bool gopcln__has_inline_tree(struct gopcln *g);

#endif
