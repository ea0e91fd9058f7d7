#include "profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "util/grow.h"

#define EMPTY_SLOT UINT64_MAX

struct profile {
	struct frames *ft;
	enum value_kind kind;
	bool chart;
	struct profile_node *nodes;
	double *total2, *self2; /* NULL unless two-column */
	uint32_t count, cap;
	/* Children of a node are found by walking its sibling list while they are few; once a
	 * node has more than SMALL_FANOUT children (indexed[node] set) they go into a hash of
	 * (parent, frame) -> node, open addressing, unused in chart mode. A slot holds the node id
	 * in its low half and the key's hash tag in its high half, so a probe reads a node only
	 * when the tags agree. Most nodes of a deep tree have one child and never cost a slot. */
	uint8_t *indexed;
	uint64_t *slots;
	uint32_t mask, nslots_used;
};

#define SMALL_FANOUT 8

static uint64_t key_hash(uint32_t parent, uint32_t frame)
{
	return hash_pair(parent, frame);
}

static uint64_t slot_entry(uint64_t h, uint32_t id)
{
	return (h & 0xffffffff00000000ULL) | id;
}

/* Index of the first empty slot on h's probe sequence. */
static uint32_t empty_slot(const struct profile *p, uint64_t h)
{
	uint32_t i = (uint32_t)h & p->mask;

	while (p->slots[i] != EMPTY_SLOT)
		i = (i + 1) & p->mask;
	return i;
}

/* Moves the index into nsize slots: the entries of the old slots (a fraction of the nodes),
 * rather than every node whose parent is indexed. */
static int rehash(struct profile *p, uint32_t nsize)
{
	uint64_t *old = p->slots, *slots = malloc((size_t)nsize * sizeof(*slots));
	uint32_t nold = old ? p->mask + 1 : 0;

	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, (size_t)nsize * sizeof(*slots));
	p->slots = slots;
	p->mask = nsize - 1;
	for (uint32_t i = 0; i < nold; i++) {
		uint32_t id = (uint32_t)old[i];
		uint64_t h;

		/* a slot left by an undone new_child may name no node, or one elsewhere now */
		if (old[i] == EMPTY_SLOT || id >= p->count || !p->indexed[p->nodes[id].parent])
			continue;
		h = key_hash(p->nodes[id].parent, p->nodes[id].frame);
		slots[empty_slot(p, h)] = slot_entry(h, id);
	}
	free(old);
	return 0;
}

/* Sizes the node arrays (and the second column's) to one shared capacity ncap. */
static int resize_nodes(struct profile *p, size_t ncap)
{
	if (ARRAY_RESIZE(p->nodes, ncap) || ARRAY_RESIZE(p->indexed, ncap) ||
	    (p->total2 && (ARRAY_RESIZE(p->total2, ncap) || ARRAY_RESIZE(p->self2, ncap))))
		return -ENOMEM;
	p->cap = (uint32_t)ncap;
	array_advise_huge(p->nodes, ncap * sizeof(*p->nodes));
	return 0;
}

/* Grows the node arrays by doubling until they hold need nodes; ids stay below PROFILE_NONE. */
static int grow_nodes(struct profile *p, size_t need)
{
	size_t ncap = grow_cap(p->cap, need, 256, PROFILE_NONE);

	return ncap ? resize_nodes(p, ncap) : -ENOMEM;
}

int profile__reserve(struct profile *p, size_t nodes)
{
	if (nodes <= p->cap)
		return 0;
	return nodes < PROFILE_NONE ? resize_nodes(p, nodes) : -ENOMEM;
}

static void init_root(struct profile *p)
{
	p->nodes[0] = (struct profile_node){ PROFILE_NONE, 0, PROFILE_NONE, PROFILE_NONE, 0, 0 };
	p->indexed[0] = 0;
	if (p->total2)
		p->total2[0] = p->self2[0] = 0;
	p->count = 1;
}

struct profile *profile__new(struct frames *ft, enum value_kind kind, bool chart)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->ft = ft;
	p->kind = kind;
	p->chart = chart;
	if (grow_nodes(p, 1) || rehash(p, 256)) {
		profile__free(p);
		return NULL;
	}
	init_root(p);
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->indexed);
	free(p->total2);
	free(p->self2);
	free(p->slots);
	free(p);
}

void profile__clear(struct profile *p)
{
	memset(p->slots, 0xff, (size_t)(p->mask + 1) * sizeof(*p->slots));
	p->nslots_used = 0;
	init_root(p);
}

