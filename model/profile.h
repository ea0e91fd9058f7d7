/* Profile tree (call tree): the structure every flame graph, table and export is drawn from.
 * Nodes live in flat arrays; child lookup walks a node's few children, or (past 8 of them)
 * a hash on (parent, frame): O(1) on average either way.
 * Stacks are inserted incrementally (live probes feed it sample by sample). */
#ifndef GALATOP_MODEL_PROFILE_H
#define GALATOP_MODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frames.h"

/* What a node's value counts. */
enum value_kind {
	VALUE_SAMPLES = 0,
	VALUE_NANOSECONDS,
	VALUE_MICROSECONDS,
	VALUE_BYTES,
	VALUE_FAULTS,
	VALUE_KIND_MAX
};

/* How children are ordered when a view or export walks the tree. */
enum profile_order {
	ORDER_NAME = 0, /* byte order of names, as flamegraph.pl */
	ORDER_WEIGHT,	/* heaviest first, ties by name */
	ORDER_INSERTION /* first inserted first (flame charts) */
};

#define PROFILE_ROOT 0u
#define PROFILE_NONE UINT32_MAX

struct profile_node {
	uint32_t parent;       /* PROFILE_NONE for the root */
	uint32_t frame;	       /* frame id; 0 for the root */
	uint32_t first_child;  /* PROFILE_NONE when a leaf; newest child first */
	uint32_t next_sibling; /* PROFILE_NONE at the end */
	double total;	       /* value of this node and everything under it */
	double self;	       /* value charged to this node itself */
};

struct profile;

/* Creates an empty profile over ft (borrowed; must outlive the profile). With chart set, a
 * stack merges with a sibling only if it is the most recently added one (flame charts keep
 * time order). NULL on ENOMEM. */
struct profile *profile__new(struct frames *ft, enum value_kind kind, bool chart);
/* Frees the profile; NULL is a no-op. */
void profile__free(struct profile *p);
/* Removes every node but the root, keeping allocations for reuse. */
void profile__clear(struct profile *p);

/* Makes room for nodes nodes before a bulk load whose size is known roughly (a file's), so
 * that the tree is allocated once and, when large, in huge pages rather than grown by
 * doubling. Only memory that nodes are added to is touched. 0 or -ENOMEM. */
int profile__reserve(struct profile *p, size_t nodes);
/* Adds value to the stack frames[0..n) (root-first frame ids). 0 or -ENOMEM. */
int profile__add_stack(struct profile *p, const uint32_t *frames, size_t n, double value);
/* As profile__add_stack with a second value column (differential profiles: value is "before",
 * value2 "after"); turns the profile into a two-column one. 0 or -ENOMEM. */
int profile__add_stack2(struct profile *p, const uint32_t *frames, size_t n, double value,
			double value2);
/* Makes the profile two-column; existing values count the same in both columns. 0 or -ENOMEM. */
int profile__set_two_column(struct profile *p);
/* Returns the child of parent for frame, creating it (with zero values) if needed;
 * PROFILE_NONE on ENOMEM. Pair with profile__add_value to insert a stack step by step. */
uint32_t profile__child(struct profile *p, uint32_t parent, uint32_t frame);
/* Walks from node down the path frames[0..n), creating the children missing (with zero
 * values), each node of it into path[0..n) unless path is NULL; returns the last one (node
 * when n is 0), or PROFILE_NONE on ENOMEM. profile__child step by step, but below the first
 * new node every node is new: made without a lookup. */
uint32_t profile__child_path(struct profile *p, uint32_t node, const uint32_t *frames, size_t n,
			     uint32_t *path);
/* Returns the child of parent for frame or PROFILE_NONE, without creating it. */
uint32_t profile__find_child(const struct profile *p, uint32_t parent, uint32_t frame);
/* Charges value (and value2 when two-column) to node as self, and to it and its ancestors as
 * total. */
void profile__add_value(struct profile *p, uint32_t node, double value, double value2);

/* Adds to node's own values only, leaving totals stale: for bulk loads, which then call
 * profile__sum_totals once instead of walking up from every node. */
void profile__add_self(struct profile *p, uint32_t node, double value, double value2);
/* Recomputes every node's total (and total2) from the own values, in one pass. */
void profile__sum_totals(struct profile *p);

/* Multiplies every value by factor (decaying views). */
void profile__scale(struct profile *p, double factor);

/* Adds every stack of src (which may use another frame table) into dst. 0 or -ENOMEM. */
int profile__merge(struct profile *dst, const struct profile *src);
/* Adds src's values (first column) times factor into column 0 ("before") or 1 ("after") of
 * dst, which becomes two-column: a differential profile from two profiles (a factor other
 * than 1 normalizes one side, e.g. to the other's duration). 0, -EINVAL (a column other than
 * 0 or 1, a factor negative or not finite) or -ENOMEM. */
int profile__merge_column(struct profile *dst, const struct profile *src, int column,
			  double factor);
/* Returns a new profile holding only nodes whose total >= min_total (their values unchanged,
 * so parents keep the weight of pruned children as the gap). NULL on ENOMEM. */
struct profile *profile__pruned(const struct profile *p, double min_total);

/* Node access; valid until the next insertion. */
const struct profile_node *profile__node(const struct profile *p, uint32_t id);
uint32_t profile__node_count(const struct profile *p);
/* Second column (value2) totals and selfs; 0 unless two-column. */
double profile__total2(const struct profile *p, uint32_t id);
double profile__self2(const struct profile *p, uint32_t id);
bool profile__two_column(const struct profile *p);
/* Total value of the whole profile (the root's total). */
double profile__total(const struct profile *p);
enum value_kind profile__kind(const struct profile *p);
bool profile__is_chart(const struct profile *p);
struct frames *profile__frames(const struct profile *p);
/* Depth of the deepest node (root = 0). */
uint32_t profile__max_depth(const struct profile *p);

/* Fills out[] (capacity profile__child_count) with node's children in the given order and
 * returns how many there are. */
size_t profile__children(const struct profile *p, uint32_t node, enum profile_order order,
			 uint32_t *out);
size_t profile__child_count(const struct profile *p, uint32_t node);
/* Calls fn(ctx, frames, depth, self, self2) for every node with non-zero self (or self2),
 * depth-first in the given order; frames is root-first, excluding the root. A non-zero
 * return from fn stops the walk and is returned. */
typedef int (*profile_stack_fn)(void *ctx, const uint32_t *frames, size_t depth, double self,
				double self2);
int profile__for_each_stack(const struct profile *p, enum profile_order order,
			    profile_stack_fn fn, void *ctx);
/* Bytes of memory held (nodes and index). */
size_t profile__mem(const struct profile *p);

/* Short name of a value kind ("samples", "ns", "us", "bytes", "faults") and its parse. */
const char *value_kind_str(enum value_kind kind);
int value_kind_parse(const char *s);

#endif
