/* /proc/kallsyms reader: "ADDR TYPE NAME[\t[MODULE]]" lines; kallsyms has no sizes, so each symbol
 * extends to the next one (bounded, so gaps between modules stay unknown). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"
#include "symtab.h"
#include "util/grow.h"
#include "util/word.h"

#define KSYM_MAX_GAP (256 * 1024)
#define KSYM_LINE_BYTES 44 /* an average kallsyms line */

struct kallsyms {
	struct sym_table *tab;
	char **modules; /* index = entry tag; 0 is the core kernel */
	size_t nmodules, cap;
};

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	sym_table__free(ks->tab);
	for (size_t i = 0; i < ks->nmodules; i++)
		free(ks->modules[i]);
	free(ks->modules);
	free(ks);
}

/* Returns the tag of module "[name]" (added if new; modules come in runs, so the last one is
 * checked first), or -1 on ENOMEM. */
static long module_tag(struct kallsyms *ks, const char *name, size_t len)
{
	char *s;

	for (size_t i = ks->nmodules; i-- > 0;)
		if (strlen(ks->modules[i]) == len && !memcmp(ks->modules[i], name, len))
			return i;
	if (ARRAY_GROW(ks->modules, ks->cap, ks->nmodules + 1))
		return -1;
	s = strndup(name, len);
	if (!s)
		return -1;
	ks->modules[ks->nmodules] = s;
	return ks->nmodules++;
}

/* Hex digit values plus one; 0 for other bytes. */
static const unsigned char hex_digit[256] = {
	['0'] = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
	['a'] = 11, 12, 13, 14, 15, 16,
	['A'] = 11, 12, 13, 14, 15, 16,
};

/* Appends the 8 hex digits at s to *v (v << 32 | their value) when all 8 are hex digits, a
 * word at a time: each byte's range checks as carries into its top bit, the letters' +9 from
 * their 0x40 bit, then nibbles gathered pairwise. */
static inline __attribute__((always_inline)) bool hex8(const unsigned char *s, uint64_t *v)
{
	const uint64_t ones = 0x0101010101010101ULL, top = ones << 7;
	uint64_t w, l, digit, alpha, x;

	w = load_le(s);
	l = w | ones * 0x20;
	digit = (w + ones * (0x80 - '0')) & ~(w + ones * (0x7f - '9'));
	alpha = (l + ones * (0x80 - 'a')) & ~(l + ones * (0x7f - 'f'));
	if ((w & top) || ((digit | alpha) & top) != top)
		return false;
	x = (w & ones * 0x0f) + ((w >> 6) & ones) * 9;	/* a value per byte, first digit lowest */
	x = ((x & 0x000f000f000f000fULL) << 4) | ((x >> 8) & 0x000f000f000f000fULL);
	x = ((x & 0x000000ff000000ffULL) << 8) | ((x >> 16) & 0x000000ff000000ffULL);
	x = ((x & 0xffff) << 16) | ((x >> 32) & 0xffff);
	*v = *v << 32 | x;
	return true;
}

/* The hex number at the start of s[0..end) (strtoull's base 16 without its sign and spaces,
 * which kallsyms never has: 122k of them per read, where strtoull's locale handling costs);
 * *stop is where it stops, s itself when there is no digit. */
static uint64_t hex_prefix(const char *s, const char *end, const char **stop)
{
	const unsigned char *p = (const unsigned char *)s, *e = (const unsigned char *)end;
	uint64_t v = 0;
	unsigned d;

	if (e - p > 16 && hex8(p, &v) && hex8(p + 8, &v)) {
		p += 16; /* the common case: a 64-bit kernel's 16 digits */
		if (e > p && hex_digit[*p])
			for (; p < e && (d = hex_digit[*p]); p++)
				v = v << 4 | (d - 1);
		*stop = (const char *)p;
		return v;
	}
	v = 0;
	if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && hex_digit[p[2]])
		p += 2;
	for (; p < e && (d = hex_digit[*p]); p++)
		v = v << 4 | (d - 1);
	*stop = (const char *)p;
	return v;
}

/* The fields of one text symbol line of kallsyms. */
struct ksym_line {
	uint64_t addr;
	const char *name, *mod; /* mod: "[ext4]" as listed, NULL for the core kernel */
	size_t name_len, mod_len;
};

/* Parses line[0..end) without its newline, whose first tab is at tab (NULL: none): true for a
 * text symbol (types t, T, w, W) with a name, its fields in *l. */