static int make_two_column(struct profile *p)
{
	if (p->total2)
		return 0;
	p->total2 = malloc((size_t)p->cap * sizeof(double));
	p->self2 = malloc((size_t)p->cap * sizeof(double));
	if (!p->total2 || !p->self2) {
		free(p->total2);
		free(p->self2);
		p->total2 = p->self2 = NULL;
		return -ENOMEM;
	}
	/* What was there before had one value: it is the same in both columns. */
	for (uint32_t id = 0; id < p->count; id++) {
		p->total2[id] = p->nodes[id].total;
		p->self2[id] = p->nodes[id].self;
	}
	return 0;
}

int profile__set_two_column(struct profile *p)
{
	return make_two_column(p);
}

/* Probes the index for (parent, frame) with hash h: the node, or PROFILE_NONE. */
static uint32_t probe(const struct profile *p, uint32_t parent, uint32_t frame, uint64_t h)
{
	uint64_t tag = h & 0xffffffff00000000ULL;

	for (uint32_t i = (uint32_t)h & p->mask;; i = (i + 1) & p->mask) {
		uint64_t e = p->slots[i];
		uint32_t id = (uint32_t)e;

		if (e == EMPTY_SLOT)
			return PROFILE_NONE;
		if ((e & 0xffffffff00000000ULL) == tag && p->nodes[id].parent == parent &&
		    p->nodes[id].frame == frame)
			return id;
	}
}

uint32_t profile__find_child(const struct profile *p, uint32_t parent, uint32_t frame)
{
	uint32_t c = p->nodes[parent].first_child;

	/* Past the point where a sorted stack diverges every parent is new: skip the probe. */
	if (c == PROFILE_NONE)
		return PROFILE_NONE;
	if (p->chart)
		return p->nodes[c].frame == frame ? c : PROFILE_NONE;
	if (p->indexed[parent])
		return probe(p, parent, frame, key_hash(parent, frame));
	for (; c != PROFILE_NONE; c = p->nodes[c].next_sibling)
		if (p->nodes[c].frame == frame)
			return c;
	return PROFILE_NONE;
}

/* Puts node id (a child of an indexed parent) into the hash, growing it first if needed. */
static int index_node(struct profile *p, uint32_t id)
{
	uint64_t h;

	if ((uint64_t)(p->nslots_used + 1) * 4 > (uint64_t)(p->mask + 1) * 3 &&
	    rehash(p, (p->mask + 1) * 2))
		return -ENOMEM;
	h = key_hash(p->nodes[id].parent, p->nodes[id].frame);
	p->slots[empty_slot(p, h)] = slot_entry(h, id);
	p->nslots_used++;
	return 0;
}

/* Indexes parent's children once it has more than SMALL_FANOUT of them. */
static int index_if_wide(struct profile *p, uint32_t parent)
{
	uint32_t n = 0, c;

	for (c = p->nodes[parent].first_child; c != PROFILE_NONE && n <= SMALL_FANOUT;
	     c = p->nodes[c].next_sibling)
		n++;
	if (n <= SMALL_FANOUT)
		return 0;
	p->indexed[parent] = 1;
	for (c = p->nodes[parent].first_child; c != PROFILE_NONE; c = p->nodes[c].next_sibling)
		if (index_node(p, c))
			return -ENOMEM;
	return 0;
}

/* Appends a new child of parent for frame (no lookup), linked first among its siblings and
 * indexed; PROFILE_NONE on ENOMEM. */
static uint32_t new_child(struct profile *p, uint32_t parent, uint32_t frame)
{
	uint32_t id;

	if (p->count == p->cap && grow_nodes(p, (size_t)p->count + 1))
		return PROFILE_NONE;
	id = p->count++;
	p->nodes[id] = (struct profile_node){ parent, frame, PROFILE_NONE,
					      p->nodes[parent].first_child, 0, 0 };
	p->nodes[parent].first_child = id;
	p->indexed[id] = 0;
	if (p->total2)
		p->total2[id] = p->self2[id] = 0;
	if (!p->chart) {
		int err = p->indexed[parent] ? index_node(p, id) : index_if_wide(p, parent);

		if (err) {
			/* Undo, and look the parent's children up by walking them again: the tree
			 * never holds a node that its lookup would miss. Stale slots left behind
			 * only ever point at nodes matching their key. */
			p->indexed[parent] = 0;
			p->nodes[parent].first_child = p->nodes[id].next_sibling;
			p->count--;
			return PROFILE_NONE;
		}
	}
	return id;
}

