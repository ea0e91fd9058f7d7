/* The one input loader of every command that reads profiles (svg, view, fold, diff): folded
 * stacks, `perf script` output or a .gtop snapshot, told apart by the same rules everywhere,
 * and an optional time range selected from a snapshot's per-second history. */
#ifndef GALATOP_EXPORT_INPUT_H
#define GALATOP_EXPORT_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "perfscript.h"
#include "snapshot.h"

enum input_format {
	INPUT_AUTO = 0,
	INPUT_FOLDED,
	INPUT_PERF,
	INPUT_SNAPSHOT,
	INPUT_PERFDATA,
	INPUT_PPROF
};

/* A time range A-B: seconds from the start of the recording (fractions allowed) or clock
 * times HH:MM[:SS[.frac]] (local time of day, resolved against the snapshot's start). */
struct input_range {
	bool set;
	double a, b;	   /* seconds, or seconds since midnight for clock times */
	bool a_clock, b_clock;
	char text[64];	   /* as given, for messages and headers */
};

struct input_opts {
	enum input_format format; /* INPUT_AUTO: sniffed */
	bool reverse;		  /* folded, perf: reverse every stack's frames */
	bool strict;		  /* folded: stop at the first invalid line */
	bool chart;		  /* folded, perf: a flame chart (time order kept) */
	const struct perfscript_opts *perf; /* NULL: stackcollapse-perf.pl's defaults */
	struct input_range range; /* snapshot: only this range of the history */
	bool range_whole;	  /* with range: check it and resolve it into from/to, but keep
				   * the whole profiles (a viewer that selects the range itself) */
	const char *sample_type;  /* pprof: the sample type to read (pprof.h); NULL: the first */
};

struct input {
	enum input_format format; /* what the file was */
	struct profile *own;	  /* folded, perf, pprof: the profile (NULL for a snapshot) */
	struct snapshot snap;	  /* snapshot: its profiles (with a range: the range's) */
	double from, to;	  /* a range, resolved to seconds from the start */
};

/* Parses "A-B" into r: 0, or -EINVAL with one line naming the problem in err. */
int input_range_parse(const char *s, struct input_range *r, char *err, size_t errlen);
/* Resolves r into seconds from start (the UNIX time the history begins: clock times are
 * the local times of day from that day on). 0, or -EINVAL when the end is not after the
 * start. */
int input_range_seconds(const struct input_range *r, double start, double *from, double *to);
/* Tells the format of a file from its first bytes (len >= 256 or the whole file): a snapshot
 * (gzip), a perf.data file ("PERFILE2", read through export/perfdata: its samples named and
 * collapsed as `perf script` output would be), a pprof profile (export/pprof.h: gzip'd or
 * plain protobuf), `perf script` output (the first line that is not blank or a '#' comment does not end
 * in a count, and some line is indented, as perf's frame lines) or else folded text. */
enum input_format input_sniff(const char *buf, size_t len);
/* Loads buf[0..len) (label names it in messages) over ft into in, which the caller releases
 * with input_release. 0, or -EINVAL / -ENOMEM with one line naming label and the problem in
 * err (a folded file's invalid lines go to stderr as label:line: reason, as folded_parse
 * says; in strict mode the first one, and a file with more invalid lines than stacks, end
 * the load with -EINVAL and err empty: folded_parse said why). Any input mostly invalid in its
 * format fails so, never a profile of garbage. */
int input_load_mem(const char *buf, size_t len, const char *label, struct frames *ft,
		   const struct input_opts *o, struct input *in, char *err, size_t errlen);
/* Reads the file at path ("-": standard input), at most 1 GiB, into a new NUL-terminated
 * buffer (*buf, which the caller frees; *len bytes). 0, or -EINVAL / -ENOMEM with one line
 * naming path and the problem in err. */
int input_read(const char *path, char **buf, size_t *len, char *err, size_t errlen);
/* input_read, then input_load_mem. */
int input_load(const char *path, struct frames *ft, const struct input_opts *o,
	       struct input *in, char *err, size_t errlen);
/* The profile of type (a snapshot profile's type, "oncpu", ...; NULL: the first), the one
 * profile of a folded, perf or pprof file whatever type says (a pprof file's column is chosen
 * at load, by input_opts.sample_type); NULL when there is none. */
struct profile *input_profile(const struct input *in, const char *type);
/* Frees what input_load put in in; a zeroed in is a no-op. */
void input_release(struct input *in);

#endif
