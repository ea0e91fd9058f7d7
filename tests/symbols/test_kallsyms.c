/* Kernel symbols: the live /proc/kallsyms (as root) and a synthetic kallsyms file; plus the
 * sorted symbol table and the maps parser underneath. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include <sys/stat.h>
#include <sys/wait.h>

#include "symbols/kallsyms.h"
#include "symbols/proc_maps.h"
#include "symbols/symbols.h"
#include "symbols/symtab.h"

/* Finds the first kallsyms line matching type set types and (optionally) name/module-ness. */
static int find_ksym(const char *want_name, int want_module, uint64_t *addr, char *name,
		     char *module)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char t, n[256], m[256] = "";
		unsigned long long a;

		if (sscanf(line, "%llx %c %255s %255s", &a, &t, n, m) < 3 || !a)
			continue;
		if (t != 't' && t != 'T')
			continue;
		if (want_name && strcmp(n, want_name))
			continue;
		/* [bpf] and [__builtin__*] are not real modules and their symbols come and go */
		if (want_module && (!m[0] || !strcmp(m, "[bpf]") || !strncmp(m, "[__builtin", 10)))
			continue;
		*addr = a;
		strcpy(name, n);
		strcpy(module, m);
		found = 1;
	}
	fclose(f);
	return found;
}

TEST_CASE(kernel_schedule)
{
	struct sym_cache *sc = sym_cache__new();
	struct sym_info si;
	char name[256], mod[256];
	uint64_t addr;

	CHECK(sc);
	CHECK(find_ksym("schedule", 0, &addr, name, mod));
	CHECK(sym_cache__kernel(sc, addr + 4, &si) == 0);
	CHECK_STR(si.name, "schedule");
	CHECK_STR(si.module, "[kernel.kallsyms]");
	CHECK(si.offset == 4);
	CHECK(si.kind == FRAME_KERNEL);
	sym_cache__free(sc);
}

TEST_CASE(kernel_module_symbol)
{
	struct sym_cache *sc = sym_cache__new();
	struct sym_info si;
	char name[256], mod[256];
	uint64_t addr;
	struct sym_stats st;

	CHECK(find_ksym(NULL, 1, &addr, name, mod));
	CHECK(sym_cache__kernel(sc, addr, &si) == 0);
	CHECK_STR(si.module, mod);
	CHECK(si.offset == 0);
	CHECK(si.kind == FRAME_KERNEL);
	sym_cache__stats(sc, &st);
	CHECK(st.kernel_symbols > 1000);
	sym_cache__free(sc);
}

static char *write_tmp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/galatop-ksyms.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

TEST_CASE(kernel_synthetic_file)
{
	struct sym_cache *sc = sym_cache__new();
	struct sym_info si;
	char *path = write_tmp("ffffffff81001000 T second\n"
			       "ffffffff81000000 T first\n"
			       "ffffffff81000800 D some_data\n"
			       "ffffffff81002000 t _ZN2ns3Foo3barEi\n"
			       "ffffffff81003000 T _ZN4core3fmt5write17h0123456789abcdefE\n"
			       "ffffffffc0000000 t ext4_thing\t[ext4]\n"
			       "ffffffffc0000100 t ext4_other\t[ext4]\n");

	CHECK(path && !sym_cache__set_kallsyms_path(sc, path));
	CHECK(sym_cache__kernel(sc, 0xffffffff81000900, &si) == 0);
	CHECK_STR(si.name, "first"); /* data symbols are skipped */
	CHECK(si.offset == 0x900);
	CHECK(sym_cache__kernel(sc, 0xffffffff81001000, &si) == 0);
	CHECK_STR(si.name, "second");
	CHECK(sym_cache__kernel(sc, 0xffffffff81002010, &si) == 0);
	CHECK_STR(si.name, "ns::Foo::bar(int)");
	CHECK(sym_cache__kernel(sc, 0xffffffff81003010, &si) == 0);
	CHECK_STR(si.name, "core::fmt::write");
	CHECK(sym_cache__kernel(sc, 0xffffffffc0000104, &si) == 0);
	CHECK_STR(si.name, "ext4_other");
	CHECK_STR(si.module, "[ext4]");
	CHECK(si.offset == 4);
	CHECK(sym_cache__kernel(sc, 0xffffffffc0000010, &si) == 0);
	CHECK_STR(si.name, "ext4_thing");
	CHECK(sym_cache__kernel(sc, 0x1000, &si) == -ENOENT);
	CHECK_STR(si.name, "[unknown]");
	CHECK(si.kind == FRAME_SPECIAL);
	/* far beyond the last symbol: the gap bound keeps it unknown */
	CHECK(sym_cache__kernel(sc, 0xffffffffd0000000, &si) == -ENOENT);
	CHECK(si.name && si.module);
	if (path)
		unlink(path);
	sym_cache__free(sc);
}

