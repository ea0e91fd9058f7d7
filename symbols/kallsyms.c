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
static bool hex8(const unsigned char *s, uint64_t *v)
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

/* Parses one line, line[0..end) without its newline, whose first tab is at tab (NULL: none);
 * 0 (skipped or added) or -ENOMEM. */
static int parse_line(struct kallsyms *ks, const char *line, const char *end, const char *tab,
		      size_t *nonzero)
{
	const char *p, *name, *name_end = tab ? tab : end;
	uint64_t addr;
	long tag = 0;
	char type;

	addr = hex_prefix(line, end, &p);
	if (p == line || end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return 0;
	type = p[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = p + 3;
	if (name > name_end)
		return 0; /* a tab before the name */
	if (tab) {
		const char *mod = tab + 1;
		size_t mlen = (size_t)(end - mod);

		if (mlen > 2 && mod[0] == '[' && mod[mlen - 1] == ']') {
			/* "[ext4]" is stored as is: it is the module name shown */
			tag = module_tag(ks, mod, mlen);
			if (tag < 0)
				return -ENOMEM;
		}
	}
	if (name_end == name)
		return 0;
	if (addr)
		(*nonzero)++;
	/* Of several names at one address, the core kernel's beats a module's, then the last
	 * one listed wins, as in perf (whose other names there are left with no size):
	 * __x64_sys_read over __do_sys_read and __ia32_sys_read, __pi_memcpy over memcpy. */
	return sym_table__add(ks->tab, addr, 0, name, (size_t)(name_end - name), tag,
			      (tag == 0 ? 1u << 31 : 0) |
				      (uint32_t)(sym_table__count(ks->tab) & 0x7fffffff));
}

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

/* Parses the whole lines of buf[0..len); returns how many bytes they took (the rest is a
 * partial line), or -ENOMEM. */
static long parse_block(struct kallsyms *ks, const char *buf, size_t len, size_t *nonzero)
{
	const char *p = buf, *end = buf + len, *nl, *tab;

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
		if (parse_line(ks, p, nl, tab, nonzero))
			return -ENOMEM;
		p = nl + 1;
	}
	return p - buf;
}

#define READ_BLOCK (256 * 1024)

/* Parses a regular file (perf's build-id cache copy of kallsyms) mapped whole: no copy, and
 * the table sized once from the file's size (its lines take ~44 bytes, a name half of it). */
static int load_mapped(struct kallsyms *ks, int fd, size_t size, size_t *nonzero)
{
	char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	const char *last;
	long used;
	int err = 0;

	if (map == MAP_FAILED)
		return -errno;
	if (sym_table__reserve(ks->tab, size / 40 + 16, size / 2 + 16)) {
		munmap(map, size);
		return -ENOMEM;
	}
	used = parse_block(ks, map, size, nonzero);
	last = map + used;
	if (used < 0) {
		err = -ENOMEM;
	} else if ((size_t)used < size) {
		/* the last line, without a newline */
		size_t n = size - (size_t)used;
		char *line = malloc(n + 1);

		if (!line || (memcpy(line, last, n), line[n] = '\n', parse_block(ks, line, n + 1,
									   nonzero) < 0))
			err = -ENOMEM;
		free(line);
	}
	munmap(map, size);
	return err;
}

/* Reads fd to its end, parsing as it goes (/proc/kallsyms, whose size is unknown and which
 * gives at most a page per read): whole lines straight from the buffer, which grows for a
 * line longer than itself. */
static int load_read(struct kallsyms *ks, int fd, size_t *nonzero)
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
		used = parse_block(ks, buf, fill, nonzero);
		if (used < 0) {
			err = -ENOMEM;
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
		err = load_read(ks, fd, &nonzero);
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