static bool parse_fields(const char *line, const char *end, const char *tab, struct ksym_line *l)
{
	const char *p, *name_end = tab ? tab : end;
	char type;

	l->addr = hex_prefix(line, end, &p);
	if (p == line || end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return false;
	type = p[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return false;
	l->name = p + 3;
	if (l->name >= name_end)
		return false; /* no name, or a tab before it */
	l->name_len = (size_t)(name_end - l->name);
	l->mod = NULL;
	l->mod_len = 0;
	if (tab) {
		const char *mod = tab + 1;
		size_t mlen = (size_t)(end - mod);

		if (mlen > 2 && mod[0] == '[' && mod[mlen - 1] == ']') {
			l->mod = mod;
			l->mod_len = mlen;
		}
	}
	return true;
}

/* Adds the symbol of one line to ks's table; 0 or -ENOMEM. */
static int add_line(void *arg, const struct ksym_line *l)
{
	struct kallsyms *ks = arg;
	long tag = 0;

	if (l->mod) {
		/* "[ext4]" is stored as is: it is the module name shown */
		tag = module_tag(ks, l->mod, l->mod_len);
		if (tag < 0)
			return -ENOMEM;
	}
	/* Of several names at one address, the core kernel's beats a module's, then the last
	 * one listed wins, as in perf (whose other names there are left with no size):
	 * __x64_sys_read over __do_sys_read and __ia32_sys_read, __pi_memcpy over memcpy. */
	return sym_table__add(ks->tab, l->addr, 0, l->name, l->name_len, tag,
			      (tag == 0 ? 1u << 31 : 0) |
				      (uint32_t)(sym_table__count(ks->tab) & 0x7fffffff));
}

typedef int (*line_fn)(void *arg, const struct ksym_line *l);

/* The first byte below 0x0b (a tab, a newline, or rarer controls) in p[0..end), or end: a
 * word at a time, since it ends nearly every line's name. */
static const char *find_control(const char *p, const char *end)
{
	const uint64_t ones = 0x0101010101010101ULL;

	for (; end - p >= 8; p += 8) {
		uint64_t w = load_le(p), t;

		/* exact for the lowest flagged byte, the one taken */
		t = (w - ones * 0x0b) & ~w & (ones << 7);
		if (t)
			return p + __builtin_ctzll(t) / 8;
	}
	while (p < end && (unsigned char)*p >= 0x0b)
		p++;
	return p;
}

/* Calls fn(arg, ...) for each text symbol among the whole lines of buf[0..len), counting
 * those at a non-zero address in *nonzero; returns how many bytes the lines took (the rest is
 * a partial line), or fn's error. */
static long parse_block(const char *buf, size_t len, line_fn fn, void *arg, size_t *nonzero)
{
	const char *p = buf, *end = buf + len, *nl, *tab;
	struct ksym_line l;
	int err;

	while (p < end) {
		const char *c = find_control(p, end);

		if (c == end)
			break;
		if (*c == '\n') {
			nl = c;
			tab = NULL;
		} else {
			nl = memchr(c, '\n', (size_t)(end - c));
			if (!nl)
				break;
			tab = memchr(p, '\t', (size_t)(nl - p));
		}
		if (parse_fields(p, nl, tab, &l)) {
			*nonzero += l.addr != 0;
			err = fn(arg, &l);
			if (err)
				return err;
		}
		p = nl + 1;
	}
	return p - buf;
}

#define READ_BLOCK (256 * 1024)

/* Calls fn for each text symbol of text[0..len), whole in memory, as parse_block does; a last
 * line without a newline is parsed from a copy, left in *tail (the caller frees it after the
 * last use of what fn was given). 0 or fn's error (-ENOMEM). */
static int parse_text(const char *text, size_t len, line_fn fn, void *arg, size_t *nonzero,
		      char **tail)
{
	long used = parse_block(text, len, fn, arg, nonzero);
	size_t n;

	*tail = NULL;
	if (used < 0)
		return (int)used;
	if ((size_t)used == len)
		return 0;
	n = len - (size_t)used;
	*tail = malloc(n + 1);
	if (!*tail)
		return -ENOMEM;
	memcpy(*tail, text + used, n);
	(*tail)[n] = '\n';
	used = parse_block(*tail, n + 1, fn, arg, nonzero);
	return used < 0 ? (int)used : 0;
}

/* Parses a regular file (perf's build-id cache copy of kallsyms) mapped whole: no copy, and
 * the table sized once from the file's size (its lines take ~44 bytes, a name half of it). */
static int load_mapped(struct kallsyms *ks, int fd, size_t size, size_t *nonzero)
{
	char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0), *tail;
	int err;

	if (map == MAP_FAILED)
		return -errno;
	if (sym_table__reserve(ks->tab, size / 40 + 16, size / 2 + 16)) {
		munmap(map, size);
		return -ENOMEM;
	}
	err = parse_text(map, size, add_line, ks, nonzero, &tail);
	free(tail);
	munmap(map, size);
	return err;
}

/* Reads fd to its end, calling fn for each text symbol as parse_block does, block by block
 * (/proc/kallsyms, whose size is unknown and which gives at most a page per read): whole lines
 * straight from the buffer, which grows for a line longer than itself. keep(arg), when not
 * NULL, is called after each block's lines, before the buffer is reused: what fn was given
 * stays valid until then. 0, -errno of read(), or fn's or keep's error (-ENOMEM). */
static int load_read(int fd, line_fn fn, int (*keep)(void *arg), void *arg, size_t *nonzero)
{
	size_t cap = READ_BLOCK, fill = 0;
	char *buf = malloc(cap);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;
		long used;

		if (fill == cap && ARRAY_GROW(buf, cap, cap + 1)) {
			err = -ENOMEM;
			break;
		}
		n = read(fd, buf + fill, cap - fill);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0 && !fill)
			break;
		if (n == 0) {
			/* the last line, without a newline */
			if (fill == cap && ARRAY_GROW(buf, cap, cap + 1)) {
				err = -ENOMEM;
				break;
			}
			buf[fill++] = '\n';
		} else {
			fill += (size_t)n;
			if (cap - fill >= 4096)
				continue; /* fill the buffer before parsing it */
		}
		used = parse_block(buf, fill, fn, arg, nonzero);
		if (used >= 0 && keep)
			err = keep(arg);
		if (used < 0 || err) {
			err = err ? err : (int)used;
			break;
		}
		memmove(buf, buf + used, fill - (size_t)used);
		fill -= (size_t)used;
		if (n == 0)
			break;
	}
	free(buf);
	return err;
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct kallsyms *ks;
	size_t nonzero = 0;
	struct stat st;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ks = calloc(1, sizeof(*ks));
	if (!ks || !(ks->tab = sym_table__new()) || module_tag(ks, "[kernel.kallsyms]", 17) != 0) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < SIZE_MAX / 2)
		err = load_mapped(ks, fd, (size_t)st.st_size, &nonzero);
	else
		err = load_read(fd, add_line, NULL, ks, &nonzero);
	if (err)
		goto cleanup;
	if (!nonzero) {
		err = -ENODATA;
		goto cleanup;
	}
	sym_table__finish(ks->tab, KSYM_MAX_GAP);
	*out = ks;
	ks = NULL;
