/* Unit tests for model/stack_type: the table every stack-type user reads is coherent (the
 * kernel's record types and probe bits are checked against it at compile time in bpf/probes.c). */
#include "harness.h"
#include "model/stack_type.h"

TEST_CASE(stack_types_are_distinct_and_found_by_each_key)
{
	unsigned all = 0;

	for_each_stack_type(t) {
		const struct stack_type_info *i = &stack_types[t];

		CHECK(i->name && i->name[0] && i->event && i->title);
		CHECK(stack_type_parse(i->name) == t);
		CHECK_STR(stack_type_name(t), i->name);
		CHECK(stack_type_of_record(i->record) == t);
		CHECK(stack_type_of_probe(i->probe) == t);
		/* One probe bit each, none shared. */
		CHECK(i->probe && !(i->probe & (i->probe - 1)) && !(all & i->probe));
		all |= i->probe;
		CHECK(i->kind >= 0 && i->kind < VALUE_KIND_MAX);
	}
	CHECK(stack_type_probes() == all);
	CHECK(stack_type_parse("threads") == -1 && stack_type_parse("") == -1);
	CHECK(stack_type_of_record(0) == -1 && stack_type_of_probe(0) == -1);
	CHECK(stack_type_of_probe(all) == (STACK_TYPES == 1 ? 0 : -1));
	CHECK_STR(stack_type_name(STACK_TYPES), "?");
	CHECK_STR(stack_type_name(-1), "?");
}

TEST_CASE(stack_types_are_the_ones_recorded_so_far)
{
	/* What snapshots, file names and --type spell; old snapshots keep opening by them. */
	CHECK_STR(stack_type_name(STACK_ONCPU), "oncpu");
	CHECK_STR(stack_type_name(STACK_OFFCPU), "offcpu");
	CHECK_STR(stack_type_name(STACK_MEM), "mem");
	CHECK_STR(stack_type_name(STACK_LEAK), "leak");
	CHECK_STR(stack_type_name(STACK_GROWTH), "growth");
	CHECK(stack_types[STACK_ONCPU].kind == VALUE_SAMPLES);
	CHECK(stack_types[STACK_OFFCPU].kind == VALUE_MICROSECONDS);
	CHECK(stack_types[STACK_MEM].kind == VALUE_FAULTS);
	CHECK(stack_types[STACK_LEAK].kind == VALUE_BYTES);
	CHECK(stack_types[STACK_GROWTH].kind == VALUE_BYTES);
	/* Only the memory held types' values go down: a free (an unmap) takes back its
	 * allocation (mapping). */
	for_each_stack_type(t)
		CHECK(stack_types[t].can_go_down == (t == STACK_LEAK || t == STACK_GROWTH));
	/* Event sampling (--event-rate) has a slot for each type not sampled at a frequency or
	 * by a sampler of its own (leak: by bytes) or taking every event (growth). */
	for_each_stack_type(t)
		CHECK((stack_types[t].rate_slot < 0) ==
		      (stack_types[t].kind == VALUE_SAMPLES || stack_types[t].can_go_down));
}

TEST_CASE(stack_type_list_names_them_all_in_order)
{
	char want[256] = "";

	for_each_stack_type(t)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", t ? ", " : "",
			 stack_types[t].name);
	CHECK_STR(stack_type_list(), want);
	CHECK_STR(stack_type_list(), "oncpu, offcpu, mem, leak, growth");
}

int main(void)
{
	RUN(stack_types_are_distinct_and_found_by_each_key);
	RUN(stack_types_are_the_ones_recorded_so_far);
	RUN(stack_type_list_names_them_all_in_order);
	HARNESS_EXIT();
}
