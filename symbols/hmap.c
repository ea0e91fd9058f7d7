/* Chained hash map; model/hash.h hashes, power-of-two bucket arrays doubled at load factor 1. */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "model/hash.h"

struct hnode {
	struct hnode *next;
	uint64_t hash;
	void *val;
	size_t len;
	unsigned char key[];
};

struct hmap {
	struct hnode **buckets;
	size_t nbuckets; /* power of two */
	size_t count;
	size_t key_bytes;
};

struct hmap *hmap__new(void)
{
	struct hmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->nbuckets = 16;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (!m->buckets) {
		free(m);
		return NULL;
	}
	return m;
}

void hmap__free(struct hmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct hnode *n = m->buckets[i];

		while (n) {
			struct hnode *next = n->next;

			free(n);
			n = next;
		}
	}
	free(m->buckets);
	free(m);
}

static struct hnode **hmap_slot(const struct hmap *m, const void *key, size_t len, uint64_t h)
{
	struct hnode **pp = &m->buckets[h & (m->nbuckets - 1)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && (*pp)->len == len && !memcmp((*pp)->key, key, len))
			break;
	return pp;
}

void *hmap__get(const struct hmap *m, const void *key, size_t len)
{
	struct hnode *n = *hmap_slot(m, key, len, hash_bytes(key, len));

	return n ? n->val : NULL;
}

static void hmap_grow(struct hmap *m)
{
	size_t nb = m->nbuckets * 2;
	struct hnode **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* keep working with longer chains */
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct hnode *n = m->buckets[i];

		while (n) {
			struct hnode *next = n->next;

			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
			n = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
}

const void *hmap__put(struct hmap *m, const void *key, size_t len, void *val)
{
	uint64_t h = hash_bytes(key, len);
	struct hnode **pp = hmap_slot(m, key, len, h);
	struct hnode *n = *pp;

	if (n) {
		n->val = val;
		return n->key;
	}
	n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	n->next = NULL;
	n->hash = h;
	n->val = val;
	n->len = len;
	memcpy(n->key, key, len);
	n->key[len] = 0; /* string keys can be used as C strings */
	*pp = n;
	m->count++;
	m->key_bytes += len + 1;
	if (m->count > m->nbuckets)
		hmap_grow(m);
	return n->key;
}

void *hmap__del(struct hmap *m, const void *key, size_t len)
{
	struct hnode **pp = hmap_slot(m, key, len, hash_bytes(key, len));
	struct hnode *n = *pp;
	void *val;

	if (!n)
		return NULL;
	*pp = n->next;
	val = n->val;
	m->count--;
	m->key_bytes -= n->len + 1;
	free(n);
	return val;
}

size_t hmap__count(const struct hmap *m)
{
	return m->count;
}

size_t hmap__mem(const struct hmap *m)
{
	return sizeof(*m) + m->nbuckets * sizeof(*m->buckets) + m->count * sizeof(struct hnode) +
	       m->key_bytes;
}

void hmap__each(const struct hmap *m, void (*fn)(const void *key, size_t len, void *val, void *arg),
		void *arg)
{
	for (size_t i = 0; i < m->nbuckets; i++)
		for (struct hnode *n = m->buckets[i]; n; n = n->next)
			fn(n->key, n->len, n->val, arg);
}
