/* Unit tests for model/growth: the anonymous regions behind the growth profile. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model/growth.h"

#define MiB (1ull << 20)

static struct strtab *st;
static struct frames *ft;

/* The stack root;name (root-first frame ids) into f; its length. */
static size_t stack_of(struct frames *t, const char *name, uint32_t *f)
{
	f[0] = frames__intern_name(t, "[1]prog", 7);
	f[1] = frames__intern_name(t, name, strlen(name));
	return 2;
}

/* The value of the leaf named name under the root, 0 when absent. */
static double value_of(const struct profile *p, const char *name)
{
	uint32_t f[2], node;

	stack_of(profile__frames(p), name, f);
	node = profile__find_child(p, PROFILE_ROOT, f[0]);
	if (node != PROFILE_NONE)
		node = profile__find_child(p, node, f[1]);
	return node == PROFILE_NONE ? 0 : profile__node(p, node)->total;
}

TEST_CASE(growth_unmaps_take_back_from_the_stacks_that_mapped)
{
	struct growth_set *s = growth_set__new();
	struct profile *p = profile__new(ft, VALUE_BYTES, false);
	struct growth_stats gs;
	uint32_t f[2];
	size_t n;

	CHECK(s && p);
	n = stack_of(ft, "map_a", f);
	CHECK_NUM(growth_set__map(s, 1, 0x10000000, 16 * MiB, f, n, p), 0);
	n = stack_of(ft, "brk_b", f);
	CHECK_NUM(growth_set__map(s, 1, 0x40000000, 4 * MiB, f, n, p), 0);
	/* The same addresses in another process are other regions. */
	n = stack_of(ft, "other", f);
	CHECK_NUM(growth_set__map(s, 2, 0x10000000, MiB, f, n, p), 0);
	CHECK_NUM(value_of(p, "map_a"), 16 * MiB);
	/* The tail of a region, then its head, then a hole in its middle (a split). */
	CHECK_NUM(growth_set__unmap(s, 1, 0x10000000 + 12 * MiB, 4 * MiB, p), 4 * MiB);
	CHECK_NUM(growth_set__unmap(s, 1, 0x10000000, MiB, p), MiB);
	CHECK_NUM(growth_set__unmap(s, 1, 0x10000000 + 4 * MiB, MiB, p), MiB);
	CHECK_NUM(value_of(p, "map_a"), 10 * MiB);
	growth_set__stats(s, &gs);
	CHECK(gs.regions == 4 && gs.bytes == 15 * MiB && gs.maps == 3 && gs.unmaps == 3);
	/* An unmap over both pieces and the gap between them, and nothing known. */
	CHECK_NUM(growth_set__unmap(s, 1, 0x10000000 + 2 * MiB, 6 * MiB, p), 5 * MiB);
	CHECK_NUM(growth_set__unmap(s, 1, 0x90000000, MiB, p), 0);
	CHECK_NUM(value_of(p, "map_a"), 5 * MiB);
	/* A brk moving down takes the end of its region. */
	CHECK_NUM(growth_set__unmap(s, 1, 0x40000000 + 3 * MiB, MiB, p), MiB);
	CHECK_NUM(value_of(p, "brk_b"), 3 * MiB);
	/* A mapping over memory held (MAP_FIXED) replaces it. */
	n = stack_of(ft, "fixed", f);
	CHECK_NUM(growth_set__map(s, 1, 0x40000000 + 2 * MiB, 2 * MiB, f, n, p), MiB);
	CHECK_NUM(value_of(p, "brk_b"), 2 * MiB);
	CHECK_NUM(value_of(p, "fixed"), 2 * MiB);
	/* A profile emptied meanwhile (a history slice) gets the take-back as a negative value. */
	profile__clear(p);
	CHECK_NUM(growth_set__unmap(s, 1, 0x40000000, MiB, p), MiB);
	CHECK_NUM(value_of(p, "brk_b"), -(double)MiB);
	/* The process's exit takes everything it held; the other keeps its own. */
	CHECK_NUM(growth_set__forget_pid(s, 1, p), 5 * MiB + MiB + 2 * MiB);
	growth_set__stats(s, &gs);
	CHECK(gs.regions == 1 && gs.bytes == MiB);
	CHECK(growth_set__mem(s) > 0);
	profile__free(p);
	growth_set__free(s);
	growth_set__free(NULL);
}

TEST_CASE(growth_moves_its_stacks_to_a_renewed_frame_table)
{
	struct growth_set *s = growth_set__new();
	struct strtab *st2 = strtab__new();
	struct frames *ft2 = frames__new(st2);
	struct profile *p;
	uint32_t f[2];
	size_t n;

	CHECK(s && ft2);
	stack_of(ft2, "pad", f); /* the new table's ids differ from the old's */
	n = stack_of(ft, "map_a", f);
	CHECK_NUM(growth_set__map(s, 1, 0x1000, 8192, f, n, NULL), 0);
	CHECK(growth_set__move_frames(s, ft2, ft) == 0);
	p = profile__new(ft2, VALUE_BYTES, false);
	CHECK_NUM(growth_set__unmap(s, 1, 0x1000, 4096, p), 4096);
	CHECK_NUM(value_of(p, "map_a"), -4096.0);
	profile__free(p);
	growth_set__free(s);
	frames__free(ft2);
	strtab__free(st2);
}

int main(void)
{
	st = strtab__new();
	ft = frames__new(st);
	RUN(growth_unmaps_take_back_from_the_stacks_that_mapped);
	RUN(growth_moves_its_stacks_to_a_renewed_frame_table);
	frames__free(ft);
	strtab__free(st);
	HARNESS_EXIT();
}
