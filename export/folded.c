#include "folded.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../model/sanitize.h"
#include "../util/grow.h"

#define BLOCK_SIZE (1u << 20)
#define MAX_REPORTED 10 /* invalid lines reported one by one; the rest are summed up */
#define RELEASE_STEP (8u << 20) /* bytes of a mapped input given back at a time */

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || c == '\n';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Parses the decimal number s[0..len) ("12", "12.", "12.5") without the locale, which a TUI
 * may have set to use decimal commas. */
static double parse_decimal(const char *s, size_t len)
{
	double v = 0, scale = 1;
	size_t i = 0;

	for (; i < len && s[i] != '.'; i++)
		v = v * 10 + (s[i] - '0');
	for (i++; i < len; i++) {
		scale /= 10;
		v += (s[i] - '0') * scale;
	}
	return v;
}

/* Matches flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/ on s[0..*len): on success stores the
 * count, shrinks *len to the stack part and returns true. */
static bool take_count(const char *s, size_t *len, double *count)
{
	size_t end = *len, i = end, start;

	while (i > 0 && is_digit(s[i - 1]))
		i--;
	if (i > 0 && s[i - 1] == '.') {
		size_t dot = i - 1;

		i = dot;
		while (i > 0 && is_digit(s[i - 1]))
			i--;
		if (i == dot)
			return false; /* ".5" has no integer part */
	} else if (i == end) {
		return false;
	}
	start = i;
	if (start == 0 || !is_space(s[start - 1]))
		return false;
	*count = parse_decimal(s + start, end - start);
	*len = i - 1;
	return true;
}

struct reader {
	FILE *f;	 /* or, when NULL, lines straight from mem[0..mem_len) */
	const char *mem;
	size_t mem_len;
	bool release;	 /* mem is a mapping whose pages are given back once parsed */
	size_t released; /* mem[0..released) given back */
	char *block;
	size_t pos, fill;
	bool eof;
	char *line;
	size_t cap;
};

/* Gives back the pages of a mapped input before line, the lines before it being done with
 * (each is copied where it is kept). */
static void release_before(struct reader *r, const char *line)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	size_t to;

	if (!page || (page & (page - 1)) || ((uintptr_t)r->mem & (page - 1)))
		return;
	to = (size_t)(line - r->mem) & ~(size_t)(page - 1);
	if (to > r->released && !madvise((void *)(uintptr_t)(r->mem + r->released),
					 to - r->released, MADV_DONTNEED))
		r->released = to;
}

/* Returns the next line (without its newline) in *out, its length, or -1 at the end;
 * -2 on a read error, -3 on ENOMEM. Lines may hold NUL bytes and be of any length. */
static long read_line(struct reader *r, const char **out)
{
	size_t used = 0;

	if (!r->f) {
		const char *start = r->mem + r->pos, *nl;
		size_t n;

		if (r->pos >= r->mem_len)
			return -1;
		nl = memchr(start, '\n', r->mem_len - r->pos);
		n = nl ? (size_t)(nl - start) : r->mem_len - r->pos;
		if (r->release && r->pos - r->released >= RELEASE_STEP)
			release_before(r, start);
		r->pos += n + (nl ? 1 : 0);
		*out = start;
		return (long)n;
	}
	for (;;) {
		if (r->pos == r->fill) {
			if (r->eof)
				break;
			r->fill = fread(r->block, 1, BLOCK_SIZE, r->f);
			r->pos = 0;
			if (r->fill < BLOCK_SIZE) {
				if (ferror(r->f))
					return -2;
				r->eof = true;
			}
			if (!r->fill)
				break;
		}
		char *start = r->block + r->pos;
		size_t avail = r->fill - r->pos;
		char *nl = memchr(start, '\n', avail);
		size_t n = nl ? (size_t)(nl - start) : avail;

		if (nl && !used) {
			/* Common case: the whole line is inside the block. */
			r->pos += n + 1;
			*out = start;
			return (long)n;
		}
		if (ARRAY_GROW(r->line, r->cap, used + n + 1))
			return -3;
		memcpy(r->line + used, start, n);
		used += n;
		r->pos += n + (nl ? 1 : 0);
		if (nl) {
			*out = r->line;
			return (long)used;
		}
	}
	if (!used)
		return -1;
	*out = r->line; /* a last line without a newline */
	return (long)used;
}

