/* Symbol tables read ahead on a thread (symbols/elf_preload.c, what the perf.data reader uses
 * for the files of its build-id list): a table taken from the thread must be the table read
 * directly (the same count, and the same name, offset and link-time address at a stride of
 * file offsets over the file); a file listed with another build-id, a missing file, a second
 * take and an unlisted file give nothing (the caller reads them itself); a file listed under
 * two paths is read once, one not reached yet when taken is left to the caller; freeing with tables not taken closes every descriptor. Real files of
 * a Debian root: libc, libstdc++ and the test binary itself. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/elf_preload.h"
#include "symbols/elf_syms.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBC_ALIAS "/lib/x86_64-linux-gnu/libc.so.6" /* /lib is usr/lib on Debian 12 */
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

static struct elf_syms *read_direct(const char *path)
{
	struct elf_src src = { .root = "", .path = path, .debug_root = "/usr/lib/debug",
			       .lazy_names = 1 };
	struct elf_syms *es = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || elf_syms__begin(fd, NULL, 0, &es))
		return NULL;
	if (elf_syms__load(es, &src)) {
		elf_syms__free(es);
		return NULL;
	}
	return es;
}

/* The build-id of path into id (64 bytes); its length, 0 when none. */
static size_t build_id(const char *path, unsigned char *id)
{
	struct elf_syms *es;
	const unsigned char *b;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || elf_syms__begin(fd, NULL, 0, &es))
		return 0;
	b = elf_syms__build_id(es, &n);
	if (b)
		memcpy(id, b, n);
	elf_syms__free(es);
	return b ? n : 0;
}

static bool take(struct elf_preload *pl, const char *path, struct elf_syms **es, int *load,
		 int *fd)
{
	struct stat st;

	*es = NULL;
	*fd = -1;
	return !stat(path, &st) && elf_preload__take(pl, st.st_dev, st.st_ino, es, load, fd);
}

/* The preloaded table against the one read directly, at a stride over the file. */
static void same_table(const char *path, const struct elf_syms *pre)
{
	struct elf_syms *direct = read_direct(path);
	size_t asked = 0, named = 0, differ = 0;
	struct stat st;

	CHECK(direct != NULL);
	if (!direct || stat(path, &st))
		return;
	CHECK(elf_syms__count(direct) == elf_syms__count(pre));
	for (uint64_t off = 0; off < (uint64_t)st.st_size; off += (uint64_t)st.st_size / 50000 + 1) {
		uint64_t oa = 0, ob = 0, va = 0, vb = 0;
		const char *a = elf_syms__find(direct, off, &oa, &va);
		const char *b = elf_syms__find(pre, off, &ob, &vb);

		asked++;
		named += a != NULL;
		if ((!a) != (!b) || va != vb || (a && (strcmp(a, b) || oa != ob)))
			differ++;
	}
	CHECK(differ == 0);
	CHECK(named > asked / 10); /* not two empty tables agreeing */
	printf("  %s: %zu symbols, %zu offsets asked, %zu named, %zu differ\n", path,
	       elf_syms__count(pre), asked, named, differ);
	elf_syms__free(direct);
}