TEST_CASE(kernel_hidden_addresses)
{
	struct sym_cache *sc = sym_cache__new();
	struct sym_info si;
	char *path = write_tmp("0000000000000000 T first\n0000000000000000 T second\n");

	CHECK(path && !sym_cache__set_kallsyms_path(sc, path));
	CHECK(sym_cache__kernel(sc, 0, &si) == -ENOENT);
	CHECK_STR(si.name, "[unknown]");
	CHECK_STR(si.module, "[kernel.kallsyms]");
	if (path)
		unlink(path);
	sym_cache__free(sc);
}

TEST_CASE(symtab_sizes_and_aliases)
{
	struct sym_table *t = sym_table__new();
	const struct sym_entry *e;

	CHECK(t);
	CHECK(!sym_table__add(t, 0x2000, 0, "zero_size", 9, 0, 1));
	CHECK(!sym_table__add(t, 0x1000, 0x10, "weak_alias", 10, 0, 2));
	CHECK(!sym_table__add(t, 0x1000, 0x10, "global_fn", 9, 0, 3));
	CHECK(!sym_table__add(t, 0x3000, 0x100, "big", 3, 0, 3));
	CHECK(!sym_table__add(t, 0x3010, 0x10, "nested", 6, 0, 3));
	sym_table__finish(t, 0x800);
	CHECK(sym_table__count(t) == 4);
	e = sym_table__find(t, 0x1008);
	CHECK(e && !strcmp(sym_table__name(t, e), "global_fn"));
	CHECK(!sym_table__find(t, 0x1010)); /* sized: ends at 0x1010 */
	e = sym_table__find(t, 0x27ff);	    /* zero size: extended, bounded by max_gap */
	CHECK(e && !strcmp(sym_table__name(t, e), "zero_size"));
	CHECK(!sym_table__find(t, 0x2800));
	e = sym_table__find(t, 0x3080); /* past nested, still inside big */
	CHECK(e && !strcmp(sym_table__name(t, e), "big"));
	e = sym_table__find(t, 0x3014);
	CHECK(e && !strcmp(sym_table__name(t, e), "nested"));
	CHECK(!sym_table__find(t, 0x10));
	sym_table__free(t);
}

/* Adds n symbols at starts drawn from nstarts addresses (so most have aliases), each with a
 * distinct prio, in the order perm gives; after finish every start must name its highest-prio
 * symbol, whatever the order (insertion, radix or qsort inside). */
static void check_sorted_order(size_t n, size_t nstarts, int order)
{
	struct sym_table *t = sym_table__new();
	uint32_t *best = calloc(nstarts, sizeof(*best)), *perm = malloc(n * sizeof(*perm));
	unsigned seed = 12345;
	char name[32];

	CHECK(t && best && perm);
	if (!t || !best || !perm)
		goto out;
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	if (order == 0) { /* shuffled */
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)(rand_r(&seed) % (i + 1));
			uint32_t x = perm[i];

			perm[i] = perm[j];
			perm[j] = x;
		}
	} else if (order == 1) { /* descending addresses */
		for (size_t i = 0; i < n / 2; i++) {
			uint32_t x = perm[i];

			perm[i] = perm[n - 1 - i];
			perm[n - 1 - i] = x;
		}
	}
	for (size_t k = 0; k < n; k++) {
		/* symbol i: start (i % nstarts) in ascending i order, prio a scramble of i */
		uint32_t i = perm[k], si = (uint32_t)(i * nstarts / n);
		uint32_t prio = (i * 2654435761u) >> 1;

		snprintf(name, sizeof(name), "s%u_%u", si, prio);
		CHECK(!sym_table__add(t, 0xffffffff81000000ull + 0x40ull * si, 0, name,
				      strlen(name), 0, prio));
		if (prio >= best[si])
			best[si] = prio;
	}
	sym_table__finish(t, 0x1000);
	CHECK(sym_table__count(t) == nstarts);
	for (uint32_t si = 0; si < nstarts; si++) {
		const struct sym_entry *e = sym_table__find(t, 0xffffffff81000000ull + 0x40ull * si + 1);

		snprintf(name, sizeof(name), "s%u_%u", si, best[si]);
		CHECK(e && !strcmp(sym_table__name(t, e), name));
	}