/* folded_parse over r (a FILE or memory). */
static int parse(struct reader *rd, const char *name, const struct folded_opts *o,
		 folded_line_fn fn, void *ctx, struct folded_stats *stats)
{
	struct reader r = *rd;
	struct folded_stats st = { 0 };
	struct {
		unsigned long line;
		const char *why;
	} bad[MAX_REPORTED]; /* reported at the end, unless the input is mostly invalid */
	double sum = 0, sum2 = 0; /* so that no total can overflow to infinity */
	const char *line;
	long n;
	int ret = 0;

	r.block = r.f ? malloc(BLOCK_SIZE) : NULL;
	if (r.f && !r.block)
		return -ENOMEM;
	while ((n = read_line(&r, &line)) >= 0) {
		size_t len = (size_t)n;
		double count, count2 = -1;
		const char *why = NULL;

		st.lines++;
		while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
			len--;
		if (len == 0 || line[0] == '#')
			continue; /* comments: a header such as "# range: 10-15 s" */
		if (!take_count(line, &len, &count)) {
			why = "expected \"frame;frame;... COUNT\" with a decimal count at the end";
		} else {
			size_t len2 = len;
			double c1;

			if (take_count(line, &len2, &c1)) {
				count2 = count;
				count = c1;
				len = len2;
				st.two_column = true;
			}
			if (!isfinite(count) || !isfinite(count2))
				why = "count too large (overflows to infinity)";
			else if (!isfinite(sum + count) || !isfinite(sum2 + count2))
				why = "counts add up past the largest number (total overflows to infinity)";
		}
		if (why) {
			st.skipped++;
			if (o && o->strict) {
				fprintf(stderr, "%s:%lu: %s\n", name, st.lines, why);
				ret = -EINVAL;
				break;
			}
			if (st.skipped <= MAX_REPORTED) {
				bad[st.skipped - 1].line = st.lines;
				bad[st.skipped - 1].why = why;
			}
			continue;
		}
		st.stacks++;
		sum += count;
		if (count2 > 0)
			sum2 += count2;
		ret = fn(ctx, line, len, count, count2);
		if (ret)
			break;
	}
	if (n == -2)
		ret = -EIO;
	else if (n == -3)
		ret = -ENOMEM;
	if (!ret && st.skipped > st.stacks) {
		/* Mostly invalid: another format (a binary file, a log), not a profile. */
		if (!(o && o->quiet))
			fprintf(stderr, "%s: not folded stacks: %lu of %lu lines invalid "
				"(line %lu: %s)\n", name, st.skipped, st.skipped + st.stacks, bad[0].line, bad[0].why);
		ret = -EINVAL;
	} else if (!ret && !(o && o->quiet)) {
		for (unsigned long i = 0; i < st.skipped && i < MAX_REPORTED; i++)
			fprintf(stderr, "%s:%lu: %s; line skipped\n", name, bad[i].line,
				bad[i].why);
		if (st.skipped > MAX_REPORTED)
			fprintf(stderr, "%s: %lu more invalid lines skipped\n", name,
				st.skipped - MAX_REPORTED);
	}
	free(r.block);
	free(r.line);
	if (stats)
		*stats = st;
	return ret;
}

int folded_parse(FILE *f, const char *name, const struct folded_opts *o, folded_line_fn fn,
		 void *ctx, struct folded_stats *stats)
{
	struct reader r = { .f = f };

	return parse(&r, name, o, fn, ctx, stats);
}

/* Interns the frame key (printable: all its bytes printable ASCII) into *id, sanitized when it
 * needs to be. 0 or -ENOMEM. */
static int intern_frame(struct frames *ft, const struct strtab_key *key, bool printable,
			uint32_t *id)
{
	char *clean;

	if (printable || sanitize_is_clean(key->s, key->len))
		return frames__intern_names(ft, key, 1, id);
	clean = malloc(SANITIZE_MAX(key->len) + 1);
	if (!clean)
		return -ENOMEM;
	*id = frames__intern_name(ft, clean, sanitize_text(key->s, key->len, clean));
	free(clean);
	return *id == UINT32_MAX ? -ENOMEM : 0;
}

long folded_split(struct frames *ft, const char *stack, size_t len, uint32_t **frames,
		  size_t *cap)
{
	enum { BATCH = 16 };
	size_t n = 0, start = 0, k;
	struct strtab_key keys[BATCH];
	bool printable[BATCH], all;

	/* Like perl's split: empty fields are kept except trailing ones. */
	while (len > 0 && stack[len - 1] == ';')
		len--;
	if (len == 0)
		return 0;
	/* In batches: the names split off (each found, hashed and checked in one pass) and their
	 * slots prefetched by one call, then interned by another. */
	while (start <= len) {
		size_t used;

		k = frames__split_names(ft, stack + start, len - start, ';', keys, printable, BATCH,
					&used);
		start += used;
		all = true;
		for (size_t j = 0; j < k; j++)
			all &= printable[j];
		if (array_grow(frames, cap, n + k, sizeof(**frames)))
			return -ENOMEM;
		if (all) {
			if (frames__intern_names(ft, keys, k, *frames + n))
				return -ENOMEM;
		} else {
			for (size_t j = 0; j < k; j++)
				if (intern_frame(ft, &keys[j], printable[j], *frames + n + j))
					return -ENOMEM;
		}
		n += k;
	}
	return (long)n;
}

