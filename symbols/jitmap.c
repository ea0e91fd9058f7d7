/* perf map reader; NSpid lookup so containerized JITs (which write their namespace pid) resolve. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap.h"
#include "symtab.h"
#include "util/file.h"
#include "util/grow.h"
#include "util/procfs.h"

int jitmap__ns_pid(int pid)
{
	const char *v, *last;
	char *text;
	size_t len;
	int nspid = pid;

	if (procfs_status(pid, &text))
		return pid;
	/* NSpid lists the pid in each namespace down to the process's own, the last one. */
	v = procfs_field(text, "NSpid", &len);
	for (last = v ? v + len : NULL; last && last > v && last[-1] != ' ' && last[-1] != '\t';)
		last--;
	if (last && atoi(last) > 0)
		nspid = atoi(last);
	free(text);
	return nspid;
}

/* Parses one hex number (0x optional) and the space after it ("START SIZE NAME"); 0 or -EINVAL. */
static int parse_hex(const char **p, const char *eol, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	*v = 0;
	if (eol - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < eol && digits < 17) {
		int d = *s >= '0' && *s <= '9'	 ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
						 : -1;

		if (d < 0)
			break;
		*v = *v << 4 | (uint64_t)d;
		s++;
		digits++;
	}
	if (!digits || digits > 16 || s >= eol || *s != ' ')
		return -EINVAL;
	*p = s + 1;
	return 0;
}

int jitmap__path(int pid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/proc/%d/root/tmp/perf-%d.map", pid, jitmap__ns_pid(pid));

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* One parsed line; seq is its line order. */
struct map_line {
	uint64_t start, end;
	const char *name;
	size_t len;
	uint32_t seq;
};

static int by_start_then_seq(const void *a, const void *b)
{
	const struct map_line *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Max-heap of line indexes by seq. */
static void heap_push(uint32_t *h, size_t *n, const struct map_line *l, uint32_t i)
{
	size_t k = (*n)++;

	while (k && l[h[(k - 1) / 2]].seq < l[i].seq) {
		h[k] = h[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	h[k] = i;
}

static void heap_pop(uint32_t *h, size_t *n, const struct map_line *l)
{
	uint32_t last = h[--*n];
	size_t k = 0;

	for (;;) {
		size_t c = 2 * k + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && l[h[c + 1]].seq > l[h[c]].seq)
			c++;
		if (l[h[c]].seq <= l[last].seq)
			break;
		h[k] = h[c];
		k = c;
	}
	if (*n)
		h[k] = last;
}

/* Marks (len = 0) every line whose start a later line covers: a JIT that frees code and puts
 * other code there appends lines, and the newest one names each address. Lines named
 * JITMAP_UNLOADED only hide what they cover and are dropped too. l is sorted by start. */
static int hide_covered(struct map_line *l, size_t n)
{
	uint32_t *h = malloc((n ? n : 1) * sizeof(*h));
	size_t hn = 0;

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		size_t j = i;

		/* every line starting here is pushed before any of them is judged */
		for (; j < n && l[j].start == l[i].start; j++)
			heap_push(h, &hn, l, (uint32_t)j);
		while (hn && l[h[0]].end <= l[i].start)
			heap_pop(h, &hn, l);
		for (size_t k = i; k < j; k++)
			if (hn && l[h[0]].seq > l[k].seq)
				l[k].len = 0;
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		if (l[i].len == sizeof(JITMAP_UNLOADED) - 1 &&
		    !memcmp(l[i].name, JITMAP_UNLOADED, l[i].len))
			l[i].len = 0;
	free(h);
	return 0;
}

int jitmap__parse(const char *buf, size_t len, struct sym_table **out)
{
	struct sym_table *t = sym_table__new();
	const char *end = buf + len;
	struct map_line *lines = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		const char *eol = nl ? nl : end, *name;
		uint64_t start, size;

		if (parse_hex(&buf, eol, &start) || parse_hex(&buf, eol, &size)) {
			buf = eol + (nl != NULL);
			continue;
		}
		name = buf;
		buf = eol + (nl != NULL);
		if (eol == name || n >= UINT32_MAX)
			continue;
		if (ARRAY_GROW(lines, cap, n + 1)) {
			err = -ENOMEM;
			goto out;
		}
		lines[n] = (struct map_line){ start, start + size < start ? UINT64_MAX : start + size,
					      name, (size_t)(eol - name), (uint32_t)n };
		n++;
	}
	if (n)
		qsort(lines, n, sizeof(*lines), by_start_then_seq);
	err = hide_covered(lines, n);
	for (size_t i = 0; !err && i < n; i++)
		if (lines[i].len)
			err = sym_table__add(t, lines[i].start, lines[i].end - lines[i].start,
					     lines[i].name, lines[i].len, 0, lines[i].seq);
out:
	free(lines);
	if (err) {
		sym_table__free(t);
		return err;
	}
	sym_table__finish(t, 0);
	*out = t;
	return 0;
}

int jitmap_load(const char *path, struct sym_table **out)
{
	char *buf;
	size_t len;
	int err;

	*out = NULL;
	err = file_read(path, JITMAP_MAX_BYTES, FILE_UNTRUSTED, &buf, &len);
	if (err)
		return err;
	err = jitmap__parse(buf, len, out);
	free(buf);
	return err;
}