out:
	sym_table__free(t);
	free(best);
	free(perm);
}

TEST_CASE(symtab_sort_any_order)
{
	check_sorted_order(20000, 15000, 0); /* shuffled: radix sort, then ties by insertion */
	check_sorted_order(20000, 15000, 1); /* descending */
	check_sorted_order(20000, 15000, 2); /* ascending but for the aliases (kallsyms) */
	check_sorted_order(6000, 2, 0);	     /* thousands of aliases at one address */
}

TEST_CASE(kernel_file_last_line)
{
	struct sym_cache *sc = sym_cache__new();
	struct sym_info si;
	char *path = write_tmp("ffffffff81000000 T first\n"
			       "ffffffffc0000000 t mod_fn\t[mod]");

	CHECK(path && !sym_cache__set_kallsyms_path(sc, path));
	CHECK(sym_cache__kernel(sc, 0xffffffff81000010, &si) == 0);
	CHECK_STR(si.name, "first");
	CHECK(sym_cache__kernel(sc, 0xffffffffc0000004, &si) == 0);
	CHECK_STR(si.name, "mod_fn");
	CHECK_STR(si.module, "[mod]");
	if (path)
		unlink(path);
	sym_cache__free(sc);
}

/* sym_cache__kernel_prefetch names addrs[0..n) as the whole table does, address by address:
 * name, module, offset and return. Returns how many the table knows. */
static size_t check_prefetch_same(const char *path, const uint64_t *addrs, size_t n)
{
	struct sym_cache *table = sym_cache__new(), *ahead = sym_cache__new();
	uint64_t *copy = malloc((n ? n : 1) * sizeof(*copy));
	size_t differ = 0, known = 0;

	CHECK(table && ahead && copy);
	if (!table || !ahead || !copy)
		goto out;
	memcpy(copy, addrs, n * sizeof(*copy));
	if (path) {
		CHECK(!sym_cache__set_kallsyms_path(table, path));
		CHECK(!sym_cache__set_kallsyms_path(ahead, path));
	}
	CHECK(!sym_cache__kernel_prefetch(ahead, copy, n));
	for (size_t i = 0; i < n; i++) {
		struct sym_info a, b;
		int ra = sym_cache__kernel(table, addrs[i], &a);
		int rb = sym_cache__kernel(ahead, addrs[i], &b);

		known += !ra;
		if (ra != rb || strcmp(a.name, b.name) || strcmp(a.module, b.module) ||
		    (!ra && a.offset != b.offset)) {
			if (differ++ < 5)
				fprintf(stderr, "  %#" PRIx64 ": table %d %s %s +%#" PRIx64 ", ahead "
					"%d %s %s +%#" PRIx64 "\n", addrs[i], ra, a.name, a.module,
					a.offset, rb, b.name, b.module, b.offset);
		}
	}
	CHECK(differ == 0);
out:
	free(copy);
	sym_cache__free(table);
	sym_cache__free(ahead);
	return known;
}

TEST_CASE(kernel_prefetch_synthetic)
{
	/* out of order lines, aliases (core over module, then the last listed), data symbols,
	 * a gap past the bound, a last line without a newline */
	char *path = write_tmp("ffffffff81001000 T second\n"
			       "ffffffff81000000 T first\n"
			       "ffffffff81000000 t first_alias\n"
			       "ffffffff81000800 D some_data\n"
			       "ffffffff81002000 t _ZN2ns3Foo3barEi\n"
			       "ffffffff81002000 t mod_alias\t[ext4]\n"
			       "ffffffff81003000 T far\n"
			       "ffffffff81100000 T after_gap\n"
			       "ffffffffc0000100 t ext4_other\t[ext4]\n"
			       "ffffffffc0000000 t ext4_thing\t[ext4]\n"
			       "ffffffffc0000000 t ext4_thing2\t[ext4]");
	uint64_t addrs[] = { 0x1000, 0xffffffff80ffffff, 0xffffffff81000000, 0xffffffff81000900,
			     0xffffffff81001000, 0xffffffff81000fff, 0xffffffff81002010,
			     0xffffffff81003000, 0xffffffff81043000, 0xffffffff81042fff,
			     0xffffffff810fffff, 0xffffffff81100004, 0xffffffffc0000010,
			     0xffffffffc0000104, 0xffffffffc0000104, 0xffffffffd0000000 };
	struct sym_cache *sc = sym_cache__new();
	struct sym_info si;

	CHECK(path);
	if (!path)
		return;
	CHECK(check_prefetch_same(path, addrs, sizeof(addrs) / sizeof(addrs[0])) > 5);
	/* the names themselves, asked alone */
	CHECK(sc && !sym_cache__set_kallsyms_path(sc, path));
	CHECK(!sym_cache__kernel_prefetch(sc, (uint64_t[]){ 0xffffffffc0000010 }, 1));
	CHECK(sym_cache__kernel(sc, 0xffffffffc0000010, &si) == 0);
	CHECK_STR(si.name, "ext4_thing2");
	CHECK_STR(si.module, "[ext4]");
	CHECK(si.offset == 0x10);
	sym_cache__free(sc);
	unlink(path);
}