TEST_CASE(preloaded_tables_are_the_tables)
{
	char self[PATH_MAX];
	unsigned char libc_id[64], cxx_id[64], wrong[20] = { 0 };
	size_t libc_len, cxx_len;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fds = harness_open_fds(), load, fd;
	struct elf_syms *es;
	struct elf_preload *pl;

	if (n <= 0 || access(LIBC, R_OK) || access(LIBSTDCXX, R_OK))
		SKIP_CASE("needs %s and %s (Debian 12)", LIBC, LIBSTDCXX);
	self[n] = '\0';
	libc_len = build_id(LIBC, libc_id);
	cxx_len = build_id(LIBSTDCXX, cxx_id);
	CHECK(libc_len > 0 && cxx_len > 0);
	const struct sym_preload files[] = {
		{ LIBC, libc_id, libc_len },
		{ LIBC_ALIAS, libc_id, libc_len }, /* the same inode: read once */
		{ self, NULL, 0 },		    /* no build-id asked: any */
		{ LIBSTDCXX, wrong, sizeof(wrong) }, /* another build-id: not this file */
		{ "/nonexistent/libfoo.so", NULL, 0 },
	};
	pl = elf_preload__start(files, sizeof(files) / sizeof(files[0]), "/usr/lib/debug", 0, 1);
	CHECK(pl != NULL);
	if (!pl)
		return;
	elf_preload__wait(pl); /* else a file not reached yet is the caller's to read */
	CHECK(take(pl, LIBC, &es, &load, &fd));
	CHECK(load == 0 && es != NULL && fd >= 0);
	if (es)
		same_table(LIBC, es);
	elf_syms__free(es);
	if (fd >= 0)
		close(fd);
	/* once: the alias is the same file, and a second take finds it taken */
	CHECK(!take(pl, LIBC_ALIAS, &es, &load, &fd));
	CHECK(!take(pl, LIBC, &es, &load, &fd));
	CHECK(take(pl, self, &es, &load, &fd));
	CHECK(load == 0 && es != NULL);
	if (es)
		same_table(self, es);
	elf_syms__free(es);
	if (fd >= 0)
		close(fd);
	/* the build-id differs: the caller reads it as it would have */
	CHECK(!take(pl, LIBSTDCXX, &es, &load, &fd));
	CHECK(es == NULL && fd < 0);
	/* never listed */
	CHECK(!take(pl, "/usr/bin/env", &es, &load, &fd));
	elf_preload__free(pl);
	CHECK(harness_open_fds() == fds);
}

/* A file the thread has not reached when it is asked for is the caller's to read; the thread
 * then skips it. */
TEST_CASE(not_reached_is_callers)
{
	const char *big = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";
	const struct sym_preload files[] = {
		{ big, NULL, 0 },
		{ LIBC, NULL, 0 },
	};
	struct elf_preload *pl;
	struct elf_syms *es;
	int load, fd;

	if (access(LIBC, R_OK) || access(big, R_OK))
		SKIP_CASE("needs %s and %s (make deps: clang)", LIBC, big);
	pl = elf_preload__start(files, 2, "/usr/lib/debug", 0, 1);
	CHECK(pl != NULL);
	if (!pl)
		return;
	/* libLLVM takes the thread milliseconds: libc, behind it, is not reached yet */
	CHECK(!take(pl, LIBC, &es, &load, &fd));
	elf_preload__wait(pl);
	CHECK(take(pl, big, &es, &load, &fd));
	CHECK(es != NULL && load == 0);
	CHECK(elf_syms__count(es) > 10000);
	elf_syms__free(es);
	if (fd >= 0)
		close(fd);
	CHECK(!take(pl, LIBC, &es, &load, &fd)); /* skipped, not read behind the caller's back */
	elf_preload__free(pl);
}

/* Freed while the thread may still be reading, nothing taken: no descriptor or table left
 * (ASan's leak check sees the tables). */
TEST_CASE(freed_untaken)
{
	const struct sym_preload files[] = {
		{ LIBSTDCXX, NULL, 0 },
		{ LIBC, NULL, 0 },
	};
	int fds = harness_open_fds();

	if (access(LIBC, R_OK) || access(LIBSTDCXX, R_OK))
		SKIP_CASE("needs %s and %s (Debian 12)", LIBC, LIBSTDCXX);
	for (int i = 0; i < 20; i++) {
		struct elf_preload *pl = elf_preload__start(files, 2, "/usr/lib/debug", 0, 1);

		CHECK(pl != NULL);
		if (i % 2 && pl) /* let it finish half of the times */
			usleep(20000);
		elf_preload__free(pl);
	}
	CHECK(harness_open_fds() == fds);
}

int main(void)
{
	RUN(preloaded_tables_are_the_tables);
	RUN(not_reached_is_callers);
	RUN(freed_untaken);
	HARNESS_EXIT();
}
