/* galatop snapshots (.gtop): the profiles of a session and their metadata in one gzip-compressed
 * JSON file that `galatop view` opens on any machine, without root. Format: docs/snapshot.md. */
#ifndef GALATOP_EXPORT_SNAPSHOT_H
#define GALATOP_EXPORT_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "../model/profile.h"
#include "../model/stack_type.h"

struct sli;
struct slices;

#define SNAPSHOT_FORMAT "galatop-snapshot"
#define SNAPSHOT_VERSION 1
#define SNAPSHOT_MAX_BYTES (1ul << 30) /* compressed and inflated size of a snapshot */
#define SNAPSHOT_MAX_LIST 256	       /* profiles, probes, parameters of a probe, filters */
#define SNAPSHOT_MAX_SLICES 100000     /* slices in a profile's history */

struct snapshot_kv {
	const char *key;
	const char *value;
};

/* A probe and its parameters ({"type":"oncpu","hz":99}): a value whose text is a JSON number,
 * true or false is written as one and read back as the same text. */
struct snapshot_probe {
	const char *type;
	const struct snapshot_kv *params; /* "type" is not a parameter name */
	size_t nparams;
};

struct snapshot_meta {
	const char *host, *kernel, *version; /* version is galatop's; NULL is written as "" */
	const char *notes;		     /* free-form; newlines and tabs are kept */
	double start, end;		     /* time range, UNIX seconds */
	const struct snapshot_probe *probes;
	size_t nprobes;
	const struct snapshot_kv *filters; /* free-form key/value strings */
	size_t nfilters;
};

struct snapshot_profile {
	const char *name; /* label for views: "oncpu", or the name of an imported file */
	const char *type; /* a stack type's name (model/stack_type.h), or "folded" */
	struct profile *p;
	struct slices *history; /* per-second slices and heat map over the same frames, times in
				 * seconds from meta.start (model/slices); NULL when none. Read
				 * ones are freed by snapshot_release */
};

struct l7_table;
struct timeline;

struct snapshot {
	struct snapshot_meta meta;
	struct snapshot_profile *profiles;
	size_t nprofiles;
	struct l7_table *l7; /* L7 tables (export/snapshot_l7.c), NULL if none; read ones are
			      * freed by snapshot_release */
	double l7_secs;	     /* length of the L7 recording */
	struct timeline *timeline; /* the thread timeline, NULL if none; snapshot_read's own */
	struct sli *sli; /* the "sli" section (model/sli), NULL when none; freed by snapshot_release
			  * when read */
	void *store; /* what snapshot_read allocated; NULL in a snapshot the caller built */
};

/* A snapshot as galatop's writers build it, with room for its lists: every stack type's profile
 * and probe, a few more probes, the strings of this machine. Build it with snapshot_build_init,
 * then the _stack and _probe calls; set what else it carries in sn (timeline, l7, sli,
 * meta.filters) and write sn. */
#define SNAPSHOT_BUILD_PROBES (STACK_TYPES + 4)
struct snapshot_build {
	struct snapshot sn;
	struct snapshot_profile profiles[STACK_TYPES];
	struct snapshot_probe probes[SNAPSHOT_BUILD_PROBES];
	struct snapshot_kv hz;
	char host[256], kernel[128], hzbuf[32];
};
/* Starts b: galatop's version, notes (borrowed) and the time range [start, end] (UNIX seconds);
 * with here, this machine's host name and kernel release too (data recorded on it). */
void snapshot_build_init(struct snapshot_build *b, bool here, const char *notes, double start,
			 double end);
/* Adds p (borrowed; NULL: nothing) as the profile of stack type t, with its per-second history
 * h (borrowed, may be NULL); with probe, its probe too, a type sampled at a frequency with the
 * parameter hz. */
void snapshot_build_stack(struct snapshot_build *b, enum stack_type t, const struct profile *p,
			  const struct slices *h, bool probe, double hz);
/* Adds the probe type with its n parameters (all borrowed); ignored past SNAPSHOT_BUILD_PROBES. */
void snapshot_build_probe(struct snapshot_build *b, const char *type,
			  const struct snapshot_kv *params, size_t n);

/* Writes s to path through a temporary file renamed over it; the same input gives the same bytes.
 * Profiles may use different frame tables. Returns 0, -EINVAL (s holds something the format
 * cannot: a negative or non-finite value, a duplicate key, too many entries), -ENOMEM or -errno;
 * on error err holds one line naming path and the problem. */
int snapshot_write(const char *path, const struct snapshot *s, char *err, size_t errlen);
/* Reads the snapshot at path into s, creating its profiles over ft with sanitized names; the
 * caller releases s with snapshot_release. Returns 0, -EINVAL (not a valid snapshot), -ENOMEM or
 * -errno; on error s is empty (ft may hold unused new frames) and err holds one line naming path
 * and the problem. */
int snapshot_read(const char *path, struct frames *ft, struct snapshot *s, char *err,
		  size_t errlen);
/* As snapshot_read for the file contents buf[0..len); name labels the errors. */
int snapshot_read_mem(const void *buf, size_t len, const char *name, struct frames *ft,
		      struct snapshot *s, char *err, size_t errlen);
/* Frees what snapshot_read put in s, its profiles included, and empties s; a no-op when
 * s->store is NULL (a snapshot the caller built). */
void snapshot_release(struct snapshot *s);
/* True when head[0..len) (the start of a file) looks like a snapshot: gzip data that inflates to
 * {"format":"galatop-snapshot". 256 bytes are enough to tell; fewer may only show the gzip magic,
 * which then decides. */
bool snapshot_sniff(const void *head, size_t len);

#endif
