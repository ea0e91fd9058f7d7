/* `galatop record -o FILE.gtop`: every family the session recorded in one snapshot
 * (docs/snapshot.md): the stack profiles with their per-second history, the thread timeline,
 * the L7 tables and the SLI series. */
#include <stdio.h>

#include "cli.h"
#include "record.h"
#include "engine/history.h"
#include "engine/l7_capture.h"
#include "engine/session.h"
#include "engine/tl_capture.h"
#include "export/snapshot.h"
#include "model/timeline.h"
#include "util/clock.h"

/* What the snapshot's notes say: "galatop record" for stack profiles alone, else the types. */
static void notes_of(const struct record_opts *o, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "galatop record"), k = 0;

	if (record_families(o) == RECORD_FAMILY_STACKS)
		return;
	for_each_stack_type(t)
		if ((o->types & stack_types[t].probe) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", k++ ? "," : " --type ",
					      stack_types[t].name);
	if ((o->types & PROBE_THREADS) && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s", k++ ? ",threads" : " --type threads");
	if ((o->types & RECORD_TYPE_L7) && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s", k++ ? ",l7" : " --type l7");
	if (o->sli && n < len)
		snprintf(buf + n, len - n, "%s", k ? ",sli" : " --type sli");
}

int record_gtop_write(struct session *s, const char *path, double start_unix, double secs)
{
	struct timeline *tl = s->tl ? tl_capture__timeline(s->tl) : NULL;
	struct snapshot_build b;
	struct snapshot_kv mindur_kv;
	char err[512], mindur[32], notes[128];

	notes_of(s->o, notes, sizeof(notes));
	/* The history's time 0 is the snapshot's start, so that ranges count from it. */
	snapshot_build_init(&b, true, notes, s->hist ? s->hist->wall0 : start_unix, clock_wall_s());
	for_each_stack_type(t)
		if (s->probes && (s->o->types & stack_types[t].probe))
			snapshot_build_stack(&b, t, collector__profile(s->col, t),
					     s->hist ? s->hist->ring[t] : NULL, true, s->o->freq);
	if (tl) {
		snprintf(mindur, sizeof(mindur), "%llu",
			 (unsigned long long)(timeline__min_dur(tl) / 1000));
		mindur_kv = (struct snapshot_kv){ "min_dur_us", mindur };
		snapshot_build_probe(&b, "threads", &mindur_kv, 1);
	}
	b.sn.timeline = tl;
	if (s->l7) {
		b.sn.l7 = l7_capture__table(s->l7);
		b.sn.l7_secs = secs;
		snapshot_build_probe(&b, "l7", NULL, 0);
	}
	if (s->sli) {
		b.sn.sli = sli_collector__model(s->sli);
		snapshot_build_probe(&b, "sli", NULL, 0);
	}
	if (snapshot_write(path, &b.sn, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}