/* kallsyms as the kernel lists it, large enough for a few addresses to be found by binary
 * search: core symbols in address order (aliases one after the other, data symbols among
 * them), then module symbols in any order, one of them inside the core's range and one at a
 * core symbol's address. Each address alone must name as the table does. */
TEST_CASE(kernel_prefetch_sorted)
{
	const uint64_t core = 0xffffffff81000000ull, mods = 0xffffffffc0000000ull;
	size_t cap = 64 * 1024, len = 0, nprobe = 0;
	char *text = malloc(cap), *path;
	uint64_t probes[2000];
	unsigned seed = 7;

	CHECK(text);
	if (!text)
		return;
	for (unsigned i = 0; i < 600; i++) {
		uint64_t a = core + 0x40ull * i;

		len += (size_t)snprintf(text + len, cap - len, "%016" PRIx64 " %c sym%u\n", a,
					i % 11 == 5 ? 'D' : i % 2 ? 'T' : 't', i);
		if (i % 7 == 3)
			len += (size_t)snprintf(text + len, cap - len, "%016" PRIx64 " T alias%u\n",
						a, i);
		probes[nprobe++] = a;
		probes[nprobe++] = a + 1 + rand_r(&seed) % 0x3f;
		probes[nprobe++] = a - 1;
	}
	for (unsigned k = 0; k < 80; k++) {
		unsigned m = (k * 37) % 80; /* out of order */

		len += (size_t)snprintf(text + len, cap - len, "%016" PRIx64 " t mfn%u\t[mod%u]\n",
					(uint64_t)(mods + 0x100ull * m), m, m % 3);
		probes[nprobe++] = mods + 0x100ull * m + 8;
	}
	len += (size_t)snprintf(text + len, cap - len,
				"%016" PRIx64 " t inside\t[modx]\n%016" PRIx64 " t at_core\t[modx]\n"
				"%016" PRIx64 " t bpf_prog_1\t[bpf]", core + 0x40 * 100 + 0x10,
				core + 0x40 * 200, mods + 0x100000);
	probes[nprobe++] = core + 0x40 * 100 + 0x18;
	probes[nprobe++] = core + 0x40 * 200 + 4;
	probes[nprobe++] = mods + 0x100000 + 0x30;
	probes[nprobe++] = core - 0x1000;
	probes[nprobe++] = mods + 0x10000000;
	text[len] = '\0';
	path = write_tmp(text);
	CHECK(path);
	for (size_t i = 0, known = 0; path && i < nprobe; i++) {
		known += check_prefetch_same(path, &probes[i], 1);
		if (i == nprobe - 1)
			CHECK(known > nprobe / 2);
	}
	if (path)
		unlink(path);
	free(text);
}

/* A kallsyms that is not a regular file (/proc/kallsyms is read, not mapped): a FIFO. */
TEST_CASE(kernel_resolve_fifo)
{
	char dir[] = "/tmp/galatop-ksyms-fifo.XXXXXX", path[64];
	uint64_t addrs[] = { 0xffffffff81000010, 0xffffffff81001000, 0xffffffffc0000004 };
	struct kallsyms_hit hits[3];
	char *arena = NULL;
	pid_t child;
	int status;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	CHECK(!mkfifo(path, 0600));
	child = fork();
	if (child == 0) {
		FILE *f = fopen(path, "w");

		if (f)
			fputs("ffffffff81000000 T first\nffffffff81001000 t second\n"
			      "ffffffffc0000000 t mod_fn\t[mod]", f);
		_exit(f && !fclose(f) ? 0 : 1);
	}
	CHECK(child > 0);
	CHECK(!kallsyms__resolve(path, addrs, 3, hits, &arena));
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && !WEXITSTATUS(status));
	CHECK(hits[0].name && !strcmp(hits[0].name, "first") && hits[0].off == 0x10);
	CHECK(hits[1].name && !strcmp(hits[1].name, "second") && hits[1].off == 0);
	CHECK(hits[2].name && !strcmp(hits[2].name, "mod_fn") && hits[2].off == 4);
	CHECK(hits[2].module && !strcmp(hits[2].module, "[mod]"));
	CHECK_STR(hits[0].module, "[kernel.kallsyms]");
	free(arena);
	unlink(path);
	rmdir(dir);
}