uint32_t profile__child(struct profile *p, uint32_t parent, uint32_t frame)
{
	uint32_t id = profile__find_child(p, parent, frame);

	return id != PROFILE_NONE ? id : new_child(p, parent, frame);
}

void profile__add_value(struct profile *p, uint32_t node, double value, double value2)
{
	p->nodes[node].self += value;
	if (p->total2)
		p->self2[node] += value2;
	for (uint32_t n = node; n != PROFILE_NONE; n = p->nodes[n].parent) {
		p->nodes[n].total += value;
		if (p->total2)
			p->total2[n] += value2;
	}
}

void profile__add_self(struct profile *p, uint32_t node, double value, double value2)
{
	p->nodes[node].self += value;
	if (p->total2)
		p->self2[node] += value2;
}

void profile__sum_totals(struct profile *p)
{
	/* A child is always created after its parent, so one backward pass adds every subtree
	 * into its parent after the subtree itself is complete. */
	for (uint32_t id = 0; id < p->count; id++) {
		p->nodes[id].total = p->nodes[id].self;
		if (p->total2)
			p->total2[id] = p->self2[id];
	}
	for (uint32_t id = p->count; id-- > 1;) {
		uint32_t parent = p->nodes[id].parent;

		p->nodes[parent].total += p->nodes[id].total;
		if (p->total2)
			p->total2[parent] += p->total2[id];
	}
}

void profile__scale(struct profile *p, double factor)
{
	for (uint32_t id = 0; id < p->count; id++) {
		p->nodes[id].total *= factor;
		p->nodes[id].self *= factor;
		if (p->total2) {
			p->total2[id] *= factor;
			p->self2[id] *= factor;
		}
	}
}

uint32_t profile__child_path(struct profile *p, uint32_t node, const uint32_t *frames, size_t n,
			     uint32_t *path)
{
	size_t i = 0;

	for (; i < n; i++) {
		uint32_t c = profile__find_child(p, node, frames[i]);

		if (c == PROFILE_NONE)
			break;
		node = c;
		if (path)
			path[i] = c;
	}
	if (i == n)
		return node;
	node = new_child(p, node, frames[i]);
	if (node == PROFILE_NONE)
		return PROFILE_NONE;
	if (path)
		path[i] = node;
	if (p->count + (n - i - 1) > p->cap && grow_nodes(p, p->count + (n - i - 1)))
		return PROFILE_NONE;
	/* The rest: each the only child of the one before, never indexed (not wide). */
	for (i++; i < n; i++) {
		uint32_t id = p->count++;

		p->nodes[id] = (struct profile_node){ node, frames[i], PROFILE_NONE, PROFILE_NONE,
						      0, 0 };
		p->nodes[node].first_child = id;
		p->indexed[id] = 0;
		if (p->total2)
			p->total2[id] = p->self2[id] = 0;
		node = id;
		if (path)
			path[i] = id;
	}
	return node;
}

static int add_path(struct profile *p, const uint32_t *frames, size_t n, double v, double v2)
{
	uint32_t node = profile__child_path(p, PROFILE_ROOT, frames, n, NULL);

	if (node == PROFILE_NONE)
		return -ENOMEM;
	profile__add_value(p, node, v, v2);
	return 0;
}

int profile__add_stack(struct profile *p, const uint32_t *frames, size_t n, double value)
{
	return add_path(p, frames, n, value, 0);
}

int profile__add_stack2(struct profile *p, const uint32_t *frames, size_t n, double value,
			double value2)
{
	if (make_two_column(p))
		return -ENOMEM;
	return add_path(p, frames, n, value, value2);
}

/* Maps a frame of another table into dst's table. */
static uint32_t map_frame(struct profile *dst, const struct frames *sft, uint32_t id)
{
	return frames__intern_from(dst->ft, sft, id);
}

/* Adds src into dst: both columns as they are (column < 0), or src's values into column 0
 * ("before") or 1 ("after") of a two-column dst. */
