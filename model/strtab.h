/* String interning: each distinct byte string gets a small stable id. */
#ifndef GALATOP_MODEL_STRTAB_H
#define GALATOP_MODEL_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strtab;

/* Creates an empty table; id 0 is always the empty string. NULL on ENOMEM. */
struct strtab *strtab__new(void);
/* Frees the table and every string in it; NULL is a no-op. */
void strtab__free(struct strtab *st);
/* Returns the id of s[0..len), adding a copy if new; (uint32_t)-1 on ENOMEM.
 * The bytes may contain anything (NUL included): sanitizing is the caller's job. */
uint32_t strtab__intern(struct strtab *st, const char *s, size_t len);
/* The hash strtab__intern computes for s[0..len). */
uint32_t strtab__hash(const char *s, size_t len);
/* The length of the field at s: up to the first byte sep or max bytes; its strtab__hash in *h
 * and in *printable whether all its bytes are printable ASCII (0x20..0x7e). One pass, a word
 * at a time: the splitting, hashing and checking of a folded stack's frames together. */
size_t strtab__hash_field(const char *s, size_t max, char sep, uint32_t *h, bool *printable);
/* strtab__intern of s[0..len) whose strtab__hash is h. */
uint32_t strtab__intern_hashed(struct strtab *st, const char *s, size_t len, uint32_t h);
/* A string to intern in a batch: its bytes and their strtab__hash. */
struct strtab_key {
	const char *s;
	size_t len;
	uint32_t hash;
};
/* Splits s[0..len) at the bytes sep into at most max fields (the last one ends at len) as
 * strtab__hash_field does, keys[i] and printable[i] for field i, and starts loading the slot
 * each one probes first, so that strtab__intern_batch waits for memory about once for them
 * all; returns how many fields, and in *used the bytes taken (through the sep after the last
 * field, len + 1 when it ended at len). One call for a batch of frame names. */
size_t strtab__split(const struct strtab *st, const char *s, size_t len, char sep,
		     struct strtab_key *keys, bool *printable, size_t max, size_t *used);
/* strtab__intern_hashed of keys[0..n), their ids into ids[0..n): one call for a batch (a
 * frame name costs less than a call's overhead to find). 0, or -ENOMEM (ids[i] is then
 * (uint32_t)-1 for the strings not interned). */
int strtab__intern_batch(struct strtab *st, const struct strtab_key *keys, size_t n,
			 uint32_t *ids);
/* Returns the id of s[0..len) or (uint32_t)-1 if it was never interned. */
uint32_t strtab__find(const struct strtab *st, const char *s, size_t len);
/* The NUL-terminated string for id; valid until the table is freed. */
const char *strtab__str(const struct strtab *st, uint32_t id);
/* Byte length of string id. */
size_t strtab__len(const struct strtab *st, uint32_t id);
/* Number of distinct strings (ids are 0..count-1). */
uint32_t strtab__count(const struct strtab *st);
/* Sorts ids[0..n) by the bytes of their strings (a prefix before its extensions), as perl's
 * sort orders byte strings. */
void strtab__sort_ids(const struct strtab *st, uint32_t *ids, size_t n);
/* Bytes of memory held, for benchmarks and the status bar. */
size_t strtab__mem(const struct strtab *st);

#endif
