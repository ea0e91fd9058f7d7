/* `galatop record --type threads`: the thread timeline's outputs (.json Chrome trace, .jsonl
 * gala-gopher event lines, .gtop snapshot) and its lock hints on standard error. */
#include "record_threads.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "record.h"
#include "engine/history.h"
#include "engine/session.h"
#include "engine/tl_capture.h"
#include "export/chrome_trace.h"
#include "export/snapshot.h"
#include "export/tl_jsonl.h"
#include "model/lockhint.h"
#include "util/clock.h"

#define MAX_HINTS 64

static void host_id(char *buf, size_t n)
{
	FILE *f = fopen("/etc/machine-id", "r");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* Writes the timeline to path (.json: Chrome trace, else JSON lines; NULL: standard output). */
static int write_one(struct session *s, const char *path, struct timeline *tl)
{
	const char *e = path && strrchr(path, '.') ? strrchr(path, '.') : "";
	char hid[128], hname[256] = "";
	struct tl_jsonl_opts jo = { hid, hname, s->o->min_aggr_ms * 1000000ull };
	FILE *f;
	int err;

	f = cli_open_out(path);
	if (!f)
		return 1;
	if (!strcmp(e, ".json")) {
		err = chrome_trace_write(f, tl);
	} else {
		host_id(hid, sizeof(hid));
		gethostname(hname, sizeof(hname) - 1);
		err = tl_jsonl_write(f, tl, &jo);
	}
	return cli_finish_out(f, path, err);
}

/* Prints every lock hint, one line each: "hint: deadlock: ..." / "hint: contention: ...". */
static void print_hints(const struct timeline *tl)
{
	struct tl_hint *h = calloc(MAX_HINTS, sizeof(*h));
	size_t n;

	if (!h)
		return;
	n = tl_hints(tl, h, MAX_HINTS);
	for (size_t i = 0; i < n && i < MAX_HINTS; i++)
		fprintf(stderr, "hint: %s\n", h[i].text);
	if (n > MAX_HINTS)
		fprintf(stderr, "galatop: %zu more hints not shown\n", n - MAX_HINTS);
	free(h);
}

int record_threads_write(struct session *s)
{
	struct timeline *tl;
	struct timeline_stats ts;
	struct tl_probe_stats ps;
	int ret = 0;

	if (!s->tl)
		return 0;
	tl_capture__refresh(s->tl);
	tl = tl_capture__timeline(s->tl);
	timeline__stats(tl, &ts);
	tl_capture__stats(s->tl, &ps);
	fprintf(stderr,
		"galatop: threads: %llu intervals of %zu threads, %llu shorter than --min-dur "
		"counted, %llu lost (ring buffer full), %llu dropped by --timeline-mem\n",
		(unsigned long long)ts.events, timeline__nthreads(tl),
		(unsigned long long)ps.shorter, (unsigned long long)ps.drops,
		(unsigned long long)ts.dropped);
	for (size_t i = 0; i < s->o->noutputs; i++) {
		const char *path = s->o->outputs[i];

		if ((record_output_family(s->o, path) & RECORD_FAMILY_THREADS) &&
		    strcmp(strrchr(path, '.'), ".gtop"))
			ret |= write_one(s, path, tl);
	}
	if (!s->o->noutputs && record_families(s->o) == RECORD_FAMILY_THREADS)
		ret |= write_one(s, NULL, tl); /* JSON lines on standard output */
	print_hints(tl);
	return ret;
}
