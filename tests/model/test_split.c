/* Unit tests for model/split: one profile per process, every stack filed once. */
#include <stdint.h>

#include "harness.h"
#include "profile_fixture.h"
#include "model/frames.h"
#include "model/split.h"
#include "model/strtab.h"

static const struct profile_part *part_named(struct frames *ft, const struct profile_part *parts,
					     size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (parts[i].root && !strcmp(frames__name(ft, parts[i].root), name))
			return &parts[i];
	return NULL;
}

TEST_CASE(split_files_stacks_under_their_process)
{
	struct fixture fx;
	struct profile_part *parts;
	size_t n;

	fx_init(&fx, false);
	fx_add_stack(fx.ft, fx.p, "[1]nginx;main;a", 15, 5, -1);
	fx_add_stack(fx.ft, fx.p, "[2]redis;main;b", 15, 3, -1);
	fx_add_stack(fx.ft, fx.p, "[1]nginx;main;c", 15, 2, -1);
	/* A container frame before the process frame: the process still decides. */
	fx_add_stack(fx.ft, fx.p, "[Con]web;[3]php;run", 19, 4, -1);
	/* No process frame: filed under the first frame. */
	fx_add_stack(fx.ft, fx.p, "plain;q", 7, 1, -1);
	CHECK(profile_split_by_process(fx.p, &parts, &n) == 0);
	CHECK(n == 4);
	if (n == 4) {
		const struct profile_part *a = part_named(fx.ft, parts, n, "[1]nginx");
		const struct profile_part *b = part_named(fx.ft, parts, n, "[2]redis");
		const struct profile_part *c = part_named(fx.ft, parts, n, "[3]php");
		const struct profile_part *d = part_named(fx.ft, parts, n, "plain");

		CHECK(a && b && c && d);
		if (a && b && c && d) {
			CHECK_NUM(profile__total(a->p), 7);
			CHECK_NUM(profile__total(b->p), 3);
			CHECK_NUM(profile__total(c->p), 4);
			CHECK_NUM(profile__total(d->p), 1);
			/* Stacks keep their whole path, container frame included. */
			CHECK(profile__max_depth(c->p) == 3);
		}
	}
	profile_parts_free(parts, n);
	profile_parts_free(NULL, 0);
	fx_free(&fx);
}

/* Many processes: every one gets its part, in one pass (this was quadratic). */
TEST_CASE(split_many_processes)
{
	struct fixture fx;
	struct profile_part *parts;
	char s[64];
	size_t n;
	double sum = 0;

	fx_init(&fx, false);
	for (int i = 0; i < 20000; i++) {
		int len = snprintf(s, sizeof(s), "[%d]w;main;f%d", i + 10, i % 7);

		fx_add_stack(fx.ft, fx.p, s, (size_t)len, i % 3 + 1, -1);
	}
	CHECK(profile_split_by_process(fx.p, &parts, &n) == 0);
	CHECK(n == 20000);
	for (size_t i = 0; i < n; i++)
		sum += profile__total(parts[i].p);
	CHECK_NUM(sum, profile__total(fx.p));
	profile_parts_free(parts, n);
	fx_free(&fx);
}

int main(void)
{
	RUN(split_files_stacks_under_their_process);
	RUN(split_many_processes);
	HARNESS_EXIT();
}