static int merge_into(struct profile *dst, const struct profile *src, int column, double factor)
{
	uint32_t *map = malloc((size_t)src->count * sizeof(*map));
	bool same = dst->ft == src->ft;

	if (!map)
		return -ENOMEM;
	if ((src->total2 || column >= 0) && make_two_column(dst)) {
		free(map);
		return -ENOMEM;
	}
	/* Parents precede children in the node array, so one pass maps every node. Adding the
	 * source totals node by node keeps every ancestor's total right without walking up. */
	map[0] = PROFILE_ROOT;
	for (uint32_t id = 0; id < src->count; id++) {
		const struct profile_node *s = &src->nodes[id];
		uint32_t d = PROFILE_ROOT;

		if (id) {
			uint32_t f = same ? s->frame : map_frame(dst, src->ft, s->frame);

			d = f == UINT32_MAX ? PROFILE_NONE : profile__child(dst, map[s->parent], f);
			if (d == PROFILE_NONE) {
				free(map);
				return -ENOMEM;
			}
		}
		map[id] = d;
		if (column == 1) {
			dst->total2[d] += s->total * factor;
			dst->self2[d] += s->self * factor;
			continue;
		}
		dst->nodes[d].total += s->total * factor;
		dst->nodes[d].self += s->self * factor;
		if (column < 0 && src->total2) {
			dst->total2[d] += src->total2[id];
			dst->self2[d] += src->self2[id];
		}
	}
	free(map);
	return 0;
}

int profile__merge(struct profile *dst, const struct profile *src)
{
	return merge_into(dst, src, -1, 1);
}

int profile__merge_column(struct profile *dst, const struct profile *src, int column,
			  double factor)
{
	if ((column != 0 && column != 1) || !(factor >= 0) || isinf(factor))
		return -EINVAL;
	return merge_into(dst, src, column, factor);
}

struct profile *profile__pruned(const struct profile *p, double min_total)
{
	struct profile *q = profile__new(p->ft, p->kind, p->chart);
	uint32_t *map = malloc((size_t)p->count * sizeof(*map));

	if (!q || !map || (p->total2 && make_two_column(q)))
		goto fail;
	map[0] = PROFILE_ROOT;
	q->nodes[0] = p->nodes[0];
	q->nodes[0].first_child = PROFILE_NONE;
	if (p->total2) {
		q->total2[0] = p->total2[0];
		q->self2[0] = p->self2[0];
	}
	/* Insertion order is kept, so chart profiles stay in time order. Children were linked
	 * newest first; walking ids upward and prepending reproduces the same order. */
	for (uint32_t id = 1; id < p->count; id++) {
		const struct profile_node *s = &p->nodes[id];
		uint32_t d;

		map[id] = PROFILE_NONE;
		if (map[s->parent] == PROFILE_NONE || s->total < min_total)
			continue;
		d = new_child(q, map[s->parent], s->frame);
		if (d == PROFILE_NONE)
			goto fail;
		q->nodes[d].total = s->total;
		q->nodes[d].self = s->self;
		if (p->total2) {
			q->total2[d] = p->total2[id];
			q->self2[d] = p->self2[id];
		}
		map[id] = d;
	}
	free(map);
	return q;
fail:
	free(map);
	profile__free(q);
	return NULL;
}

const struct profile_node *profile__node(const struct profile *p, uint32_t id)
{
	return &p->nodes[id < p->count ? id : 0];
}

uint32_t profile__node_count(const struct profile *p)
{
	return p->count;
}

double profile__total2(const struct profile *p, uint32_t id)
{
	return p->total2 && id < p->count ? p->total2[id] : 0;
}

double profile__self2(const struct profile *p, uint32_t id)
{
	return p->self2 && id < p->count ? p->self2[id] : 0;
}

bool profile__two_column(const struct profile *p)
{
	return p->total2 != NULL;
}

double profile__total(const struct profile *p)
{
	return p->nodes[0].total;
}

enum value_kind profile__kind(const struct profile *p)
{
	return p->kind;
}

bool profile__is_chart(const struct profile *p)
{
	return p->chart;
}

struct frames *profile__frames(const struct profile *p)
{
	return p->ft;
}

uint32_t profile__max_depth(const struct profile *p)
{
	uint32_t *depth = malloc((size_t)p->count * sizeof(*depth)), max = 0;

	if (!depth)
		return 0;
	depth[0] = 0;
	for (uint32_t id = 1; id < p->count; id++) {
		depth[id] = depth[p->nodes[id].parent] + 1;
		if (depth[id] > max)
			max = depth[id];
	}
	free(depth);
	return max;
}

size_t profile__child_count(const struct profile *p, uint32_t node)
{
	size_t n = 0;

	for (uint32_t c = p->nodes[node].first_child; c != PROFILE_NONE; c = p->nodes[c].next_sibling)
		n++;
	return n;
}

