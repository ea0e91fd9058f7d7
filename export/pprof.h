/* pprof files: the gzip'd profile.proto (perftools.profiles.Profile) that `go tool pprof`,
 * Pyroscope and Parca read. A writer of stack-type profiles (export/pprof.c) and a reader that
 * turns one sample type of a file back into a profile (export/pprof_read.c). Format and
 * mapping of the fields: docs/formats.md. */
#ifndef GALATOP_EXPORT_PPROF_H
#define GALATOP_EXPORT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../model/profile.h"
#include "../model/stack_type.h"

#define PPROF_MAX_BYTES (1ul << 30) /* compressed and inflated size of a file read */

/* A stack type's profile, as the pprof and speedscope writers take them. */
struct typed_profile {
	enum stack_type type;
	const struct profile *p;
};

/* What a file says beside its samples. */
struct pprof_meta {
	double start;	 /* UNIX seconds the data begins, 0 when unknown */
	double duration; /* seconds it covers, 0 when unknown */
	double hz;	 /* on-CPU samples per second per CPU, 0 when unknown (no cpu column) */
};

/* One value column of a file: pprof's ValueType and what a model value is multiplied by. */
struct pprof_column {
	const char *type, *unit;
	double scale;
};

/* The columns galatop writes for a profile of type t whose values are of kind: its value
 * ("samples"/"count" for sampled types, else the type's name with the kind's unit, times
 * converted to nanoseconds), then for a type sampled at a frequency with hz > 0 the CPU time
 * ("cpu"/"nanoseconds", each sample worth 1/hz s). Fills cols[0..2); returns how many. */
size_t pprof_columns(enum stack_type t, enum value_kind kind, double hz,
		     struct pprof_column cols[2]);

/* Encodes parts[0..n) (profiles over one frame table) as an uncompressed Profile message into
 * *out (malloc'd; the caller frees it), *len bytes; the same input gives the same bytes.
 * 0, -EINVAL (no part, parts over different frame tables) or -ENOMEM. */
int pprof_encode(const struct typed_profile *parts, size_t n, const struct pprof_meta *m,
		 unsigned char **out, size_t *len);
/* pprof_encode, gzip-compressed (mtime 0) to f, which stays the caller's. 0 or -errno. */
int pprof_write(FILE *f, const struct typed_profile *parts, size_t n, const struct pprof_meta *m);

/* True when buf[0..len) (the whole file, or at least its first 256 bytes) is a pprof file:
 * gzip data that inflates to the start of a Profile message, or a whole plain Profile message
 * (every field well-formed, the string table starting with ""). */
bool pprof_sniff(const void *buf, size_t len);
/* Reads the pprof file buf[0..len) (gzip'd or plain; label names it in errors) into a new
 * profile over ft (*out, the caller's; its kind follows the column's unit): the column named
 * type (a sample type's name, or a galatop stack type's name for the column galatop writes for
 * it; NULL: the first). Frames come root first, inlined ones marked _[i]; names are sanitized.
 * 0, or -EINVAL / -ENOMEM with one line naming label and the problem in err; a malformed or
 * truncated file never gives a profile. */
int pprof_read_mem(const void *buf, size_t len, const char *label, const char *type,
		   struct frames *ft, struct profile **out, char *err, size_t errlen);

#endif
