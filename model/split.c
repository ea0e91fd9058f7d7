/* Per-process split: see split.h. */
#include <errno.h>
#include <stdlib.h>

#include "split.h"
#include "util/grow.h"

struct split {
	const struct profile *src;
	struct frames *ft;
	uint32_t *part_of; /* frame id -> part index + 1, 0 when none yet */
	size_t nframes;
	struct profile_part *parts;
	size_t n, cap;
};

static int split_stack(void *vctx, const uint32_t *frames, size_t depth, double self,
		       double self2)
{
	struct split *c = vctx;
	uint32_t root = 0;
	size_t k;

	for (k = 0; k < depth; k++)
		if (frames__get(c->ft, frames[k])->kind == FRAME_PROCESS)
			break;
	if (depth)
		root = frames[k == depth ? 0 : k];
	if (root >= c->nframes)
		return -EINVAL; /* the frame table changed under the walk */
	if (!c->part_of[root]) {
		struct profile *p;

		if (ARRAY_GROW(c->parts, c->cap, c->n + 1))
			return -ENOMEM;
		p = profile__new(c->ft, profile__kind(c->src), false);
		if (!p)
			return -ENOMEM;
		c->parts[c->n++] = (struct profile_part){ root, p };
		c->part_of[root] = (uint32_t)c->n;
	}
	if (profile__two_column(c->src))
		return profile__add_stack2(c->parts[c->part_of[root] - 1].p, frames, depth, self,
					   self2);
	return profile__add_stack(c->parts[c->part_of[root] - 1].p, frames, depth, self);
}

int profile_split_by_process(const struct profile *p, struct profile_part **parts, size_t *n)
{
	struct split c = { .src = p, .ft = profile__frames(p) };
	int err;

	*parts = NULL;
	*n = 0;
	c.nframes = frames__count(c.ft);
	c.part_of = calloc(c.nframes ? c.nframes : 1, sizeof(*c.part_of));
	if (!c.part_of)
		return -ENOMEM;
	err = profile__for_each_stack(p, ORDER_NAME, split_stack, &c);
	free(c.part_of);
	if (err) {
		profile_parts_free(c.parts, c.n);
		return err;
	}
	*parts = c.parts;
	*n = c.n;
	return 0;
}

void profile_parts_free(struct profile_part *parts, size_t n)
{
	if (!parts)
		return;
	for (size_t i = 0; i < n; i++)
		profile__free(parts[i].p);
	free(parts);
}
