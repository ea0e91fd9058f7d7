/* Frame-table renewal: see renew.h. */
#include "renew.h"

#include <errno.h>
#include <stdlib.h>

#include "slices.h"

bool renew_due(uint32_t count, uint32_t renewed_at, uint32_t min)
{
	if (!min)
		min = RENEW_FRAMES_MIN;
	return count >= min && count >= 2 * (uint64_t)renewed_at;
}

int renew_move(struct frames *ft, struct profile **p, struct slices **r, size_t n,
	       int (*move)(void *ctx, struct frames *ft), void *ctx)
{
	struct profile **np = calloc(n ? n : 1, sizeof(*np));
	struct slices **nr = calloc(n ? n : 1, sizeof(*nr));
	int err = np && nr ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < n; i++) {
		if (p && p[i]) {
			np[i] = profile__new(ft, profile__kind(p[i]), profile__is_chart(p[i]));
			if (!np[i] || profile__merge(np[i], p[i]))
				err = -ENOMEM;
		}
		if (!err && r && r[i] && !(nr[i] = slices__copy(r[i], ft)))
			err = -ENOMEM;
	}
	if (!err && move)
		err = move(ctx, ft);
	for (size_t i = 0; np && nr && i < n; i++) {
		if (err) {
			profile__free(np[i]);
			slices__free(nr[i]);
			continue;
		}
		if (p && p[i]) {
			profile__free(p[i]);
			p[i] = np[i];
		}
		if (r && r[i]) {
			slices__free(r[i]);
			r[i] = nr[i];
		}
	}
	free(np);
	free(nr);
	return err;
}