/* Addresses over the live kallsyms (a copy: BPF programs come and go between two reads of
 * /proc/kallsyms): each text symbol's start, inside it and just before it, and some far from
 * any. */
TEST_CASE(kernel_prefetch_live)
{
	FILE *f = fopen("/proc/kallsyms", "r"), *copy;
	char path[] = "/tmp/galatop-ksyms-live.XXXXXX";
	int fd = mkstemp(path);
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0, line = 0;
	char buf[512];

	copy = fd >= 0 ? fdopen(fd, "w+") : NULL;
	CHECK(f && copy);
	if (!f || !copy)
		goto out;
	while (fgets(buf, sizeof(buf), f))
		fputs(buf, copy);
	rewind(copy);
	while (fgets(buf, sizeof(buf), copy)) {
		unsigned long long a;
		char t;

		if (line++ % 23 || sscanf(buf, "%llx %c", &a, &t) != 2 || !a)
			continue;
		if (n + 4 > cap) {
			cap = cap ? cap * 2 : 4096;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				break;
		}
		addrs[n++] = a;
		addrs[n++] = a + 3;
		addrs[n++] = a - 1;
		addrs[n++] = a + (1u << 20) * (line % 3);
	}
	fflush(copy);
	CHECK(addrs && n > 1000);
	if (addrs) {
		size_t known = 0;

		/* many addresses: the file read in full; few: found by binary search */
		CHECK(check_prefetch_same(path, addrs, n) > n / 2);
		for (size_t i = 0; i < n; i += 997)
			known += check_prefetch_same(path, addrs + i, n - i < 8 ? n - i : 8);
		CHECK(known > 0);
	}
out:
	if (f)
		fclose(f);
	if (copy)
		fclose(copy);
	else if (fd >= 0)
		close(fd);
	unlink(path);
	free(addrs);
}

TEST_CASE(maps_parse)
{
	const char *text =
		"55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234 /usr/bin/prog\n"
		"55d0c0001000-55d0c0005000 r-xp 00001000 08:01 1234 /usr/bin/prog\n"
		"7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n"
		"7f0000100000-7f0000200000 r-xp 00002000 fd:02 99 /tmp/my lib.so (deleted)\n"
		"7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0                  [vdso]\n";
	struct proc_map *maps = NULL;
	size_t n = 0;

	CHECK(!proc_maps__parse(text, strlen(text), &maps, &n));
	CHECK(n == 4);
	if (n == 4) {
		CHECK(maps[0].start == 0x55d0c0001000 && maps[0].pgoff == 0x1000);
		CHECK_STR(maps[0].path, "/usr/bin/prog");
		CHECK(maps[0].inode == 1234);
		CHECK_STR(maps[1].path, "");
		CHECK_STR(maps[2].path, "/tmp/my lib.so");
		CHECK(maps[2].deleted);
		CHECK_STR(maps[3].path, "[vdso]");
		CHECK(proc_maps__find(maps, n, 0x7f0000100010) == &maps[2]);
		CHECK(!proc_maps__find(maps, n, 0x55d0c0000010));
	}
	proc_maps__free(maps, n);
}

int main(void)
{
	uint64_t a;
	char n[256], m[256];

	if (find_ksym("schedule", 0, &a, n, m)) {
		RUN(kernel_schedule);
		RUN(kernel_prefetch_live);
		if (find_ksym(NULL, 1, &a, n, m))
			RUN(kernel_module_symbol);
		else
			harness_na("kernel_module_symbol", "no kernel module is loaded (nothing to name)");
	} else {
		harness_skip("kernel_schedule", "/proc/kallsyms hides addresses (needs root)");
		harness_skip("kernel_module_symbol", "/proc/kallsyms hides addresses (needs root)");
		harness_skip("kernel_prefetch_live", "/proc/kallsyms hides addresses (needs root)");
	}
	RUN(kernel_synthetic_file);
	RUN(kernel_hidden_addresses);
	RUN(kernel_prefetch_synthetic);
	RUN(kernel_prefetch_sorted);
	RUN(kernel_resolve_fifo);
	RUN(symtab_sizes_and_aliases);
	RUN(symtab_sort_any_order);
	RUN(kernel_file_last_line);
	RUN(maps_parse);
	HARNESS_EXIT();
}
