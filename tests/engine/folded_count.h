/* For the engine tests: the samples of a profile's stacks that pass through a frame. */
#ifndef GALATOP_TESTS_ENGINE_FOLDED_COUNT_H
#define GALATOP_TESTS_ENGINE_FOLDED_COUNT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/folded.h"

/* The summed counts of p's folded lines that contain word (a frame, or "a;b" for a frame
 * called from another); -1 on ENOMEM. */
static long folded_count(const struct profile *p, const char *word)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	long n = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -1;
	if (folded_write(f, p)) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, word))
			n += strtol(strrchr(line, ' ') + 1, NULL, 10);
	free(buf);
	return n;
}

#endif
