/* /proc/kallsyms reader: "ADDR TYPE NAME[\t[MODULE]]" lines; kallsyms has no sizes, so each symbol
 * extends to the next one (bounded, so gaps between modules stay unknown). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "symtab.h"
#include "util/grow.h"

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

/* The hex number at the start of s (strtoull's base 16 without its sign and spaces, which
 * kallsyms never has: 122k of them per read, where strtoull's locale handling costs); *end
 * is where it stops, s itself when there is no digit. */
static uint64_t hex_prefix(char *s, char **end)
{
	uint64_t v = 0;
	char *p = s;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2]))
		p += 2;
	for (;; p++) {
		unsigned d = (unsigned char)*p;

		if (d - '0' < 10)
			d -= '0';
		else if ((d | 0x20) - 'a' < 6)
			d = (d | 0x20) - 'a' + 10;
		else
			break;
		v = v << 4 | d;
	}
	*end = p;
	return v;
}

/* Parses one line; 0 (skipped or added) or -ENOMEM. */
static int parse_line(struct kallsyms *ks, char *line, size_t *nonzero)
{
	char *p, *name, *end, type;
	uint64_t addr;
	long tag = 0;

	addr = hex_prefix(line, &p);
	if (p == line || *p != ' ')
		return 0;
	type = p[1];
	if (!type || p[2] != ' ')
		return 0;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = p + 3;
	end = name + strcspn(name, "\t\n");
	if (*end == '\t') {
		char *mod = end + 1;
		size_t mlen = strcspn(mod, "\n");

		if (mlen > 2 && mod[0] == '[' && mod[mlen - 1] == ']') {
			/* "[ext4]" is stored as is: it is the module name shown */
			tag = module_tag(ks, mod, mlen);
			if (tag < 0)
				return -ENOMEM;
		}
	}
	if (end == name)
		return 0;
	if (addr)
		(*nonzero)++;
	/* Of several names at one address, the core kernel's beats a module's, then the last
	 * one listed wins, as in perf (whose other names there are left with no size):
	 * __x64_sys_read over __do_sys_read and __ia32_sys_read, __pi_memcpy over memcpy. */
	return sym_table__add(ks->tab, addr, 0, name, end - name, tag,
			      (tag == 0 ? 1u << 31 : 0) |
				      (uint32_t)(sym_table__count(ks->tab) & 0x7fffffff));
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct kallsyms *ks;
	size_t cap = 0, nonzero = 0;
	char *line = NULL;
	FILE *f;
	int err = 0;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* large reads: /proc/kallsyms gives 4 KiB per read at best, stdio asks for 1 KiB */
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	ks = calloc(1, sizeof(*ks));
	if (!ks || !(ks->tab = sym_table__new()) || module_tag(ks, "[kernel.kallsyms]", 17) != 0) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (getline(&line, &cap, f) > 0) {
		err = parse_line(ks, line, &nonzero);
		if (err)
			goto cleanup;
	}
	if (!nonzero) {
		err = -ENODATA;
		goto cleanup;
	}
	sym_table__finish(ks->tab, KSYM_MAX_GAP);
	*out = ks;
	ks = NULL;
cleanup:
	free(line);
	fclose(f);
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
