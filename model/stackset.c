/* Stack union with two count columns: see stackset.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stackset.h"
#include "strtab.h"
#include "util/grow.h"

struct column {
	uint64_t *count; /* exact part */
	double *extra;	 /* fractional values, and what no longer fit in count */
	double total;
};

struct stack_set {
	struct strtab *st; /* id 0 is the empty string: a stack only once added */
	struct column col[2];
	size_t cap;
	bool empty_seen;
};

struct stack_set *stack_set__new(void)
{
	struct stack_set *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->st = strtab__new();
	if (!s->st) {
		free(s);
		return NULL;
	}
	return s;
}

void stack_set__free(struct stack_set *s)
{
	if (!s)
		return;
	strtab__free(s->st);
	for (int c = 0; c < 2; c++) {
		free(s->col[c].count);
		free(s->col[c].extra);
	}
	free(s);
}

/* Grows every column to hold id, by one shared capacity; the new slots are zero. */
static int grow(struct stack_set *s, uint32_t id)
{
	size_t ncap = grow_cap(s->cap, (size_t)id + 1, 4096, UINT32_MAX);

	for (int c = 0; c < 2; c++) {
		struct column *col = &s->col[c];

		if (!ncap || ARRAY_RESIZE(col->count, ncap) || ARRAY_RESIZE(col->extra, ncap))
			return -ENOMEM;
		memset(col->count + s->cap, 0, (ncap - s->cap) * sizeof(*col->count));
		memset(col->extra + s->cap, 0, (ncap - s->cap) * sizeof(*col->extra));
	}
	s->cap = ncap;
	return 0;
}

/* The id of stack[0..len), added if new; UINT32_MAX on ENOMEM. */
static uint32_t stack_id(struct stack_set *s, const char *stack, size_t len)
{
	uint32_t id = strtab__intern(s->st, stack, len);

	if (id == UINT32_MAX || (id >= s->cap && grow(s, id)))
		return UINT32_MAX;
	s->empty_seen |= id == 0;
	return id;
}

int stack_set__add_count(struct stack_set *s, int col, const char *stack, size_t len,
			 uint64_t count)
{
	uint32_t id = stack_id(s, stack, len);
	struct column *c = &s->col[col & 1];

	if (id == UINT32_MAX)
		return -ENOMEM;
	if (c->extra[id] != 0 || count > UINT64_MAX - c->count[id])
		c->extra[id] += (double)count;
	else
		c->count[id] += count;
	c->total += (double)count;
	return 0;
}

int stack_set__add_value(struct stack_set *s, int col, const char *stack, size_t len,
			 double value)
{
	uint32_t id = stack_id(s, stack, len);
	struct column *c = &s->col[col & 1];

	if (id == UINT32_MAX)
		return -ENOMEM;
	c->extra[id] += value;
	c->total += value;
	return 0;
}

size_t stack_set__count(const struct stack_set *s)
{
	return strtab__count(s->st) - 1 + s->empty_seen;
}

uint32_t *stack_set__sorted(const struct stack_set *s)
{
	uint32_t n = strtab__count(s->st), k = 0;
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));

	if (!ids)
		return NULL;
	for (uint32_t id = s->empty_seen ? 0 : 1; id < n; id++)
		ids[k++] = id;
	strtab__sort_ids(s->st, ids, k);
	return ids;
}

const char *stack_set__stack(const struct stack_set *s, uint32_t id, size_t *len)
{
	*len = strtab__len(s->st, id);
	return strtab__str(s->st, id);
}

double stack_set__value(const struct stack_set *s, int col, uint32_t id)
{
	const struct column *c = &s->col[col & 1];

	return id < s->cap ? (double)c->count[id] + c->extra[id] : 0;
}

bool stack_set__exact(const struct stack_set *s, int col, uint32_t id, uint64_t *count)
{
	const struct column *c = &s->col[col & 1];

	*count = id < s->cap ? c->count[id] : 0;
	return id >= s->cap || c->extra[id] == 0;
}

double stack_set__total(const struct stack_set *s, int col)
{
	return s->col[col & 1].total;
}
