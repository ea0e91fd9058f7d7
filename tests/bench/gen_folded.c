/* Writes a large deterministic folded profile for benchmarks: N distinct stacks (default
 * 200000), 5 to 60 frames deep, with C++, Rust, Go, Java and kernel names full of '<', '>'
 * and '&'; sorted as stackcollapse tools print them. Same output for the same N, always.
 * Usage: gen_folded [N] > file; prints the number of distinct tree nodes on stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: fixed seed, so the file never changes. */
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static const char *const types[] = { "Request", "Buffer", "Session", "Row", "Token",
				     "Node",	"Entry",  "Frame",   "Chunk", "Event" };
static const char *const verbs[] = { "process", "handle", "poll",  "parse", "write", "read",
				     "flush",	"commit", "visit", "apply", "drop",  "merge" };
static const char *const spaces[] = { "engine", "net", "storage", "query", "cache", "codec" };

/* The name of choice k at depth d for a stack of language lang. */
static int frame_name(char *out, size_t cap, int lang, int d, unsigned k)
{
	const char *t = types[k % 10], *v = verbs[(k / 10) % 12], *s = spaces[(k / 120) % 6];
	unsigned id = k / 720;

	switch (lang) {
	case 0:
		return snprintf(out, cap, "%s::%s%u<%s&>::%s", s, t, id, t, v);
	case 1:
		return snprintf(out, cap, "<%s::%s%u as Future>::%s<&mut %s>", s, t, id, v, t);
	case 2:
		return snprintf(out, cap, "%s.(*%s%u).%s", s, t, id, v);
	case 3:
		return snprintf(out, cap, "Lorg/%s/%s%u;::%s_[j]", s, t, id, v);
	default:
		return snprintf(out, cap, "%s_%s_%u_[k]", s, v, id + (unsigned)d);
	}
}

struct line {
	char *s;
	size_t len;
};

static int by_bytes(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

int main(int argc, char **argv)
{
	static const char *const roots[] = { "mysqld", "rustd", "gosrv", "java", "swapper" };
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000, cap = 1 << 16, nodes = 0;
	size_t distinct = n;
	struct line *lines = calloc(n, sizeof(*lines));
	char *buf = malloc(cap), name[512];

	if (!lines || !buf)
		return 1;
	for (size_t i = 0; i < n; i++) {
		int lang = (int)(next() % 5), depth = 5 + (int)(next() % 56), kernel = 0;
		size_t len = (size_t)snprintf(buf, cap, "%s", roots[lang]);
		uint64_t path = (uint64_t)lang;

		if (lang < 4)
			kernel = (int)(next() % 9);
		for (int d = 1; d < depth; d++) {
			/* Few choices near the root, many further up: stacks share their first
			 * frames as real programs do, and fan out above. */
			unsigned width = d < 14 && d < depth - 1 ? 2u + (unsigned)d / 8 : 4000u;
			unsigned k = (unsigned)((path * 31 + next() % width) % 8640);
			int l = d >= depth - kernel || lang == 4 ? 4 : lang;

			path = path * 1000003 + k;
			len += (size_t)snprintf(buf + len, cap - len, ";");
			frame_name(name, sizeof(name), l, d, k);
			len += (size_t)snprintf(buf + len, cap - len, "%s", name);
		}
		lines[i].s = malloc(len + 1);
		memcpy(lines[i].s, buf, len + 1);
		lines[i].len = len;
	}
	qsort(lines, n, sizeof(*lines), by_bytes);
	for (size_t i = 0; i < n; i++) {
		const struct line *p = i ? &lines[i - 1] : NULL, *c = &lines[i];
		size_t common = 0, frames = 1;

		if (p && !by_bytes(p, c)) {
			distinct--; /* the same stack twice: one line, as stackcollapse prints */
			continue;
		}

		/* Distinct nodes: frames of this stack past the frames it shares with the previous. */
		for (size_t j = 0; j < c->len; j++)
			frames += c->s[j] == ';';
		if (p) {
			size_t j = 0, m = p->len < c->len ? p->len : c->len;

			for (; j < m && p->s[j] == c->s[j]; j++)
				if (c->s[j] == ';')
					common++;
			if (j == m && (j == c->len || c->s[j] == ';') && (j == p->len || p->s[j] == ';'))
				common++;
		}
		nodes += frames - (common < frames ? common : frames);
		fwrite(c->s, 1, c->len, stdout);
		printf(" %llu\n", (unsigned long long)(1 + next() % 50));
	}
	fprintf(stderr, "gen_folded: %zu distinct stacks, %zu tree nodes\n", distinct, nodes);
	return 0;
}
