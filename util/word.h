/* Word-at-a-time byte scanning: 8 bytes read as one little-endian word, so that the first byte
 * is the lowest (the lowest flagged byte of a SWAR test is then the first in memory). */
#ifndef GALATOP_UTIL_WORD_H
#define GALATOP_UTIL_WORD_H

#include <stdint.h>
#include <string.h>

/* The 8 bytes at p (any alignment) as a little-endian word. */
static inline uint64_t load_le(const void *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

#endif
