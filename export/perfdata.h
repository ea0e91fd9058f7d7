/* perf.data (perf record's binary file, file or pipe mode) -> the samples `perf script` would
 * print, named by galatop's symbol room and handed to the perf script parser, so that they
 * collapse exactly as `perf script | galatop collapse` would. See docs/perfdata.md. */
#ifndef GALATOP_EXPORT_PERFDATA_H
#define GALATOP_EXPORT_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perfscript.h"

struct sym_cache;

struct perfdata_stats {
	uint64_t records;   /* records read from the data section */
	uint64_t samples;   /* samples passed on */
	uint64_t bad;	    /* samples or records whose fields overrun them (skipped) */
	uint64_t unwound;   /* samples whose user stack was unwound from a stack copy */
	uint64_t lost;	    /* samples the kernel said it lost (PERF_RECORD_LOST) */
	uint64_t unknown;   /* records of types not read (skipped) */
	bool other_kernel;  /* recorded on another kernel, whose kallsyms perf did not keep:
			     * kernel frames are named from the running one */
};

/* Whether buf[0..len) starts as a perf.data file ("PERFILE2", file or pipe mode). */
bool perfdata_sniff(const void *buf, size_t len);

/* Reads the perf.data image buf[0..len) (label names it in messages), names every sample's
 * frames through sc (borrowed; NULL: a cache of its own with the running system's kallsyms
 * and files, or perf's build-id cache ~/.debug for files and kernels that changed since) and
 * collapses each sample as the perf script parser with options o collapses the text
 * `perf script` prints for it, calling fn(ctx, ...) as that parser does (a sample seen
 * before, same event, process image, comm and call chain, is passed on again without being
 * named or parsed). Stats in *st when st is not NULL. 0; -EINVAL with one line naming label
 * and the problem in err (truncated or corrupt file, more bad records than good ones,
 * compressed records); -ENOMEM; or fn's non-zero return. */
int perfdata_collapse(const void *buf, size_t len, const char *label, struct sym_cache *sc,
		      const struct perfscript_opts *o, perfscript_stack_fn fn, void *ctx,
		      struct perfdata_stats *st, char *err, size_t errlen);
/* perfdata_collapse over the rest of f, whose first n bytes were read into head already: a
 * regular file is mapped whole, a pipe read to its end. Same returns; -EIO when reading fails
 * (said in err). */
int perfdata_collapse_file(FILE *f, const void *head, size_t n, const char *label,
			   const struct perfscript_opts *o, perfscript_stack_fn fn, void *ctx,
			   struct perfdata_stats *st, char *err, size_t errlen);

#endif
