/* Prometheus text exposition format (version 0.0.4): HELP/TYPE lines, samples with escaped
 * label values, and histograms from model/hist buckets. Any export module that writes metrics
 * (L7 tables, SLI series) uses this one writer. */
#ifndef GALATOP_EXPORT_PROM_H
#define GALATOP_EXPORT_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/hist.h"

struct prom_label {
	const char *name;  /* [a-zA-Z_][a-zA-Z0-9_]* */
	const char *value; /* any text; escaped as the format requires */
};

/* How an exposition names and labels its samples: a file of `galatop record` writes them as
 * they are (style NULL); the agent's /metrics adds _total to counters (promtool's rule), the
 * identity labels rows know (container, pod) and labels of its own (hostname). */
struct prom_style {
	bool counter_total;	       /* counter families are named NAME_total */
	bool ident;		       /* rows that know their container and pod label them */
	const struct prom_label *extra; /* labels added to every sample */
	size_t nextra;
};

#define PROM_MAX_LABELS 16 /* labels of one sample, extra ones included */

/* The family name under style s into buf: name, or name_total for a counter when s asks. */
const char *prom_name(const struct prom_style *s, const char *name, const char *type, char *buf,
		      size_t cap);
/* labels[0..n) then s's extra labels into out[PROM_MAX_LABELS]; returns their count. */
size_t prom_labels(const struct prom_style *s, const struct prom_label *labels, size_t n,
		   struct prom_label *out);

/* Writes "# HELP name help" and "# TYPE name type" (type: counter, gauge, histogram). */
void prom_family(FILE *f, const char *name, const char *type, const char *help);
/* Writes one sample line: name{labels} value (non-finite values as NaN/+Inf/-Inf). */
void prom_sample(FILE *f, const char *name, const struct prom_label *labels, size_t nlabels,
		 double value);
/* Writes a histogram's _bucket lines at the upper bounds le[0..nle) (ascending, in the unit
 * of h's values times scale), +Inf, then _sum and _count; scale converts h's values (e.g.
 * 1e-9 for nanoseconds to seconds). A bucket of h counts under the first bound not below its
 * upper end, so counts are exact at bounds that fall on bucket edges. */
void prom_histogram(FILE *f, const char *name, const struct prom_label *labels, size_t nlabels,
		    const struct hist *h, const double *le, size_t nle, double scale);

#endif