cleanup:
	close(fd);
	kallsyms__free(ks);
	return err;
}

const char *kallsyms__find(const struct kallsyms *ks, uint64_t addr, uint64_t *off,
			   const char **module)
{
	const struct sym_entry *e = sym_table__find(ks->tab, addr);

	if (!e)
		return NULL;
	*off = addr - e->start;
	*module = ks->modules[e->tag];
	return sym_table__name(ks->tab, e);
}

size_t kallsyms__count(const struct kallsyms *ks)
{
	return sym_table__count(ks->tab);
}

size_t kallsyms__mem(const struct kallsyms *ks)
{
	size_t n = sizeof(*ks) + sym_table__mem(ks->tab) + ks->cap * sizeof(*ks->modules);

	for (size_t i = 0; i < ks->nmodules; i++)
		n += strlen(ks->modules[i]) + 1;
	return n;
}

/* ---- naming a few addresses by one pass ---- */

/* The best symbol seen so far among those starting in (addrs[i - 1], addrs[i]]. */
struct ksym_best {
	uint64_t start;
	uint64_t prio; /* as add_line ranks aliases: the core kernel's, then the last listed */
	const char *name, *mod; /* in the block being parsed, while in_block */
	size_t name_at, mod_at; /* else in the kept names (mod_at SIZE_MAX: the core kernel) */
	uint32_t name_len, mod_len;
	bool set, in_block;
};

struct resolve {
	const uint64_t *addrs;
	size_t n;
	struct ksym_best *best;
	size_t cur;   /* the bucket of the last symbol: kallsyms is nearly in address order */
	uint64_t seq; /* symbols seen */
	size_t *touched; /* buckets whose best is in the block being parsed */
	size_t ntouched;
	char *kept; /* names of the buckets' bests, copied out of past blocks */
	size_t kept_len, kept_cap;
};

/* Keeps the symbol of one line when it is the best so far of its bucket: the addresses it can
 * name are the ones from the first at or above it up to the next symbol, and only the last
 * start at or below each address counts, so each bucket keeps its highest start. */
