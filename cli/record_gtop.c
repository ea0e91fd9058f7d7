/* `galatop record -o FILE.gtop`: every family the session recorded in one snapshot
 * (docs/snapshot.md): the stack profiles with their per-second history, the thread timeline,
 * the L7 tables and the SLI series. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

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
	static const struct {
		unsigned bit;
		const char *name;
	} types[] = { { PROBE_ONCPU, "oncpu" },	   { PROBE_OFFCPU, "offcpu" },
		      { PROBE_MEM, "mem" },	   { PROBE_THREADS, "threads" },
		      { RECORD_TYPE_L7, "l7" } };
	size_t n = (size_t)snprintf(buf, len, "galatop record");

	if (record_families(o) == RECORD_FAMILY_STACKS)
		return;
	for (size_t i = 0, k = 0; i < sizeof(types) / sizeof(types[0]) && n < len; i++)
		if (o->types & types[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", k++ ? "," : " --type ",
					      types[i].name);
	if (o->sli && n < len)
		snprintf(buf + n, len - n, "%s", o->types ? ",sli" : " --type sli");
}

int record_gtop_write(struct session *s, const char *path, double start_unix, double secs)
{
	static const unsigned bits[HISTORY_TYPES] = { PROBE_ONCPU, PROBE_OFFCPU, PROBE_MEM };
	struct snapshot_profile profs[HISTORY_TYPES];
	struct snapshot_probe probes[HISTORY_TYPES + 3];
	struct snapshot_kv params[2];
	struct snapshot sn = { 0 };
	struct timeline *tl = s->tl ? tl_capture__timeline(s->tl) : NULL;
	char host[256] = "", err[512], mindur[32], hz[32], notes[128];
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
	if (s->l7) {
		sn.l7 = l7_capture__table(s->l7);
		sn.l7_secs = secs;
		probes[sn.meta.nprobes++] = (struct snapshot_probe){ "l7", NULL, 0 };
	}
	if (s->sli) {
		sn.sli = sli_collector__model(s->sli);
		probes[sn.meta.nprobes++] = (struct snapshot_probe){ "sli", NULL, 0 };
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
	notes_of(s->o, notes, sizeof(notes));
	sn.meta.notes = notes;
	sn.meta.probes = probes;
	if (snapshot_write(path, &sn, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}
