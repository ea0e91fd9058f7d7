/* Unit tests for model/stack_cap: the --max-stacks cap and the pruning of decayed nodes. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "model/frames.h"
#include "model/profile.h"
#include "model/stack_cap.h"
#include "model/strtab.h"

static uint32_t frame(struct frames *ft, const char *name, enum frame_kind kind)
{
	struct frame f = { .kind = kind };

	f.name = strtab__intern(frames__strtab(ft), name, strlen(name));
	return frames__intern(ft, &f);
}

struct count {
	size_t stacks, other;
	double other_value, proc_a;
	uint32_t other_id, a_id;
};

static int count_fn(void *ctx, const uint32_t *frames, size_t depth, double self, double self2)
{
	struct count *c = ctx;

	c->stacks++;
	if (frames[depth - 1] == c->other_id) {
		c->other++;
		c->other_value += self;
	}
	if (frames[0] == c->a_id)
		c->proc_a += self;
	return 0;
}

/* 1000 stacks over two processes, weights 1..1000; a cap of 100 keeps the 75 heaviest and
 * folds the others under each process's own [other], totals exact. */
TEST_CASE(cap_folds_rarest_into_other)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false);
	struct stack_cap cap;
	struct count c = { 0 };
	double total = 0, a_total = 0;
	char name[32];
	long folded;

	stack_cap_init(&cap, 100);
	c.a_id = frame(ft, "[1]a", FRAME_PROCESS);
	for (int i = 1; i <= 1000; i++) {
		uint32_t s[3] = { i % 2 ? c.a_id : frame(ft, "[2]b", FRAME_PROCESS),
				  frame(ft, "main", FRAME_USER), 0 };

		snprintf(name, sizeof(name), "f%d", i);
		s[2] = frame(ft, name, FRAME_USER);
		profile__add_stack(p, s, 3, i);
		total += i;
		a_total += i % 2 ? i : 0;
		/* The cap holds as stacks come in, not only at the end. */
		stack_cap_apply(&cap, p);
	}
	c.other_id = frame(ft, "[other]", FRAME_SPECIAL);
	profile__for_each_stack(p, ORDER_NAME, count_fn, &c);
	CHECK(c.stacks <= 100);
	CHECK(c.other == 2); /* one [other] per process */
	CHECK(profile__total(p) == total);
	CHECK(c.proc_a == a_total);
	CHECK(cap.folded >= 900 && cap.folds >= 1);
	/* The heaviest stack is still there by name. */
	CHECK(profile__find_child(p, PROFILE_ROOT, c.a_id) != PROFILE_NONE);
	folded = stack_cap_apply(&cap, p);
	CHECK(folded == 0);
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
}

/* More processes than the cap: their [other] stacks go into one root [other]. */
TEST_CASE(cap_with_many_processes)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false);
	struct stack_cap cap;
	struct count c = { 0 };
	char name[32];

	stack_cap_init(&cap, 50);
	for (int i = 1; i <= 2000; i++) {
		uint32_t s[2];

		snprintf(name, sizeof(name), "[%d]p", i);
		s[0] = frame(ft, name, FRAME_PROCESS);
		s[1] = frame(ft, "work", FRAME_USER);
		profile__add_stack(p, s, 2, 1 + i % 7);
		stack_cap_apply(&cap, p);
	}
	c.other_id = frame(ft, "[other]", FRAME_SPECIAL);
	profile__for_each_stack(p, ORDER_NAME, count_fn, &c);
	CHECK(c.stacks <= 50 + 1);
	CHECK(profile__node_count(p) < 200);
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
}

/* Decayed nodes go once the tree has grown by an eighth; heavy ones stay; the total barely moves. */
TEST_CASE(decayed_nodes_are_dropped)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false);
	struct stack_cap cap;
	uint32_t hot = frame(ft, "hot", FRAME_USER);
	char name[32];

	stack_cap_init(&cap, 0);
	cap.next_check = 1000;
	for (int round = 0; round < 20; round++) {
		profile__scale(p, 0.5);
		profile__add_stack(p, &hot, 1, 1000);
		for (int i = 0; i < 500; i++) {
			uint32_t f;

			snprintf(name, sizeof(name), "r%d_%d", round, i);
			f = frame(ft, name, FRAME_USER);
			profile__add_stack(p, &f, 1, 1);
		}
		stack_cap_decayed(&cap, p, profile__total(p) * 1e-3);
	}
	/* Without pruning 10001 nodes; rounds older than ~10 half-lives fall below the floor. */
	CHECK(profile__node_count(p) < 6000);
	CHECK(profile__find_child(p, PROFILE_ROOT, hot) != PROFILE_NONE);
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
}

int main(void)
{
	RUN(cap_folds_rarest_into_other);
	RUN(cap_with_many_processes);
	RUN(decayed_nodes_are_dropped);
	HARNESS_EXIT();
}
