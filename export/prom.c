#include "prom.h"

#include <math.h>
#include <string.h>

#include "jsonio.h"

const char *prom_name(const struct prom_style *s, const char *name, const char *type, char *buf,
		      size_t cap)
{
	size_t n = strlen(name);

	if (s && s->counter_total && !strcmp(type, "counter") &&
	    (n < 6 || strcmp(name + n - 6, "_total")))
		snprintf(buf, cap, "%s_total", name);
	else
		snprintf(buf, cap, "%s", name);
	return buf;
}

size_t prom_labels(const struct prom_style *s, const struct prom_label *labels, size_t n,
		   struct prom_label *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < PROM_MAX_LABELS; i++)
		out[k++] = labels[i];
	for (size_t i = 0; s && i < s->nextra && k < PROM_MAX_LABELS; i++)
		out[k++] = s->extra[i];
	return k;
}

void prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	/* HELP text escapes backslash and newline only. */
	for (const char *p = help; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void put_value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.17g", v);
}

static void put_labels(FILE *f, const struct prom_label *labels, size_t n, const char *le)
{
	if (!n && !le)
		return;
	fputc('{', f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", labels[i].name);
		for (const char *p = labels[i].value ? labels[i].value : ""; *p; p++) {
			if (*p == '\\' || *p == '"')
				fprintf(f, "\\%c", *p);
			else if (*p == '\n')
				fputs("\\n", f);
			else
				fputc(*p, f);
		}
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%sle=\"%s\"", n ? "," : "", le);
	fputc('}', f);
}

void prom_sample(FILE *f, const char *name, const struct prom_label *labels, size_t nlabels,
		 double value)
{
	locale_t old, c = json_c_locale_begin(&old);

	fputs(name, f);
	put_labels(f, labels, nlabels, NULL);
	fputc(' ', f);
	put_value(f, value);
	fputc('\n', f);
	json_c_locale_end(c, old);
}

void prom_histogram(FILE *f, const char *name, const struct prom_label *labels, size_t nlabels,
		    const struct hist *h, const double *le, size_t nle, double scale)
{
	locale_t old, c = json_c_locale_begin(&old);
	char line[256], bound[64];
	unsigned idx = 0, bucket;
	uint64_t count, cum = 0;
	size_t i = 0;
	bool more = hist_next(h, &idx, &bucket, &count);

	snprintf(line, sizeof(line), "%s_bucket", name);
	for (i = 0; i < nle; i++) {
		while (more) {
			uint64_t lo, hi;

			hist_bucket_range(bucket, &lo, &hi);
			if ((double)hi * scale > le[i])
				break;
			cum += count;
			more = hist_next(h, &idx, &bucket, &count);
		}
		snprintf(bound, sizeof(bound), "%.9g", le[i]);
		fputs(line, f);
		put_labels(f, labels, nlabels, bound);
		fprintf(f, " %llu\n", (unsigned long long)cum);
	}
	fputs(line, f);
	put_labels(f, labels, nlabels, "+Inf");
	fprintf(f, " %llu\n", (unsigned long long)h->count);
	fprintf(f, "%s_sum", name);
	put_labels(f, labels, nlabels, NULL);
	fputc(' ', f);
	put_value(f, (double)h->sum * scale);
	fprintf(f, "\n%s_count", name);
	put_labels(f, labels, nlabels, NULL);
	fprintf(f, " %llu\n", (unsigned long long)h->count);
	json_c_locale_end(c, old);
}
