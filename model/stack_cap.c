#include "stack_cap.h"

#include <errno.h>
#include <stdlib.h>

#include "strtab.h"
#include "util/grow.h"

struct leaf {
	double self;
	uint32_t rank; /* order of the walk, to find the leaf again */
};

struct collect {
	struct leaf *v;
	size_t n, cap;
};

static int collect_fn(void *ctx, const uint32_t *frames, size_t depth, double self, double self2)
{
	struct collect *c = ctx;

	if (ARRAY_GROW(c->v, c->cap, c->n + 1))
		return -ENOMEM;
	c->v[c->n] = (struct leaf){ self, (uint32_t)c->n };
	c->n++;
	return 0;
}

static int heavier_first(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

struct rebuild {
	struct profile *q;
	const unsigned char *keep; /* per walk rank */
	const struct frames *ft;
	uint32_t other;
	size_t rank;
	int identity; /* keep the identity frames in front of [other] */
};

static int is_identity(const struct frames *ft, uint32_t id)
{
	unsigned k = frames__get(ft, id)->kind;

	return k == FRAME_POD || k == FRAME_CONTAINER || k == FRAME_PROCESS || k == FRAME_THREAD;
}

static int rebuild_fn(void *ctx, const uint32_t *frames, size_t depth, double self, double self2)
{
	struct rebuild *r = ctx;
	uint32_t buf[8];
	size_t n = 0;

	if (r->keep[r->rank++])
		return profile__add_stack(r->q, frames, depth, self);
	while (r->identity && n < depth && n < 7 && is_identity(r->ft, frames[n])) {
		buf[n] = frames[n];
		n++;
	}
	buf[n++] = r->other;
	return profile__add_stack(r->q, buf, n, self);
}

void stack_cap_init(struct stack_cap *c, size_t max)
{
	c->max = max;
	c->next_check = max ? (uint32_t)(max < UINT32_MAX ? max : UINT32_MAX) : UINT32_MAX;
	c->folds = c->folded = 0;
}

long stack_cap_apply(struct stack_cap *c, struct profile *p)
{
	struct collect col = { 0 };
	struct rebuild r = { 0 };
	unsigned char *keep = NULL;
	struct frames *ft = profile__frames(p);
	struct frame of = { .kind = FRAME_SPECIAL };
	size_t nkeep, nstacks;
	long ret = -ENOMEM;

	if (!c->max || profile__node_count(p) < c->next_check)
		return 0;
	if (profile__for_each_stack(p, ORDER_INSERTION, collect_fn, &col))
		goto out;
	if (col.n <= c->max) {
		/* many nodes, few stacks (deep ones): look again once the tree doubles */
		c->next_check = profile__node_count(p) * 2;
		ret = 0;
		goto out;
	}
	nstacks = col.n;
	nkeep = c->max * 3 / 4;
	keep = calloc(col.n, 1);
	if (!keep)
		goto out;
	qsort(col.v, col.n, sizeof(*col.v), heavier_first);
	for (size_t i = 0; i < nkeep; i++)
		keep[col.v[i].rank] = 1;
	of.name = strtab__intern(frames__strtab(ft), "[other]", 7);
	r.other = of.name == UINT32_MAX ? UINT32_MAX : frames__intern(ft, &of);
	r.q = profile__new(ft, profile__kind(p), false);
	if (r.other == UINT32_MAX || !r.q)
		goto out;
	r.keep = keep;
	r.ft = ft;
	r.identity = 1;
	if (profile__for_each_stack(p, ORDER_INSERTION, rebuild_fn, &r))
		goto out;
	/* So many processes that their [other] stacks alone pass the cap: one [other] for all. */
	col.n = 0;
	if (profile__for_each_stack(r.q, ORDER_INSERTION, collect_fn, &col))
		goto out;
	if (col.n > c->max) {
		profile__clear(r.q);
		r.rank = 0;
		r.identity = 0;
		if (profile__for_each_stack(p, ORDER_INSERTION, rebuild_fn, &r))
			goto out;
	}
	profile__clear(p);
	if (profile__merge(p, r.q)) {
		/* p is empty now; better than half-built: put the folded tree back if possible */
		goto out;
	}
	c->folds++;
	c->folded += nstacks - nkeep;
	c->next_check = profile__node_count(p) + (uint32_t)(c->max - nkeep);
	ret = (long)(nstacks - nkeep);
out:
	profile__free(r.q);
	free(keep);
	free(col.v);
	return ret;
}

long stack_cap_decayed(struct stack_cap *c, struct profile *p, double min_total)
{
	uint32_t before = profile__node_count(p);
	struct profile *q;
	int err;

	if (before < c->next_check)
		return 0;
	q = profile__pruned(p, min_total);
	if (!q)
		return -ENOMEM;
	profile__clear(p);
	err = profile__merge(p, q);
	profile__free(q);
	if (err)
		return err;
	/* Looking again after an eighth more nodes keeps the tree within 9/8 of what is alive
	 * at a cost amortized over those nodes. */
	c->next_check = profile__node_count(p) + profile__node_count(p) / 8;
	if (c->next_check < 1024)
		c->next_check = 1024;
	return (long)before - (long)profile__node_count(p);
}
