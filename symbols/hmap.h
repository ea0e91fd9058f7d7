/* A small chained hash map with byte-string keys (copied into the map) and pointer values. */
#ifndef GALATOP_SYMBOLS_HMAP_H
#define GALATOP_SYMBOLS_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap;

/* Creates an empty map. NULL on ENOMEM. */
struct hmap *hmap__new(void);
/* Frees the map and its key copies (not the values); NULL is a no-op. */
void hmap__free(struct hmap *m);
/* The value stored under key[0..len), or NULL. */
void *hmap__get(const struct hmap *m, const void *key, size_t len);
/* Stores val under key[0..len) (replacing any value) and returns the map's own copy of the key
 * (valid until the entry is deleted), or NULL on ENOMEM. */
const void *hmap__put(struct hmap *m, const void *key, size_t len, void *val);
/* Removes key[0..len); returns its value or NULL when absent. */
void *hmap__del(struct hmap *m, const void *key, size_t len);
/* Number of entries. */
size_t hmap__count(const struct hmap *m);
/* Approximate heap bytes held by the map itself. */
size_t hmap__mem(const struct hmap *m);
/* Calls fn(key, len, val, arg) for every entry; fn must not modify the map. */
void hmap__each(const struct hmap *m, void (*fn)(const void *key, size_t len, void *val, void *arg),
		void *arg);

#endif
