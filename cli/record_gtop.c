/* `galatop record -o FILE.gtop`: the session's profiles, their per-second history and the
 * thread timeline in one snapshot (docs/snapshot.md). */
#include <stdio.h>

#include "cli.h"
#include "history.h"
#include "export/snapshot.h"
#include "model/timeline.h"
#include "util/clock.h"

int record_gtop_write(struct session *s, const char *path, struct timeline *tl,
		      double start_unix)
{
	struct snapshot_build b;
	struct snapshot_kv mindur_kv;
	char err[512], mindur[32];

	/* The history's time 0 is the snapshot's start, so that ranges count from it. */
	snapshot_build_init(&b, true, tl ? "galatop record --type threads" : "galatop record",
			    s->hist ? s->hist->wall0 : start_unix, clock_wall_s());
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
	if (snapshot_write(path, &b.sn, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}
