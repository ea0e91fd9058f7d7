/* Folded stacks ("a;b;c 12"), the lingua franca of flamegraph.pl, speedscope and Pyroscope:
 * a reader with flamegraph.pl's grammar and a writer that any of them can read back. */
#ifndef GALATOP_EXPORT_FOLDED_H
#define GALATOP_EXPORT_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "../model/profile.h"

struct folded_opts {
	bool strict;  /* stop at the first invalid line (-EINVAL) instead of skipping it */
	bool reverse; /* reverse the frames of each stack (flamegraph.pl --reverse) */
	bool quiet;   /* do not report invalid lines on stderr (nor a mostly invalid file) */
	bool mapped;  /* folded_read_profile_mem: buf is a private mapping of a file, page
		       * aligned, whose pages are given back as they are parsed (MADV_DONTNEED),
		       * so that a large file is never in memory whole */
};

struct folded_stats {
	unsigned long lines;   /* lines read, including skipped ones */
	unsigned long stacks;  /* lines that held a stack */
	unsigned long skipped; /* invalid lines skipped */
	bool two_column;       /* some line had a second count (differential input) */
};

/* Called once per valid line: stack[0..len) is the frames joined by ';' (reversed if asked),
 * count2 < 0 when the line has a single count. A non-zero return stops parsing and is returned. */
typedef int (*folded_line_fn)(void *ctx, const char *stack, size_t len, double count,
			      double count2);

/* Parses folded text from f (lines starting with '#' are comments); name labels errors
 * ("name:line: reason" on stderr, once the input is read). Lines of any length, NUL bytes and
 * a missing final newline are handled. Returns 0, the callback's non-zero value, -EINVAL
 * (already reported in one line: strict mode and an invalid line, or more invalid lines than
 * stacks, i.e. not folded text at all, whose stacks the callback may have seen) or -errno on
 * a read error (not reported). */
int folded_parse(FILE *f, const char *name, const struct folded_opts *o, folded_line_fn fn,
		 void *ctx, struct folded_stats *stats);
/* Splits stack[0..len) on ';' into frame ids of ft, appending to *frames (grown with realloc,
 * capacity in *cap). Empty frames are dropped as flamegraph.pl does. Returns the frame count or
 * -ENOMEM. */
long folded_split(struct frames *ft, const char *stack, size_t len, uint32_t **frames,
		  size_t *cap);
/* Parses folded text from f and adds every stack to p (two-column lines via
 * profile__add_stack2). Same returns as folded_parse. */
int folded_read_profile(FILE *f, const char *name, const struct folded_opts *o,
			struct profile *p, struct folded_stats *stats);

/* folded_read_profile over buf[0..len), read in place (no copy of the text). */
int folded_read_profile_mem(const char *buf, size_t len, const char *name,
			    const struct folded_opts *o, struct profile *p,
			    struct folded_stats *stats);

/* Writes p as folded text, one line per stack with non-zero self value, sorted by bytes,
 * integer counts (two columns if p is two-column). Frame names are escaped so that the line
 * parses back to the same frames: ';' becomes U+037E, control bytes and invalid UTF-8 become
 * U+FFFD. 0 or -errno (write error). */
int folded_write(FILE *out, const struct profile *p);
/* folded_write, leaving out the identity frames at the root of each stack ([Pod], [Con],
 * [PID]comm, threads) when no_ident; stacks that then read the same are summed into one line
 * (single-column profiles). */
int folded_write_ex(FILE *out, const struct profile *p, bool no_ident);

#endif