struct read_ctx {
	struct profile *p;
	bool reverse;
	uint32_t *frames;
	size_t cap;
	/* The previous stack and its node path: sorted input shares long prefixes, which are
	 * reused without hashing the same frames again. */
	char *prev;
	size_t prev_len, prev_cap;
	uint32_t *path; /* path[i] = node of frame i of prev */
	size_t path_len, path_cap;
};

static int add_line(void *vctx, const char *stack, size_t len, double count, double count2)
{
	struct read_ctx *c = vctx;
	struct frames *ft = profile__frames(c->p);
	size_t keep = 0, common = 0, from = 0;
	uint32_t node = PROFILE_ROOT;
	long n;

	if (!c->reverse && c->path_len) {
		size_t max = len < c->prev_len ? len : c->prev_len;

		/* The common prefix, 8 bytes at a time, then byte by byte. */
		while (max - common >= 8) {
			uint64_t a, b;

			memcpy(&a, stack + common, 8);
			memcpy(&b, c->prev + common, 8);
			if (a != b)
				break;
			common += 8;
		}
		while (common < max && stack[common] == c->prev[common])
			common++;
		/* Frame k is reusable when both stacks agree up to and including its ';'. */
		for (const char *semi = stack; keep < c->path_len &&
		     (semi = memchr(semi, ';', common - (size_t)(semi - stack))); semi++) {
			keep++;
			from = (size_t)(semi - stack) + 1;
		}
		if (keep)
			node = c->path[keep - 1];
	}
	n = folded_split(ft, stack + from, len - from, &c->frames, &c->cap);
	if (n < 0)
		return -ENOMEM;
	if (c->reverse) {
		for (long i = 0; i < n / 2; i++) {
			uint32_t t = c->frames[i];

			c->frames[i] = c->frames[n - 1 - i];
			c->frames[n - 1 - i] = t;
		}
	}
	/* No frames (an empty stack): the node stays, and path may still be NULL. */
	if (n > 0) {
		if (ARRAY_GROW(c->path, c->path_cap, keep + (size_t)n))
			return -ENOMEM;
		node = profile__child_path(c->p, node, c->frames, (size_t)n, c->path + keep);
		if (node == PROFILE_NONE)
			return -ENOMEM;
	}
	c->path_len = keep + (size_t)n;
	if (!c->reverse) {
		if (ARRAY_GROW(c->prev, c->prev_cap, len))
			return -ENOMEM;
		if (len) /* an empty stack ("; 5") leaves prev NULL: no memcpy from/to NULL */
			memcpy(c->prev, stack, len);
		c->prev_len = len;
		/* A trailing ';' run was dropped by split: do not let it pair with a frame. */
		while (c->prev_len && c->prev[c->prev_len - 1] == ';')
			c->prev_len--;
	}
	if (count2 >= 0 || profile__two_column(c->p)) {
		/* A one-column line inside differential input has not changed. */
		if (count2 < 0)
			count2 = count;
		if (profile__set_two_column(c->p))
			return -ENOMEM;
		profile__add_value(c->p, node, count, count2);
	} else {
		profile__add_value(c->p, node, count, 0);
	}
	return 0;
}

/* folded_read_profile over r (a FILE or memory). */
static int read_profile(struct reader *r, const char *name, const struct folded_opts *o,
			struct profile *p, struct folded_stats *stats)
{
	struct read_ctx c = { .p = p, .reverse = o && o->reverse };
	int ret = parse(r, name, o, add_line, &c, stats);

	free(c.frames);
	free(c.prev);
	free(c.path);
	return ret;
}

int folded_read_profile(FILE *f, const char *name, const struct folded_opts *o,
			struct profile *p, struct folded_stats *stats)
{
	struct reader r = { .f = f };

	return read_profile(&r, name, o, p, stats);
}

int folded_read_profile_mem(const char *buf, size_t len, const char *name,
			    const struct folded_opts *o, struct profile *p,
			    struct folded_stats *stats)
{
	struct reader r = { .mem = buf, .mem_len = len, .release = o && o->mapped };