/* Compares names as flamegraph.pl's sorted lines would: a name ends in ';' there. */
static int name_cmp(const struct frames *ft, uint32_t a, uint32_t b)
{
	const unsigned char *sa = (const unsigned char *)frames__name(ft, a);
	const unsigned char *sb = (const unsigned char *)frames__name(ft, b);
	size_t la = frames__name_len(ft, a), lb = frames__name_len(ft, b);
	size_t n = la < lb ? la : lb;
	int c = memcmp(sa, sb, n);

	if (c)
		return c;
	if (la == lb)
		return a < b ? -1 : a > b; /* same name, other module or kind: stable by id */
	return la < lb ? ';' - sb[n] : sa[n] - ';';
}

struct sort_ctx {
	const struct profile *p;
	enum profile_order order;
};

static __thread struct sort_ctx sort_ctx;

static int child_cmp(const void *x, const void *y)
{
	const struct profile *p = sort_ctx.p;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (sort_ctx.order == ORDER_WEIGHT) {
		double ta = p->nodes[a].total, tb = p->nodes[b].total;

		if (ta != tb)
			return ta > tb ? -1 : 1;
	}
	return name_cmp(p->ft, p->nodes[a].frame, p->nodes[b].frame);
}

size_t profile__children(const struct profile *p, uint32_t node, enum profile_order order,
			 uint32_t *out)
{
	size_t n = 0;

	for (uint32_t c = p->nodes[node].first_child; c != PROFILE_NONE; c = p->nodes[c].next_sibling)
		out[n++] = c;
	if (order == ORDER_INSERTION) {
		for (size_t i = 0; i < n / 2; i++) {
			uint32_t t = out[i];

			out[i] = out[n - 1 - i];
			out[n - 1 - i] = t;
		}
	} else if (n > 1) {
		sort_ctx = (struct sort_ctx){ p, order };
		qsort(out, n, sizeof(*out), child_cmp);
	}
	return n;
}

int profile__for_each_stack(const struct profile *p, enum profile_order order,
			    profile_stack_fn fn, void *ctx)
{
	/* Iterative DFS: kids holds every pending child list, path the frames down to node. */
	uint32_t *kids = malloc((size_t)p->count * sizeof(*kids));
	uint32_t *path = malloc(((size_t)profile__max_depth(p) + 1) * sizeof(*path));
	uint32_t *depth_of = malloc((size_t)p->count * sizeof(*depth_of));
	size_t top = 0;
	int ret = 0;

	if (!kids || !path || !depth_of) {
		ret = -ENOMEM;
		goto out;
	}
	depth_of[0] = 0;
	kids[top++] = PROFILE_ROOT;
	while (top) {
		uint32_t id = kids[--top], d = depth_of[id];
		size_t n;

		if (id != PROFILE_ROOT)
			path[d - 1] = p->nodes[id].frame;
		if (p->nodes[id].self != 0 || (p->self2 && p->self2[id] != 0)) {
			ret = fn(ctx, path, d, p->nodes[id].self, p->self2 ? p->self2[id] : 0);
			if (ret)
				goto out;
		}
		/* Push children reversed so the first in order is visited first. */
		n = profile__children(p, id, order, kids + top);
		for (size_t i = 0; i < n / 2; i++) {
			uint32_t t = kids[top + i];

			kids[top + i] = kids[top + n - 1 - i];
			kids[top + n - 1 - i] = t;
		}
		for (size_t i = 0; i < n; i++)
			depth_of[kids[top + i]] = d + 1;
		top += n;
	}
out:
	free(kids);
	free(path);
	free(depth_of);
	return ret;
}

size_t profile__mem(const struct profile *p)
{
	size_t m = sizeof(*p) + (size_t)p->cap * (sizeof(*p->nodes) + 1) +
		   (size_t)(p->mask + 1) * sizeof(*p->slots);

	if (p->total2)
		m += (size_t)p->cap * 2 * sizeof(double);
	return m;
}

static const char *const value_names[VALUE_KIND_MAX] = {
	[VALUE_SAMPLES] = "samples", [VALUE_NANOSECONDS] = "ns", [VALUE_MICROSECONDS] = "us",
	[VALUE_BYTES] = "bytes",     [VALUE_FAULTS] = "faults",
};

const char *value_kind_str(enum value_kind kind)
{
	return (unsigned)kind < VALUE_KIND_MAX ? value_names[kind] : "samples";
}

int value_kind_parse(const char *s)
{
	for (int k = 0; k < VALUE_KIND_MAX; k++)
		if (!strcmp(value_names[k], s))
			return k;
	return -1;
}
