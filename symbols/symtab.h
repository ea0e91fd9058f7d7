/* A sorted table of (start, size, name) symbols with one name arena and binary-search lookup;
 * shared by kallsyms, ELF and JIT-map readers. */
#ifndef GALATOP_SYMBOLS_SYMTAB_H
#define GALATOP_SYMBOLS_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct sym_entry {
	uint64_t start;
	uint32_t size; /* 0 until sym_table__finish extends it */
	uint32_t name; /* offset in the table's arena */
	uint32_t tag;  /* caller's data, e.g. a kernel module index */
	uint32_t prio; /* among symbols at one address the highest prio is kept */
};

struct sym_table;

/* Creates an empty table. NULL on ENOMEM. */
struct sym_table *sym_table__new(void);
/* Frees the table and its names; NULL is a no-op. */
void sym_table__free(struct sym_table *t);
/* Adds a symbol, copying name[0..len). 0 or -ENOMEM. */
int sym_table__add(struct sym_table *t, uint64_t start, uint64_t size, const char *name, size_t len,
		   uint32_t tag, uint32_t prio);
/* Adds a symbol whose name the caller keeps: ref (in the entry's name field) is the caller's
 * index of it, e.g. into an array of names in a mapped file; refs must grow with each add, as
 * arena offsets do, so that symbols alike in all else keep the first one added either way.
 * sym_table__name must not be asked for it. 0 or -ENOMEM. */
int sym_table__add_ref(struct sym_table *t, uint64_t start, uint64_t size, uint32_t ref,
		       uint32_t tag, uint32_t prio);
/* Fills e as sym_table__add_ref adds a symbol. */
static inline void sym_entry__set(struct sym_entry *e, uint64_t start, uint64_t size,
				  uint32_t ref, uint32_t tag, uint32_t prio)
{
	e->start = start;
	e->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	e->name = ref;
	e->tag = tag;
	e->prio = prio;
}
/* For a loop of thousands of sym_table__add_ref: the room for n more entries, made by
 * sym_table__reserve before (else NULL), which the caller fills in order (sym_entry__set),
 * then counts with sym_table__added(t, k) (k <= n) before any other add. */
struct sym_entry *sym_table__room(struct sym_table *t, size_t n);
void sym_table__added(struct sym_table *t, size_t k);
/* Makes room for nsyms more symbols with name_bytes of names (NULs included) in all, so that
 * adding a known amount grows nothing; sym_table__finish gives back what stays unused. 0 or
 * -ENOMEM. */
int sym_table__reserve(struct sym_table *t, size_t nsyms, size_t name_bytes);
/* Sorts, keeps one symbol per address (highest prio, largest size) and extends zero-size symbols
 * to the next symbol, at most max_gap bytes (the last one gets max_gap, or 1 when 0). Must be
 * called before lookups. */
void sym_table__finish(struct sym_table *t, uint64_t max_gap);
/* The symbol covering addr, or NULL. */
const struct sym_entry *sym_table__find(const struct sym_table *t, uint64_t addr);
/* The name of e, an entry of t; valid until t is freed. */
const char *sym_table__name(const struct sym_table *t, const struct sym_entry *e);
/* Number of symbols. */
size_t sym_table__count(const struct sym_table *t);
/* Approximate heap bytes held. */
size_t sym_table__mem(const struct sym_table *t);

#endif
