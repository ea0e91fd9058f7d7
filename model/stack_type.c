/* The stack-type table: see stack_type.h. */
#include "stack_type.h"

#include <string.h>

#define STACK_TYPE_INFO(id, nm, rec, bit, rate, knd, down, ev, ttl, pal)                           \
	[STACK_##id] = { .name = nm, .record = rec, .probe = bit, .rate_slot = rate, .kind = knd,  \
			 .can_go_down = down, .event = ev, .title = ttl, .palette = pal },
const struct stack_type_info stack_types[STACK_TYPES] = { STACK_TYPE_TABLE(STACK_TYPE_INFO) };

#define STACK_TYPE_NAME(id, nm, ...) nm ", "
/* The names joined at compile time; the last ", " is cut where it is handed out. */
static const char names_list[] = STACK_TYPE_TABLE(STACK_TYPE_NAME);
static char names_buf[sizeof(names_list)];

const char *stack_type_name(int t)
{
	return t >= 0 && t < STACK_TYPES ? stack_types[t].name : "?";
}

int stack_type_parse(const char *s)
{
	for_each_stack_type(t)
		if (!strcmp(s, stack_types[t].name))
			return t;
	return -1;
}

int stack_type_of_record(unsigned record)
{
	for_each_stack_type(t)
		if (stack_types[t].record == record)
			return t;
	return -1;
}

int stack_type_of_probe(unsigned probe)
{
	for_each_stack_type(t)
		if (stack_types[t].probe == probe)
			return t;
	return -1;
}

unsigned stack_type_probes(void)
{
	unsigned m = 0;

	for_each_stack_type(t)
		m |= stack_types[t].probe;
	return m;
}

const char *stack_type_list(void)
{
	if (!names_buf[0]) {
		memcpy(names_buf, names_list, sizeof(names_list));
		names_buf[sizeof(names_list) - 3] = '\0';
	}
	return names_buf;
}
