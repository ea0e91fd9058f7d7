/* ELF tables whose names stay in the mapped file (elf_src.lazy_names, as the perf.data reader
 * loads them) against the same tables with every name copied at load (the live view's): for
 * every symbol of the file, at its start, inside, at its end and past it, and at a stride over
 * the code, both must give the same name, offset and link-time address. Real files of a
 * Debian root with DEB_PKGS: libc (symbols from libc6-dbg's debuginfo too), libstdc++ and
 * libLLVM (.dynsym of C++ names, tens of thousands), the test binary itself (a full .symtab)
 * and Debian's go (no .symtab: the names of its .gopclntab). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/elf_syms.h"

static int load(const char *path, int lazy, struct elf_syms **out)
{
	struct elf_src src = { .root = "", .path = path, .debug_root = "/usr/lib/debug",
			       .lazy_names = lazy };
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*out = NULL;
	if (fd < 0)
		return -errno;
	err = elf_syms__begin(fd, NULL, 0, out);
	return err ? err : elf_syms__load(*out, &src);
}

struct cmp {
	const struct elf_syms *a, *b;
	size_t asked, named, differ;
};

/* Asks both tables for file offset off. */
static void ask(struct cmp *c, uint64_t off)
{
	uint64_t oa = 0, ob = 0, va = 0, vb = 0;
	const char *na = elf_syms__find(c->a, off, &oa, &va);
	const char *nb = elf_syms__find(c->b, off, &ob, &vb);

	c->asked++;
	c->named += na != NULL;
	if ((!na) != (!nb) || va != vb || (na && (strcmp(na, nb) || oa != ob))) {
		if (c->differ++ < 5)
			printf("  offset 0x%llx: copied %s+0x%llx, lazy %s+0x%llx\n",
			       (unsigned long long)off, na ? na : "(none)", (unsigned long long)oa,
			       nb ? nb : "(none)", (unsigned long long)ob);
	}
}

