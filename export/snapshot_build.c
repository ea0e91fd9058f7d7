/* The one place galatop's snapshot writers fill in metadata: see snapshot.h. */
#include "snapshot.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void snapshot_build_init(struct snapshot_build *b, bool here, const char *notes, double start,
			 double end)
{
	struct utsname un;

	memset(b, 0, sizeof(*b));
	b->sn.profiles = b->profiles;
	b->sn.meta.probes = b->probes;
	b->sn.meta.version = GALATOP_VERSION;
	b->sn.meta.notes = notes;
	b->sn.meta.start = start;
	b->sn.meta.end = end;
	if (!here)
		return;
	gethostname(b->host, sizeof(b->host) - 1);
	b->sn.meta.host = b->host;
	if (uname(&un) == 0) {
		snprintf(b->kernel, sizeof(b->kernel), "%s", un.release);
		b->sn.meta.kernel = b->kernel;
	}
}

void snapshot_build_probe(struct snapshot_build *b, const char *type,
			  const struct snapshot_kv *params, size_t n)
{
	if (b->sn.meta.nprobes < SNAPSHOT_BUILD_PROBES)
		b->probes[b->sn.meta.nprobes++] = (struct snapshot_probe){ type, params, n };
}

void snapshot_build_stack(struct snapshot_build *b, enum stack_type t, const struct profile *p,
			  const struct slices *h, bool probe, double hz)
{
	bool sampled = stack_types[t].kind == VALUE_SAMPLES;

	if (!p || b->sn.nprofiles >= STACK_TYPES)
		return;
	/* snapshot_write only reads the profiles and histories. */
	b->profiles[b->sn.nprofiles++] = (struct snapshot_profile){
		stack_types[t].name, stack_types[t].name, (struct profile *)p, (struct slices *)h
	};
	if (!probe)
		return;
	if (sampled) {
		snprintf(b->hzbuf, sizeof(b->hzbuf), "%g", hz);
		b->hz = (struct snapshot_kv){ "hz", b->hzbuf };
	}
	snapshot_build_probe(b, stack_types[t].name, sampled ? &b->hz : NULL, sampled);
}
