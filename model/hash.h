/* The one hash function of the tree: fast non-cryptographic hashing for tables and colors
 * (inputs are not adversarial enough to need SipHash: a hostile file can only make galatop
 * slower, never wrong). Its values are part of the output (frame colors in SVGs and in the
 * TUI), so it changes only together with the goldens. */
#ifndef GALATOP_MODEL_HASH_H
#define GALATOP_MODEL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* Hashes len bytes, 8 at a time. */
static inline uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (len * 0x100000001b3ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ hash_mix(w)) * 0x100000001b3ULL;
		h = (h << 27) | (h >> 37);
		p += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, p, len);
	h ^= w + len;
	return hash_mix(h);
}

/* Hashes two 32-bit keys. */
static inline uint64_t hash_pair(uint32_t a, uint32_t b)
{
	return hash_mix(((uint64_t)a << 32) ^ b ^ 0x9e3779b97f4a7c15ULL);
}

#endif
