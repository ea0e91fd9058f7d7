/* SLI collector: turns what the SLI probes read (per thread, per process bucket) into model/sli
 * groups — host, container and pod (symbols/ident), systemd service and cgroup (v2 id from the
 * kernel, v1 paths from /proc) — and reads each group's pressure (PSI) and CPU throttling files
 * when an interval closes. */
#ifndef GALATOP_ENGINE_SLI_COLLECTOR_H
#define GALATOP_ENGINE_SLI_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/probes.h"
#include "model/sli.h"
#include "symbols/ident.h"

struct sli_collector_opts {
	const struct probe_opts *targets; /* NULL: every task */
	unsigned slis;			  /* 1 << SLI_* to measure; 0 = all */
	uint64_t longsys_ns;		  /* cpu_longsys threshold; 0 = 10 ms */
	bool delayacct;			  /* turn delay accounting on for mem_swapin */
	const char *cgroup;		  /* --cgroup PATH (v2 or v1 controller path), or NULL */
	const char *host_root;		  /* "/" unless tests say otherwise */
};

struct sli_collector;

/* Attaches the SLI probes and starts the first interval. ic is borrowed and must outlive the
 * collector. NULL with a one-line reason in err. */
struct sli_collector *sli_collector__new(struct ident_cache *ic, const struct sli_collector_opts *o,
					 char *err, size_t errlen);
/* Frees the collector, its probes and its model; NULL is a no-op. */
void sli_collector__free(struct sli_collector *c);
/* Adds what the probes measured since the last read to the current interval. 0 or -errno. */
int sli_collector__read(struct sli_collector *c);
/* Reads, then closes the current interval (PSI and throttling read now) and starts the next. */
void sli_collector__close(struct sli_collector *c);
/* The model being filled; owned by the collector. */
struct sli *sli_collector__model(struct sli_collector *c);
/* Probe warnings, newline-separated ("" if none). */
const char *sli_collector__warnings(const struct sli_collector *c);
/* Adds a target process at run time. 0 or -errno. */
int sli_collector__add_pid(struct sli_collector *c, int tgid);
/* Delays charged and lost since the start. */
void sli_collector__counts(const struct sli_collector *c, uint64_t *events, uint64_t *drops);
/* Resolves a --cgroup PATH (absolute under /sys/fs/cgroup, or relative to the v2 root) into
 * probe targets: a v2 cgroup's id into *cgid, a v1 cgroup's processes into pids (up to max).
 * Returns the number of pids, or -ENOENT with a reason in err. */
int sli_cgroup_target(const char *path, uint64_t *cgid, int *pids, size_t max, char *err,
		      size_t errlen);

#endif
