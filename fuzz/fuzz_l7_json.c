/* libFuzzer target for l7_json_load: the L7 tables of .json files and .gtop "l7" sections.
 * Whatever the bytes, loading either succeeds or gives one line, and what loaded writes back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/l7_tables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct l7_table *t = l7_table__new();
	char err[512];
	double secs;

	if (!t)
		return 0;
	if (l7_json_load((const char *)data, size, "fuzz", t, &secs, err, sizeof(err)) == 0) {
		char *text = l7_json_text(t, secs);
		FILE *f = fopen("/dev/null", "w");

		free(text);
		if (f) {
			l7_prom_write(f, t, secs);
			l7_text_write(f, t, secs);
			fclose(f);
		}
	} else if (strchr(err, '\n')) {
		abort();
	}
	l7_table__free(t);
	return 0;
}
