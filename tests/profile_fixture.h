/* A profile over its own string and frame tables, and a way to add "a;b;c" stacks to it: what
 * the model and export unit tests build their trees with. Include after harness.h. */
#ifndef GALATOP_TESTS_PROFILE_FIXTURE_H
#define GALATOP_TESTS_PROFILE_FIXTURE_H

#include "model/profile.h"

struct fixture {
	struct strtab *st;
	struct frames *ft;
	struct profile *p;
};

static inline void fx_init(struct fixture *fx, bool chart)
{
	fx->st = strtab__new();
	fx->ft = frames__new(fx->st);
	fx->p = profile__new(fx->ft, VALUE_SAMPLES, chart);
}

static inline void fx_free(struct fixture *fx)
{
	profile__free(fx->p);
	frames__free(fx->ft);
	strtab__free(fx->st);
}

/* Adds to p (over ft) the stack "a;b;c" given as len raw bytes (names may hold NUL) with one
 * value, or two when value2 >= 0. */
static inline void fx_add_stack(struct frames *ft, struct profile *p, const char *stack, size_t len,
			 double value, double value2)
{
	uint32_t ids[64];
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= len && n < 64; i++) {
		if (i < len && stack[i] != ';')
			continue;
		ids[n++] = frames__intern_name(ft, stack + start, i - start);
		start = i + 1;
	}
	if (value2 < 0)
		CHECK(profile__add_stack(p, ids, n, value) == 0);
	else
		CHECK(profile__add_stack2(p, ids, n, value, value2) == 0);
}

/* A profile over ft with identity roots of every kind: processes, a container, a kernel and a
 * JIT frame, a perf-map thread root (15 samples), for the filter and view tests. */
static inline struct profile *fx_identities(struct frames *ft)
{
	static const struct {
		const char *stack;
		double v;
	} stacks[] = {
		{ "[10]nginx;main;work;read_[k]", 4 },
		{ "[10]nginx;main;work", 2 },
		{ "[20]redis;main;rec;rec;rec", 3 },
		{ "[Con]0123456789abcdef0123;[30]java;run_[j]", 1 },
		{ "perf-40/41;loop", 5 },
	};
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false);

	for (size_t i = 0; p && i < sizeof(stacks) / sizeof(stacks[0]); i++)
		fx_add_stack(ft, p, stacks[i].stack, strlen(stacks[i].stack), stacks[i].v, -1);
	return p;
}

/* Total of the node at path "a;b" in p (over ft), 0 when absent. */
static inline double fx_total_at(struct frames *ft, const struct profile *p, const char *path)
{
	uint32_t node = PROFILE_ROOT;
	const char *s = path;

	while (*s) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		node = profile__find_child(p, node, frames__intern_name(ft, s, len));
		if (node == PROFILE_NONE)
			return 0;
		s += len + (e ? 1 : 0);
	}
	return profile__node(p, node)->total;
}

/* A new profile over ft holding value samples of stack; the caller frees it. */
static inline struct profile *fx_one(struct frames *ft, const char *stack, double value)
{
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false);

	fx_add_stack(ft, p, stack, strlen(stack), value, -1);
	return p;
}

#endif
