/* Frame-table renewal: a long run's frame table keeps the name of every frame it ever saw, of
 * processes long gone too. Once it has grown enough, what is still held (profiles, histories)
 * moves onto a fresh table and the old one goes. One policy for every long run: the live view
 * and periodic recording. */
#ifndef GALATOP_MODEL_RENEW_H
#define GALATOP_MODEL_RENEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frames.h"
#include "profile.h"

struct slices;

/* Tables smaller than this are never renewed (tests may ask for less). */
#define RENEW_FRAMES_MIN 16384

/* Whether a table of count frames is due for renewal: it holds at least min frames (0:
 * RENEW_FRAMES_MIN) and twice the renewed_at frames it held right after its last renewal (what
 * was carried over), so renewals stay rare whatever is held. */
bool renew_due(uint32_t count, uint32_t renewed_at, uint32_t min);

/* Moves the n profiles p[] and history rings r[] (either array may be NULL, NULL entries stay
 * NULL) onto ft: copies them, then calls move(ctx, ft) when move is not NULL (the caller's other
 * users of the old table follow, e.g. a collector), and only when that returns 0 frees the old
 * ones and puts the copies in their place. 0, or -ENOMEM or move's error, and then nothing
 * changed. */
int renew_move(struct frames *ft, struct profile **p, struct slices **r, size_t n,
	       int (*move)(void *ctx, struct frames *ft), void *ctx);

#endif
