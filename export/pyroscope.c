/* Pyroscope ingest requests: see pyroscope.h. */
#include "pyroscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sanitize.h"

/* Pyroscope's /ingest turns the name's last part into its profile type; an unknown one is
 * refused ("unknown profile type"). Off-CPU time is time blocked: the block profile's delay
 * (nanoseconds); a page fault is an allocation event (a page), counted as alloc_objects;
 * bytes still held (a leak profile) are in-use space, averaged over time as Go's heap. */
static const struct pyro_type types[VALUE_KIND_MAX] = {
	[VALUE_SAMPLES] = { "cpu", "samples", "sum", 1, true },
	[VALUE_NANOSECONDS] = { "block_duration", "lock_nanoseconds", "sum", 1, false },
	[VALUE_MICROSECONDS] = { "block_duration", "lock_nanoseconds", "sum", 1000, false },
	[VALUE_BYTES] = { "alloc_space", "bytes", "sum", 1, false },
	[VALUE_FAULTS] = { "alloc_objects", "objects", "sum", 1, false },
};
static const struct pyro_type inuse = { "inuse_space", "bytes", "average", 1, false };

const struct pyro_type *pyro_type_of(enum value_kind kind, bool can_go_down)
{
	if (kind == VALUE_BYTES && can_go_down)
		return &inuse;
	return (unsigned)kind < VALUE_KIND_MAX && types[kind].name ? &types[kind] : NULL;
}

static bool app_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '/';
}

bool pyro_app_valid(const char *app)
{
	size_t n = app ? strlen(app) : 0;

	if (!n || n > 200 || app[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!app_char(app[i]))
			return false;
	return true;
}

/* Appends label k=v to buf at *at (the grammar's separators and blanks at the ends cleaned
 * out of v); false when it does not fit. */
static bool put_label(char *buf, size_t cap, size_t *at, bool *first, const char *k, const char *v)
{
	size_t n = v ? strlen(v) : 0, a = 0, b, klen = strlen(k);
	char clean[SANITIZE_MAX(PYRO_VALUE_MAX) + 1];

	if (n > PYRO_VALUE_MAX)
		n = PYRO_VALUE_MAX;
	n = n ? sanitize_text(v, n, clean) : 0;
	while (n > PYRO_VALUE_MAX) /* cut at a character boundary */
		while ((clean[--n] & 0xc0) == 0x80)
			;
	for (size_t i = 0; i < n; i++)
		if (clean[i] == ',' || clean[i] == '{' || clean[i] == '}' || clean[i] == '=')
			clean[i] = '_';
	while (a < n && clean[a] == ' ')
		a++;
	b = n;
	while (b > a && clean[b - 1] == ' ')
		b--;
	if (a == b)
		return true;
	if (*at + klen + (b - a) + 3 > cap)
		return false;
	if (!*first)
		buf[(*at)++] = ',';
	*first = false;
	memcpy(buf + *at, k, klen);
	*at += klen;
	buf[(*at)++] = '=';
	memcpy(buf + *at, clean + a, b - a);
	*at += b - a;
	return true;
}

int pyro_name(char *buf, size_t cap, const char *app, const char *type,
	      const struct pyro_labels *l)
{
	char pid[16] = "";
	bool first = true;
	int n = snprintf(buf, cap, "%s.%s{", app, type);
	size_t at;

	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	at = (size_t)n;
	if (l->pid)
		snprintf(pid, sizeof(pid), "%" PRIu32, l->pid);
	if (!put_label(buf, cap, &at, &first, "service_name", l->service_name) ||
	    !put_label(buf, cap, &at, &first, "hostname", l->hostname) ||
	    !put_label(buf, cap, &at, &first, "pid", pid) ||
	    !put_label(buf, cap, &at, &first, "container_id", l->container_id) ||
	    !put_label(buf, cap, &at, &first, "pod", l->pod) || at + 2 > cap)
		return -ENOSPC;
	buf[at++] = '}';
	buf[at] = '\0';
	return (int)at;
}

/* Appends s percent-encoded (RFC 3986 unreserved characters kept). */
static bool put_escaped(char *buf, size_t cap, size_t *at, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';

		if (*at + (plain ? 1 : 3) >= cap)
			return false;
		if (plain) {
			buf[(*at)++] = (char)c;
		} else {
			buf[(*at)++] = '%';
			buf[(*at)++] = hex[c >> 4];
			buf[(*at)++] = hex[c & 15];
		}
	}
	buf[*at] = '\0';
	return true;
}

static bool put_param(char *buf, size_t cap, size_t *at, const char *k, const char *v)
{
	int n = snprintf(buf + *at, cap - *at, "%s%s=", *at ? "&" : "", k);

	if (n < 0 || (size_t)n >= cap - *at)
		return false;
	*at += (size_t)n;
	return put_escaped(buf, cap, at, v);
}

int pyro_query_str(char *buf, size_t cap, const struct pyro_query *q)
{
	char from[24], until[24], rate[16];
	size_t at = 0;

	if (!cap)
		return -ENOSPC;
	buf[0] = '\0';
	snprintf(from, sizeof(from), "%" PRIu64, q->from);
	snprintf(until, sizeof(until), "%" PRIu64, q->until);
	snprintf(rate, sizeof(rate), "%u", q->sample_rate);
	if (!put_param(buf, cap, &at, "name", q->name) ||
	    !put_param(buf, cap, &at, "from", from) || !put_param(buf, cap, &at, "until", until) ||
	    (q->type->sampled && q->sample_rate && !put_param(buf, cap, &at, "sampleRate", rate)) ||
	    !put_param(buf, cap, &at, "spyName", q->spy_name ? q->spy_name : "ebpfspy") ||
	    !put_param(buf, cap, &at, "units", q->type->units) ||
	    !put_param(buf, cap, &at, "aggregationType", q->type->aggregation))
		return -ENOSPC;
	return (int)at;
}

/* Writes line[0..len) (stack, ' ', count) with the count scaled, cut to PYRO_LINE_MAX at a
 * frame boundary with "[truncated]" as its last frame. */
static void put_line(FILE *out, const char *line, size_t len, double scale)
{
	static const char mark[] = ";[truncated]";
	const char *count = memrchr(line, ' ', len);
	char num[64], *end;
	size_t slen, clen;
	double v;

	if (!len || line[0] == '#' || !count || count == line ||
	    (size_t)(line + len - count) >= sizeof(num))
		return;
	slen = (size_t)(count - line);
	clen = (size_t)(line + len - count - 1);
	memcpy(num, count + 1, clen);
	num[clen] = '\0';
	v = strtod(num, &end);
	if (end == num || *end || !(v >= 0))
		return;
	clen = (size_t)snprintf(num, sizeof(num), " %.0f\n", v * scale);
	if (slen + clen > PYRO_LINE_MAX) {
		size_t keep = PYRO_LINE_MAX - clen - (sizeof(mark) - 1);

		while (keep && line[keep] != ';')
			keep--;
		fwrite(line, 1, keep, out);
		fputs(keep ? mark : mark + 1, out);
	} else {
		fwrite(line, 1, slen, out);
	}
	fputs(num, out);
}

int pyro_body_write(FILE *out, const char *text, size_t len, double scale)
{
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;

		put_line(out, text + i, l, scale);
		i += l + 1;
	}
	return ferror(out) ? -EIO : 0;
}
