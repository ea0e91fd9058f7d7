/* libFuzzer target for the snapshot's "timeline" section (export/snapshot_timeline): the input
 * is the section's JSON value. What is accepted must be a consistent timeline: every interval
 * ordered and of a known kind, every string id in the table, the hints and the Chrome trace
 * computable from it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/chrome_trace.h"
#include "export/jsonio.h"
#include "export/snapshot_timeline.h"
#include "model/lockhint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	struct json_err e = { err, sizeof(err), "fuzz", false };
	struct json_in in;
	struct timeline *tl = NULL;
	struct tl_hint h[8];
	FILE *null;

	json_in__init(&in, (const char *)data, size, &e);
	if (snapshot_timeline_read(&in, &tl) == 0) {
		uint32_t nstr = strtab__count(timeline__strtab_c(tl));

		for (size_t i = 0; i < timeline__nthreads(tl); i++) {
			size_t n;
			const struct tl_event *ev = timeline__lane(tl, i, &n);

			for (size_t k = 0; k < n; k++)
				if (ev[k].start > ev[k].end || ev[k].kind >= TL_KIND_MAX ||
				    ev[k].name >= nstr || ev[k].attr >= nstr || ev[k].stack >= nstr ||
				    (k && ev[k - 1].start > ev[k].start))
					abort();
		}
		tl_hints(tl, h, 8);
		null = fopen("/dev/null", "w");
		if (null) {
			chrome_trace_write(null, tl);
			fclose(null);
		}
	} else if (!memchr(err, '\0', sizeof(err)) || (err[0] && strncmp(err, "fuzz: ", 6))) {
		abort(); /* every failure explains itself */
	}
	timeline__free(tl);
	json_in__fini(&in);
	return 0;
}
