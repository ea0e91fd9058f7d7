/* Grouping of stacks by who ran them: see group.h. */
#include "group.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[GROUP_MAX] = {
	[GROUP_PROCESS] = "process", [GROUP_THREAD] = "thread",
	[GROUP_COMMAND] = "command", [GROUP_NONE] = "none",
};

const char *group_by_str(enum group_by g)
{
	return (unsigned)g < GROUP_MAX ? names[g] : "?";
}

int group_by_parse(const char *s)
{
	for (int g = 0; g < GROUP_MAX; g++)
		if (!strcmp(s, names[g]))
			return g;
	return -1;
}

int group_process_name(enum group_by g, uint32_t pid, const char *comm, char *buf, size_t cap)
{
	if (g == GROUP_COMMAND)
		return snprintf(buf, cap, "%s", comm);
	return snprintf(buf, cap, "[%u]%s", pid, comm);
}

/* "comm" of a "[PID]comm" name (the whole name when it has no [digits] prefix). */
static uint32_t command_frame(struct frames *ft, uint32_t id)
{
	const char *name = frames__name(ft, id);
	size_t len = frames__name_len(ft, id), i = 1;
	struct frame f = { .kind = FRAME_PROCESS };

	if (len > 2 && name[0] == '[') {
		while (i < len && name[i] >= '0' && name[i] <= '9')
			i++;
		if (i > 1 && i < len && name[i] == ']') {
			name += i + 1;
			len -= i + 1;
		}
	}
	char copy[512]; /* the strtab may move its text while interning */

	if (!len || len >= sizeof(copy))
		return id;
	memcpy(copy, name, len);
	f.name = strtab__intern(frames__strtab(ft), copy, len);
	if (f.name == (uint32_t)-1)
		return (uint32_t)-1;
	return frames__intern(ft, &f);
}

long group_stack(struct frames *ft, enum group_by g, const uint32_t *frames, size_t depth,
		 uint32_t *out)
{
	size_t n = 0, i = 0;
	bool in_process = false;

	for (; i < depth; i++) {
		uint32_t id = frames[i];
		unsigned kind = frames__get(ft, id)->kind;
		bool thread = kind == FRAME_THREAD || (kind == FRAME_PROCESS && in_process);

		if (kind != FRAME_POD && kind != FRAME_CONTAINER && kind != FRAME_PROCESS &&
		    kind != FRAME_THREAD)
			break;
		in_process = kind == FRAME_PROCESS || kind == FRAME_THREAD;
		if (g == GROUP_NONE || (thread && g != GROUP_THREAD))
			continue;
		if (g == GROUP_COMMAND && kind == FRAME_PROCESS) {
			id = command_frame(ft, id);
			if (id == (uint32_t)-1)
				return -ENOMEM;
		}
		out[n++] = id;
	}
	for (; i < depth; i++)
		out[n++] = frames[i];
	return (long)n;
}
