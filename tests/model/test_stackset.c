/* Unit tests for model/stackset: the two-column stack union of diff and collapse. */
#include <stdint.h>

#include "harness.h"
#include "model/stackset.h"

TEST_CASE(stackset_union_two_columns_sorted)
{
	struct stack_set *s = stack_set__new();
	uint32_t *ids;
	size_t len;
	uint64_t c;

	CHECK(s && stack_set__count(s) == 0);
	CHECK(stack_set__add_value(s, 0, "b;x", 3, 2) == 0);
	CHECK(stack_set__add_value(s, 1, "a;y", 3, 1.5) == 0);
	CHECK(stack_set__add_value(s, 1, "b;x", 3, 4) == 0);
	CHECK(stack_set__add_value(s, 0, "b;x", 3, 1) == 0);
	CHECK(stack_set__count(s) == 2);
	ids = stack_set__sorted(s);
	CHECK(ids != NULL);
	if (ids) {
		CHECK(!memcmp(stack_set__stack(s, ids[0], &len), "a;y", 3) && len == 3);
		CHECK_NUM(stack_set__value(s, 0, ids[0]), 0);
		CHECK_NUM(stack_set__value(s, 1, ids[0]), 1.5);
		CHECK_NUM(stack_set__value(s, 0, ids[1]), 3);
		CHECK_NUM(stack_set__value(s, 1, ids[1]), 4);
	}
	free(ids);
	CHECK_NUM(stack_set__total(s, 0), 3);
	CHECK_NUM(stack_set__total(s, 1), 5.5);
	/* The empty stack is a stack once added. */
	CHECK(stack_set__add_count(s, 0, "", 0, 1) == 0 && stack_set__count(s) == 3);
	CHECK(stack_set__exact(s, 0, 0, &c) && c == 1);
	stack_set__free(s);
	stack_set__free(NULL);
}

TEST_CASE(stackset_counts_exact_then_float)
{
	struct stack_set *s = stack_set__new();
	uint64_t c;

	CHECK(stack_set__add_count(s, 0, "a", 1, UINT64_MAX - 1) == 0);
	CHECK(stack_set__add_count(s, 0, "a", 1, 1) == 0);
	CHECK(stack_set__exact(s, 0, 1, &c) && c == UINT64_MAX);
	/* Past 2^64 - 1 the sum goes on as a double, as perl's does. */
	CHECK(stack_set__add_count(s, 0, "a", 1, 10) == 0);
	CHECK(!stack_set__exact(s, 0, 1, &c));
	CHECK(stack_set__value(s, 0, 1) > 1.8e19);
	/* Many stacks grow the columns. */
	for (int i = 0; i < 10000; i++) {
		char b[16];
		int n = snprintf(b, sizeof(b), "s%d", i);

		CHECK(stack_set__add_count(s, i & 1, b, (size_t)n, 1) == 0);
	}
	CHECK(stack_set__count(s) == 10001);
	CHECK_NUM(stack_set__total(s, 1), 5000);
	stack_set__free(s);
}

int main(void)
{
	RUN(stackset_union_two_columns_sorted);
	RUN(stackset_counts_exact_then_float);
	HARNESS_EXIT();
}
