/* `galatop record -o FILE.gtop`: the session's profiles, their per-second history and the
 * thread timeline in one snapshot (docs/snapshot.md). */
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "engine/history.h"
#include "export/snapshot.h"
#include "model/timeline.h"
#include "util/clock.h"

int record_gtop_write(struct session *s, const char *path, struct timeline *tl,
		      double start_unix)
{
	static const unsigned bits[HISTORY_TYPES] = { PROBE_ONCPU, PROBE_OFFCPU, PROBE_MEM };
	struct snapshot_profile profs[HISTORY_TYPES];
	struct snapshot_probe probes[HISTORY_TYPES + 1];
	struct snapshot_kv params[2];
	struct snapshot sn = { 0 };
	char host[256] = "", err[512], mindur[32], hz[32];
	struct utsname un;

	snprintf(hz, sizeof(hz), "%d", s->o->freq);
	for (int i = 0; i < HISTORY_TYPES; i++) {
		enum gt_event_type t = history_type(i);
		bool oncpu = t == GT_EV_ONCPU;

		if (!s->probes || !(s->o->types & bits[i]))
			continue;
		profs[sn.nprofiles++] = (struct snapshot_profile){
			collector_type_name(t), collector_type_name(t), collector__profile(s->col, t),
			s->hist ? s->hist->ring[i] : NULL
		};
		params[0] = (struct snapshot_kv){ "hz", hz };
		probes[sn.meta.nprobes++] = (struct snapshot_probe){ collector_type_name(t),
								     oncpu ? params : NULL, oncpu };
	}
	if (tl) {
		snprintf(mindur, sizeof(mindur), "%llu",
			 (unsigned long long)(timeline__min_dur(tl) / 1000));
		params[1] = (struct snapshot_kv){ "min_dur_us", mindur };
		probes[sn.meta.nprobes++] = (struct snapshot_probe){ "threads", &params[1], 1 };
	}
	sn.profiles = profs;
	sn.timeline = tl;
	gethostname(host, sizeof(host) - 1);
	sn.meta.host = host;
	if (uname(&un) == 0)
		sn.meta.kernel = un.release;
	/* The history's time 0 is the snapshot's start, so that ranges count from it. */
	sn.meta.start = s->hist ? s->hist->wall0 : start_unix;
	sn.meta.end = clock_wall_s();
	sn.meta.version = GALATOP_VERSION;
	sn.meta.notes = tl ? "galatop record --type threads" : "galatop record";
	sn.meta.probes = probes;
	if (snapshot_write(path, &sn, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}