static int resolve_line(void *arg, const struct ksym_line *l)
{
	struct resolve *r = arg;
	uint64_t prio = (l->mod ? 0 : 1ull << 63) | r->seq++;
	struct ksym_best *b;
	size_t i = r->cur, lo, hi;

	if (l->addr > r->addrs[r->n - 1])
		return 0;
	if (!(l->addr <= r->addrs[i] && (i == 0 || l->addr > r->addrs[i - 1]))) {
		for (lo = 0, hi = r->n - 1; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (r->addrs[mid] < l->addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		r->cur = i = lo;
	}
	b = &r->best[i];
	if (b->set && (l->addr < b->start || (l->addr == b->start && prio < b->prio)))
		return 0;
	if (!b->in_block)
		r->touched[r->ntouched++] = i;
	*b = (struct ksym_best){ .start = l->addr, .prio = prio, .name = l->name, .mod = l->mod,
				 .name_len = (uint32_t)l->name_len,
				 .mod_len = (uint32_t)l->mod_len, .set = true, .in_block = true };
	return 0;
}

/* Copies s[0..len) and a NUL to the kept names: its offset there, or SIZE_MAX on ENOMEM. */
static size_t keep_str(struct resolve *r, const char *s, size_t len)
{
	size_t at = r->kept_len;

	if (ARRAY_GROW(r->kept, r->kept_cap, at + len + 1))
		return SIZE_MAX;
	memcpy(r->kept + at, s, len);
	r->kept[at + len] = '\0';
	r->kept_len += len + 1;
	return at;
}

/* The block parsed is about to be reused: the names of the bests found in it are copied out.
 * 0 or -ENOMEM. */
static int resolve_keep(void *arg)
{
	struct resolve *r = arg;

	for (size_t k = 0; k < r->ntouched; k++) {
		struct ksym_best *b = &r->best[r->touched[k]];

		b->name_at = keep_str(r, b->name, b->name_len);
		b->mod_at = b->mod ? keep_str(r, b->mod, b->mod_len) : SIZE_MAX - 1;
		if (b->name_at == SIZE_MAX || b->mod_at == SIZE_MAX)
			return -ENOMEM;
		b->in_block = false;
	}
	r->ntouched = 0;
	return 0;
}

/* Fills hits from the buckets: each address takes the best symbol of its own bucket or, when
 * empty, of the closest one below, within the gap bound of kallsyms__find. */
static void resolve_fill(const struct resolve *r, struct kallsyms_hit *hits)
{
	const struct ksym_best *cur = NULL;

	for (size_t i = 0; i < r->n; i++) {
		if (r->best[i].set)
			cur = &r->best[i];
		if (cur && r->addrs[i] - cur->start < KSYM_MAX_GAP)
			hits[i] = (struct kallsyms_hit){
				.name = r->kept + cur->name_at,
				.module = cur->mod_at == SIZE_MAX - 1 ? "[kernel.kallsyms]"
								      : r->kept + cur->mod_at,
				.off = r->addrs[i] - cur->start };
		else
			hits[i] = (struct kallsyms_hit){ 0 };
	}
}

/* ---- few addresses: binary search among the core kernel's lines ---- */

/* The start of the line after the one at (end when none). */
static size_t next_line(const char *t, size_t at, size_t end)
{
	const char *nl = memchr(t + at, '\n', end - at);

	return nl ? (size_t)(nl - t) + 1 : end;
}

/* The start of the first line at or after byte at. */
static size_t line_at(const char *t, size_t at, size_t end)
{
	return at == 0 || t[at - 1] == '\n' ? at : next_line(t, at, end);
}

/* Parses the line at at: true for a text symbol, its fields in *l (as parse_block gives
 * them). */
static bool line_fields(const char *t, size_t at, size_t end, struct ksym_line *l)
{
	const char *p = t + at, *nl = memchr(p, '\n', end - at);

	if (!nl)
		nl = t + end;
	return parse_fields(p, nl, memchr(p, '\t', (size_t)(nl - p)), l);
}

/* Whether the line at at lists a module symbol (or is past the core kernel's: a tab). */
static bool line_past_core(const char *t, size_t at, size_t end, uint64_t a)
{
	const char *p = t + at, *nl = memchr(p, '\n', end - at);

	(void)a;
	return memchr(p, '\t', (nl ? (size_t)(nl - p) : end - at)) != NULL;
}

/* Whether the line at at starts above address a. */
static bool line_above(const char *t, size_t at, size_t end, uint64_t a)
{
	const char *stop, *nl = memchr(t + at, '\n', end - at);

	return hex_prefix(t + at, nl ? nl : t + end, &stop) > a;
}

/* The first line in [lo, hi) (both line starts) where pred(a) holds, pred being false then
 * true along the lines: halved down to a few lines, then line by line. hi when none. */
static size_t first_line(const char *t, size_t lo, size_t hi, size_t end,
			 bool (*pred)(const char *, size_t, size_t, uint64_t), uint64_t a)
{
	while (hi - lo > 512) {
		size_t mid = line_at(t, lo + (hi - lo) / 2, end);

		if (mid >= hi)
			break;
		if (pred(t, mid, end, a))
			hi = mid;
		else
			lo = next_line(t, mid, end);
	}
	while (lo < hi && !pred(t, lo, end, a))
		lo = next_line(t, lo, end);
	return lo;
}

/* first_line for an answer likely near lo (that of the previous of ascending addresses):
 * windows from lo that double until one holds it, then a binary search in that one. */
static size_t first_line_near(const char *t, size_t lo, size_t hi, size_t end,
			      bool (*pred)(const char *, size_t, size_t, uint64_t), uint64_t a)
{
	for (size_t step = 4096; hi - lo > step; step *= 2) {
		size_t probe = line_at(t, lo + step, end);

		if (probe >= hi)
			break;
		if (pred(t, probe, end, a))
			return first_line(t, lo, probe, end, pred, a);
		lo = next_line(t, probe, end);
	}
	return first_line(t, lo, hi, end, pred, a);
}

/* Adds to r the last text symbol of the core kernel's lines [0, core) starting at or below a,
 * found by binary search from *from (the line found for a smaller address, which it then
 * becomes): the kernel lists them in address order (scripts/kallsyms sorts them for its own
 * binary searches), aliases one after the other. 0, or fn's error. */
static int resolve_core(struct resolve *r, const char *t, size_t core, size_t end, uint64_t a,
			size_t *nonzero, size_t *from)
{
	size_t at = first_line_near(t, *from, core, end, line_above, a);
	struct ksym_line l;

	*from = at;
	while (at > 0) {
		const char *nl = memrchr(t, '\n', at - 1);

		at = nl ? (size_t)(nl - t) + 1 : 0;
		if (line_fields(t, at, end, &l)) {
			*nonzero += l.addr != 0;
			return resolve_line(r, &l);
		}
	}
	return 0;
}

/* Names r's addresses from kallsyms text t[0..size), mapped: each by binary search among the
 * core kernel's lines, then the modules' lines (a tab each, after the core's, in any order)
 * read in full. 0 or -ENOMEM. */
static int resolve_sorted(struct resolve *r, const char *t, size_t size, size_t *nonzero)
{
	size_t core = first_line(t, 0, size, size, line_past_core, 0);
	char *tail = NULL;
	int err = parse_text(t + core, size - core, resolve_line, r, nonzero, &tail);

	for (size_t i = 0, from = 0; !err && i < r->n; i++)
		err = resolve_core(r, t, core, size, r->addrs[i], nonzero, &from);
	if (!err)
		err = resolve_keep(r);
	free(tail);
	return err;
}

int kallsyms__resolve(const char *path, const uint64_t *addrs, size_t n,
		      struct kallsyms_hit *hits, char **arena)
{
	struct resolve r = { .addrs = addrs, .n = n };
	size_t nonzero = 0;
	struct stat st;
	char *map;
	int fd, err;

	*arena = NULL;
	if (!n)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r.best = calloc(n, sizeof(*r.best));
	r.touched = malloc(n * sizeof(*r.touched));
	if (!r.best || !r.touched) {
		err = -ENOMEM;
	} else if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
		   (uint64_t)st.st_size < SIZE_MAX / 2 &&
		   n <= (size_t)st.st_size / KSYM_LINE_BYTES / 64 &&
		   (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) !=
			   MAP_FAILED) {
		/* a file (perf's copy) and few addresses: each found by binary search */
		err = resolve_sorted(&r, map, (size_t)st.st_size, &nonzero);
		munmap(map, (size_t)st.st_size);
	} else {
		/* read, not mapped: a block reused in cache costs less than mapping 5 MB */
		err = load_read(fd, resolve_line, resolve_keep, &r, &nonzero);
	}
	close(fd);
	if (!err && !nonzero)
		err = -ENODATA;
	if (!err)
		resolve_fill(&r, hits);
	free(r.best);
	free(r.touched);
	if (err)
		free(r.kept);
	else
		*arena = r.kept;
	return err;
}