	return read_profile(&r, name, o, p, stats);
}

/* Appends name escaped for a folded line: ';' -> U+037E (looks alike, is not a separator),
 * control bytes and invalid UTF-8 -> U+FFFD. */
static size_t escape_name(const char *s, size_t len, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < len) {
		size_t n = utf8_seq_len(p + i, len - i);

		if (n == 1 && p[i] == ';') {
			memcpy(out + o, "\xcd\xbe", 2);
			o += 2;
		} else if (n) {
			memcpy(out + o, p + i, n);
			o += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
		}
		i += n ? n : 1;
	}
	return o;
}

struct write_ctx {
	const struct profile *p;
	char *buf; /* all lines, NUL-separated */
	size_t used, cap;
	size_t *offs; /* start of each line in buf */
	size_t nlines, offs_cap;
	bool two;
	bool no_ident; /* leave out the identity frames ([Pod], [Con], [PID], threads) */
};

static bool is_ident(const struct frames *ft, uint32_t id)
{
	uint32_t k = frames__get(ft, id)->kind;

	return k == FRAME_POD || k == FRAME_CONTAINER || k == FRAME_PROCESS || k == FRAME_THREAD;
}

static int collect_line(void *vctx, const uint32_t *frames, size_t depth, double self,
			double self2)
{
	struct write_ctx *c = vctx;
	struct frames *ft = profile__frames(c->p);
	size_t need = 2 * 320 + 3; /* two counts, however large */

	while (c->no_ident && depth && is_ident(ft, frames[0])) {
		frames++;
		depth--;
	}
	if (!depth)
		return 0; /* a value on the identity frames alone: no stack to show */

	for (size_t i = 0; i < depth; i++)
		need += SANITIZE_MAX(frames__name_len(ft, frames[i])) + 1;
	if (ARRAY_GROW(c->buf, c->cap, c->used + need) ||
	    ARRAY_GROW(c->offs, c->offs_cap, c->nlines + 1))
		return -ENOMEM;
	c->offs[c->nlines++] = c->used;
	char *out = c->buf + c->used, *start = out;
	for (size_t i = 0; i < depth; i++) {
		if (i)
			*out++ = ';';
		out += escape_name(frames__name(ft, frames[i]), frames__name_len(ft, frames[i]), out);
	}
	/* A last frame ending in " 123" would read back as a count column: join its space. */
	if (out > start) {
		char *q = out;

		while (q > start && is_digit(q[-1]))
			q--;
		if (q < out && q > start && is_space(q[-1]) && (q - 1 == start || q[-2] != ';'))
			q[-1] = '_';
	}
	*out++ = '\0'; /* the stack is sorted on its own, then its counts follow */
	if (c->two)
		out += sprintf(out, " %.0f %.0f", self, self2);
	else
		out += sprintf(out, " %.0f", self);
	*out++ = '\0';
	c->used = (size_t)(out - c->buf);
	return 0;
}

static __thread const char *sort_buf;

static int line_cmp(const void *a, const void *b)
{
	/* Escaped stacks hold no NUL, so strcmp is byte order of the stacks alone. */
	return strcmp(sort_buf + *(const size_t *)a, sort_buf + *(const size_t *)b);
}

int folded_write(FILE *out, const struct profile *p)
{
	return folded_write_ex(out, p, false);
}

int folded_write_ex(FILE *out, const struct profile *p, bool no_ident)
{
	struct write_ctx c = { .p = p, .two = profile__two_column(p), .no_ident = no_ident };
	int ret = profile__for_each_stack(p, ORDER_NAME, collect_line, &c);

	if (!ret) {
		sort_buf = c.buf;
		if (c.nlines)
			qsort(c.offs, c.nlines, sizeof(*c.offs), line_cmp);
		for (size_t i = 0; i < c.nlines; i++) {
			const char *stack = c.buf + c.offs[i];
			double n = 0;

			/* Without identity frames, stacks of several threads may read the same:
			 * one line with their sum (single-column profiles). */
			while (no_ident && !c.two && i + 1 < c.nlines &&
			       !strcmp(stack, c.buf + c.offs[i + 1])) {
				n += strtod(stack + strlen(stack) + 1, NULL);
				stack = c.buf + c.offs[++i];
			}
			fputs(stack, out);
			if (n)
				fprintf(out, " %.0f", n + strtod(stack + strlen(stack) + 1, NULL));
			else
				fputs(stack + strlen(stack) + 1, out);
			putc('\n', out);
		}
		if (ferror(out))
			ret = -EIO;
	}
	free(c.buf);
	free(c.offs);
	return ret;
}
