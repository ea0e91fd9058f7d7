/* Kernel text symbols from a /proc/kallsyms-format file, with the module of each symbol. */
#ifndef GALATOP_SYMBOLS_KALLSYMS_H
#define GALATOP_SYMBOLS_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Reads text symbols (types t, T, w, W) from path into *out. 0; -errno when the file cannot be
 * read; -ENODATA when it holds no usable address (all zero: kptr_restrict, not root); -ENOMEM. */
int kallsyms__load(const char *path, struct kallsyms **out);
/* Frees the table; NULL is a no-op. */
void kallsyms__free(struct kallsyms *ks);
/* The symbol covering addr (NULL when none), its offset in *off and its module ("[kernel.kallsyms]"
 * or "[mod]") in *module; strings valid until ks is freed. */
const char *kallsyms__find(const struct kallsyms *ks, uint64_t addr, uint64_t *off,
			   const char **module);
/* What kallsyms__resolve found for one address. */
struct kallsyms_hit {
	const char *name;   /* NULL: unknown */
	const char *module; /* "[kernel.kallsyms]" or "[mod]" */
	uint64_t off;	    /* from the symbol's start */
};

/* Names addrs[0..n) (ascending, no duplicates) by one pass over the kallsyms-format file at
 * path that keeps only what names them, instead of loading its whole table: hits[i] is what
 * kallsyms__load then kallsyms__find give for addrs[i]. The strings are in *arena (the
 * caller frees it; NULL when n is 0). 0, or the errors of kallsyms__load. */
int kallsyms__resolve(const char *path, const uint64_t *addrs, size_t n,
		      struct kallsyms_hit *hits, char **arena);
/* Number of symbols held. */
size_t kallsyms__count(const struct kallsyms *ks);
/* Approximate heap bytes held. */
size_t kallsyms__mem(const struct kallsyms *ks);

#endif