/* The file offset of link-time address v in elf's PT_LOAD segments; false when none. */
static bool file_offset(Elf *elf, uint64_t v, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && v >= ph.p_vaddr &&
		    v - ph.p_vaddr < ph.p_filesz) {
			*off = v - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* Asks around every function symbol of symbols_of (the image itself or its debuginfo), at
 * file offsets of image, and at a stride over image's executable segments. */
static void ask_file(struct cmp *c, Elf *image, Elf *symbols_of)
{
	Elf_Scn *scn = NULL;
	size_t n;

	while ((scn = elf_nextscn(symbols_of, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			uint64_t off;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    (GELF_ST_TYPE(s.st_info) != STT_FUNC && GELF_ST_TYPE(s.st_info) != STT_NOTYPE &&
			     GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC) ||
			    !file_offset(image, s.st_value, &off))
				continue;
			const int64_t around[] = { -1, 0, 1, 2, (int64_t)s.st_size / 2,
						   (int64_t)s.st_size - 1, (int64_t)s.st_size,
						   (int64_t)s.st_size + 64, 4096 };

			for (size_t k = 0; k < sizeof(around) / sizeof(around[0]); k++)
				ask(c, off + (uint64_t)around[k]);
		}
	}
	if (elf_getphdrnum(image, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t stride;

		if (!gelf_getphdr(image, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		stride = ph.p_filesz / 200000 + 1; /* at most 200k addresses a segment */
		for (uint64_t o = 0; o < ph.p_filesz; o += stride)
			ask(c, ph.p_offset + o);
	}
}

/* Loads path both ways and compares them; debug is its separate debuginfo (or NULL). */
static void compare(const char *path, const char *debug)
{
	struct elf_syms *copied = NULL, *lazy = NULL;
	struct cmp c = { 0 };
	int fd = -1, dfd = -1, ea, eb, fds = harness_open_fds();
	Elf *elf = NULL, *delf = NULL;

	ea = load(path, 0, &copied);
	eb = load(path, 1, &lazy);
	CHECK(ea == 0);
	CHECK(eb == 0);
	/* neither table holds a descriptor (Go's keeps its image's, for the unwinder) */
	if (!ea && !eb && !strstr(path, "/go"))
		CHECK(harness_open_fds() == fds);
	if (ea || eb)
		goto out;
	CHECK(elf_syms__count(copied) == elf_syms__count(lazy));
	CHECK(elf_syms__has_debuginfo(copied) == elf_syms__has_debuginfo(lazy));
	if (debug)
		CHECK(elf_syms__has_debuginfo(lazy));
	c.a = copied;
	c.b = lazy;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	CHECK(elf != NULL);
	if (!elf)
		goto out;
	ask_file(&c, elf, elf);
	if (debug) {
		dfd = open(debug, O_RDONLY | O_CLOEXEC);
		delf = dfd >= 0 ? elf_begin(dfd, ELF_C_READ_MMAP, NULL) : NULL;
		CHECK(delf != NULL);
		if (delf)
			ask_file(&c, elf, delf);
	}
	CHECK(c.differ == 0);
	/* not a comparison of two empty answers: most addresses asked are named */
	CHECK(c.named > c.asked / 2);
	printf("  %s: %zu symbols, %zu addresses asked, %zu named, %zu differ\n", path,
	       elf_syms__count(lazy), c.asked, c.named, c.differ);
out:
	if (delf)
		elf_end(delf);
	if (dfd >= 0)
		close(dfd);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	elf_syms__free(copied);
	elf_syms__free(lazy);
}

/* The separate debuginfo of path by its build-id under /usr/lib/debug, into buf; NULL when
 * there is none. */
static const char *debuginfo(const char *path, char *buf, size_t len)
{
	struct elf_syms *es;
	const unsigned char *id;
	size_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), at;

	if (fd < 0 || elf_syms__begin(fd, NULL, 0, &es))
		return NULL;
	id = elf_syms__build_id(es, &n);
	at = id ? snprintf(buf, len, "/usr/lib/debug/.build-id/%02x/", id[0]) : -1;
	for (size_t i = 1; id && i < n && at > 0 && (size_t)at < len; i++)
		at += snprintf(buf + at, len - at, "%02x", id[i]);
	if (at > 0 && (size_t)at < len)
		snprintf(buf + at, len - at, ".debug");
	elf_syms__free(es);
	return at > 0 && access(buf, R_OK) == 0 ? buf : NULL;
}

/* The first of paths that exists, resolved (Debian's go is a link into /usr/lib/go-1.xx). */
static const char *first_file(const char *const *paths, char *buf)
{
	for (; *paths; paths++)
		if (realpath(*paths, buf))
			return buf;
	return NULL;
}

TEST_CASE(libc_with_debuginfo)
{
	static const char *const libc[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
					    "/lib/x86_64-linux-gnu/libc.so.6", NULL };
	char path[PATH_MAX], dbg[PATH_MAX];

	if (!first_file(libc, path))
		NA_CASE("no x86-64 glibc at its Debian path");
	if (!debuginfo(path, dbg, sizeof(dbg)))
		SKIP_CASE("no debuginfo for libc (libc6-dbg: make deps)");
	compare(path, dbg);
}

TEST_CASE(cxx_dynsym)
{
	static const char *const cxx[] = { "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL };
	static const char *const llvm[] = { "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", NULL };
	char path[PATH_MAX];

	if (!first_file(cxx, path))
		SKIP_CASE("no libstdc++ (g++: make deps)");
	compare(path, NULL);
	if (!first_file(llvm, path))
		SKIP_CASE("no libLLVM-14 (clang: make deps)");
	compare(path, NULL);
}

TEST_CASE(full_symtab)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	CHECK(n > 0);
	if (n <= 0)
		return;
	path[n] = '\0';
	compare(path, NULL);
}

TEST_CASE(go_pclntab_names)
{
	static const char *const go[] = { "/usr/bin/go", "/usr/lib/go/bin/go", NULL };
	char path[PATH_MAX];

	if (!first_file(go, path))
		SKIP_CASE("no go (golang-go: make deps)");
	compare(path, NULL);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(libc_with_debuginfo);
	RUN(cxx_dynsym);
	RUN(full_symtab);
	RUN(go_pclntab_names);
	HARNESS_EXIT();
}
