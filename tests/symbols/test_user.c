/* User-space symbols: the test process itself (PIE, libc, vdso) and child processes built at run
 * time (stripped, separate debuginfo by build-id and by debuglink, C++, JIT map, deleted file,
 * non-ELF exec mapping, short-lived). Needs cc, strip and objcopy; g++ for the C++ case. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/symbols.h"

static char dir[64];
static int have_cxx;

__attribute__((noinline)) int user_test_func(int x)
{
	return x * 11 + 3;
}

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

struct child {
	pid_t pid;
	int in_fd;
	char names[8][32];
	uint64_t addrs[8];
	int n;
};

/* Starts argv[0] with pipes and reads its "name 0xADDR" lines up to "ready". 0 or -1. */
static int child_start(struct child *c, char *const argv[])
{
	int in[2], out[2];
	char line[256];
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	f = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), f)) {
		void *p = NULL;

		if (!strcmp(line, "ready\n"))
			break;
		if (c->n < 8 && sscanf(line, "%31s %p", c->names[c->n], &p) == 2)
			c->addrs[c->n++] = (uintptr_t)p;
	}
	fclose(f);
	return c->n ? 0 : -1;
}

/* Starts dir/bin with up to two arguments; path (128 bytes) gets its full path. 0 or -1. */
static int start_target(struct child *c, char *path, const char *bin, char *arg1, char *arg2)
{
	char *argv[] = { path, arg1, arg2, NULL };

	snprintf(path, 128, "%s/%s", dir, bin);
	return child_start(c, argv);
}

static uint64_t child_addr(const struct child *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			return c->addrs[i];
	return 0;
}

/* Closes the child's stdin so it exits, and reaps it. */
static void child_stop(struct child *c)
{
	int status;

	close(c->in_fd);
	waitpid(c->pid, &status, 0);
}

TEST_CASE(self_pie_function)
{
	struct sym_cache *sc = sym_cache__new();
	struct sym_info si;

	CHECK(sym_cache__user(sc, getpid(), (uintptr_t)user_test_func + 2, &si) == 0);
	CHECK_STR(si.name, "user_test_func");
	CHECK(ends_with(si.module, "/test_user"));
	CHECK(si.offset == 2);
	CHECK(si.kind == FRAME_USER);
	CHECK(ends_with(si.file, "test_user.c"));
	CHECK(si.line > 0);
	sym_cache__free(sc);
}

TEST_CASE(self_libc_function)
{
	struct sym_cache *sc = sym_cache__new();
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	struct sym_info si;

	CHECK(fn);
	CHECK(sym_cache__user(sc, getpid(), (uintptr_t)fn, &si) == 0);
	CHECK(!strcmp(si.name, "getpid") || !strcmp(si.name, "__getpid"));
	CHECK(strstr(si.module, "libc.so") != NULL);
	CHECK(si.offset == 0);
	sym_cache__free(sc);
}

TEST_CASE(self_vdso)
{
	struct sym_cache *sc = sym_cache__new();
	void *h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct sym_info si;

	CHECK(fn);
	if (fn) {
		CHECK(sym_cache__user(sc, getpid(), (uintptr_t)fn + 1, &si) == 0);
		CHECK(strstr(si.name, "clock_gettime") != NULL);
		CHECK_STR(si.module, "[vdso]");
		CHECK(si.offset == 1);
	}
	if (h)
		dlclose(h);
	sym_cache__free(sc);
}

TEST_CASE(child_functions)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128];
	struct sym_info si;
	struct child c;

	CHECK(!start_target(&c, path, "t_plain", NULL, NULL));
	CHECK(sym_cache__process_load(sc, c.pid) == 0);
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "target_alpha") + 1, &si) == 0);
	CHECK_STR(si.name, "target_alpha");
	CHECK_STR(si.module, path);
	CHECK(si.offset == 1);
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "target_beta"), &si) == 0);
	CHECK_STR(si.name, "target_beta");
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "getpid"), &si) == 0);
	CHECK(strstr(si.module, "libc.so") != NULL);
	CHECK(sym_cache__user(sc, c.pid, 0x10, &si) == -ENOENT);
	CHECK_STR(si.name, "[unknown]");
	CHECK(si.kind == FRAME_SPECIAL);
	child_stop(&c);
	sym_cache__free(sc);
}

/* The file offset of addr in pid's mapping, as /proc/PID/maps says. */
static uint64_t file_offset(int pid, uint64_t addr)
{
	char path[64], line[512];
	uint64_t res = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		uint64_t s, e, off;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &s, &e, &off) == 3 &&
		    addr >= s && addr < e)
			res = addr - s + off;
	}
	if (f)
		fclose(f);
	return res;
}

TEST_CASE(stripped_nofp)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128], want[64];
	struct sym_info si;
	struct child c;
	uint64_t a;

	CHECK(!start_target(&c, path, "t_stripped", NULL, NULL));
	a = child_addr(&c, "target_alpha");
	snprintf(want, sizeof(want), "t_stripped+0x%" PRIx64, file_offset(c.pid, a));
	CHECK(sym_cache__user(sc, c.pid, a, &si) == -ENOENT);
	CHECK_STR(si.name, want);
	CHECK_STR(si.module, path);
	CHECK(si.kind == FRAME_USER);
	/* libc is .dynsym-only on Debian */
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "getpid"), &si) == 0);
	CHECK(!strcmp(si.name, "getpid") || !strcmp(si.name, "__getpid"));
	child_stop(&c);
	sym_cache__free(sc);
}

static void debuginfo_case(const char *bin, const char *debug_root)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128];
	struct sym_info si;
	struct child c;

	CHECK(!sym_cache__set_debug_root(sc, debug_root));
	CHECK(!start_target(&c, path, bin, NULL, NULL));
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "target_beta") + 1, &si) == 0);
	CHECK_STR(si.name, "target_beta");
	CHECK(si.offset == 1);
	CHECK(ends_with(si.file, "sym_target.c"));
	CHECK(si.line > 0);
	child_stop(&c);
	sym_cache__free(sc);
}

TEST_CASE(debuginfo_build_id)
{
	char root[128];

	snprintf(root, sizeof(root), "%s/debugroot", dir);
	debuginfo_case("t_bid", root);
}

TEST_CASE(debuginfo_debuglink)
{
	char root[128];

	snprintf(root, sizeof(root), "%s/empty", dir);
	debuginfo_case("t_link", root);
}

TEST_CASE(cxx_demangled)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128];
	struct sym_info si;
	struct child c;

	CHECK(!start_target(&c, path, "sym_cxx", NULL, NULL));
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "bar") + 1, &si) == 0);
	CHECK_STR(si.name, "ns::Foo<int>::bar(int)");
	child_stop(&c);
	sym_cache__free(sc);
}

TEST_CASE(jit_map)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128], map[64];
	struct sym_info si;
	struct child c;
	uint64_t a;
	uint32_t gen;
	FILE *f;

	CHECK(!start_target(&c, path, "t_plain", "jit", NULL));
	a = child_addr(&c, "jit");
	CHECK(a);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", c.pid);
	f = fopen(map, "w");
	CHECK(f);
	if (f) {
		fprintf(f, "%" PRIx64 " 40 old_name\n", a + 0x100);
		fprintf(f, "%" PRIx64 " 40 jitted_func\n", a + 0x100);
		fprintf(f, "%" PRIx64 " 20 LazyCompile:*foo app.js:1\n", a + 0x200);
		fclose(f);
	}
	CHECK(sym_cache__process_load(sc, c.pid) == 0);
	CHECK(sym_cache__user(sc, c.pid, a + 0x110, &si) == 0);
	CHECK_STR(si.name, "jitted_func");
	CHECK_STR(si.module, "[jit]");
	CHECK(si.kind == FRAME_JIT);
	CHECK(si.offset == 0x10);
	CHECK(sym_cache__user(sc, c.pid, a + 0x21f, &si) == 0);
	CHECK_STR(si.name, "LazyCompile:*foo app.js:1");
	CHECK(sym_cache__user(sc, c.pid, a + 0x800, &si) == -ENOENT);
	CHECK_STR(si.name, "[unknown]");
	/* An unchanged map is not read again; a grown one is, and its newest lines win: a
	 * method's ranges (an inlining chain among them) unloaded, then other code in part of it. */
	gen = sym_cache__jit_gen(sc, c.pid);
	CHECK(gen > 0);
	CHECK(sym_cache__process_load(sc, c.pid) == 0);
	CHECK(sym_cache__jit_gen(sc, c.pid) == gen);
	f = fopen(map, "a");
	CHECK(f);
	if (f) {
		fprintf(f, "%" PRIx64 " 10 A.outer\n", a + 0x400);
		fprintf(f, "%" PRIx64 " 10 A.outer->B.inlined\n", a + 0x410);
		fprintf(f, "%" PRIx64 " 20 [unloaded]\n", a + 0x400);
		fprintf(f, "%" PRIx64 " 8 C.new\n", a + 0x408);
		fclose(f);
	}
	CHECK(sym_cache__process_load(sc, c.pid) == 0);
	CHECK(sym_cache__jit_gen(sc, c.pid) == gen + 1);
	CHECK(sym_cache__user(sc, c.pid, a + 0x40a, &si) == 0);
	CHECK_STR(si.name, "C.new");
	CHECK(sym_cache__user(sc, c.pid, a + 0x402, &si) == -ENOENT);
	CHECK(sym_cache__user(sc, c.pid, a + 0x414, &si) == -ENOENT);
	CHECK(sym_cache__user(sc, c.pid, a + 0x110, &si) == 0);
	CHECK_STR(si.name, "jitted_func");
	unlink(map);
	child_stop(&c);
	sym_cache__free(sc);
}

TEST_CASE(short_lived_child)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128];
	struct sym_info si;
	struct child c;

	CHECK(!start_target(&c, path, "t_plain", NULL, NULL));
	CHECK(sym_cache__process_load(sc, c.pid) == 0);
	child_stop(&c); /* exited and reaped: /proc/PID is gone */
	CHECK(kill(c.pid, 0) == -1);
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "target_alpha") + 3, &si) == 0);
	CHECK_STR(si.name, "target_alpha");
	CHECK(si.offset == 3);
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "getpid"), &si) == 0);
	CHECK(strstr(si.module, "libc.so") != NULL);
	sym_cache__free(sc);
}

TEST_CASE(deleted_binary)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128];
	struct sym_info si;
	struct child c;

	CHECK(!sh("cp %s/t_plain %s/t_deleted", dir, dir));
	CHECK(!start_target(&c, path, "t_deleted", NULL, NULL));
	unlink(path);
	CHECK(sym_cache__user(sc, c.pid, child_addr(&c, "target_alpha"), &si) == 0);
	CHECK_STR(si.name, "target_alpha");
	child_stop(&c);
	sym_cache__free(sc);
}

TEST_CASE(negative_cache)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128], file[128], want[64];
	struct sym_stats before, after;
	struct sym_info si;
	struct child c;
	uint64_t a;

	snprintf(file, sizeof(file), "%s/notelf.bin", dir);
	CHECK(!sh("head -c 8192 /dev/zero | tr '\\0' 'x' > %s", file));
	CHECK(!start_target(&c, path, "t_plain", "mmap", file));
	a = child_addr(&c, "mmap");
	CHECK(a);
	CHECK(sym_cache__process_load(sc, c.pid) == 0);
	sym_cache__stats(sc, &before);
	CHECK(before.elf_negative >= 1);
	for (int i = 0; i < 50; i++) {
		CHECK(sym_cache__user(sc, c.pid, a + 0x10, &si) == -ENOENT);
		CHECK_STR(si.name, "notelf.bin+0x10");
	}
	sym_cache__stats(sc, &after);
	CHECK(after.elf_opens == before.elf_opens);
	/* a second process mapping the same file shares the negative entry */
	struct child c2;

	CHECK(!start_target(&c2, path, "t_plain", "mmap", file));
	CHECK(sym_cache__user(sc, c2.pid, child_addr(&c2, "mmap") + 0x20, &si) == -ENOENT);
	snprintf(want, sizeof(want), "notelf.bin+0x20");
	CHECK_STR(si.name, want);
	sym_cache__stats(sc, &after);
	CHECK(after.elf_negative == before.elf_negative);
	child_stop(&c2);
	child_stop(&c);
	sym_cache__free(sc);
}

TEST_CASE(exit_frees_process_state)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128];
	struct sym_stats st1, st2, st3;
	struct child c;

	CHECK(!start_target(&c, path, "t_plain", NULL, NULL));
	CHECK(sym_cache__process_load(sc, c.pid) == 0);
	sym_cache__stats(sc, &st1);
	CHECK(st1.processes == 1);
	CHECK(st1.maps >= 2);
	CHECK(st1.elf_cached >= 2);
	child_stop(&c);
	sym_cache__process_exit(sc, c.pid);
	sym_cache__process_exit(sc, c.pid); /* unknown pid: no-op */
	sym_cache__stats(sc, &st2);
	CHECK(st2.processes == 0);
	CHECK(st2.maps == 0);
	CHECK(st2.elf_cached == st1.elf_cached); /* shared tables stay */
	CHECK(st2.mem_bytes < st1.mem_bytes);
	sym_cache__set_elf_cap(sc, 0);
	sym_cache__stats(sc, &st3);
	CHECK(st3.elf_cached == 0);
	CHECK(st3.elf_evictions == st1.elf_cached + st1.elf_negative);
	sym_cache__free(sc);
}

TEST_CASE(shared_across_processes)
{
	struct sym_cache *sc = sym_cache__new();
	char path[128];
	struct sym_stats st1, st2;
	struct sym_info si;
	struct child a, b;

	CHECK(!start_target(&a, path, "t_plain", NULL, NULL));
	CHECK(!start_target(&b, path, "t_plain", NULL, NULL));
	CHECK(sym_cache__process_load(sc, a.pid) == 0);
	sym_cache__stats(sc, &st1);
	CHECK(sym_cache__process_load(sc, b.pid) == 0);
	sym_cache__stats(sc, &st2);
	CHECK(st2.elf_opens == st1.elf_opens);
	CHECK(st2.elf_cached == st1.elf_cached);
	CHECK(sym_cache__user(sc, b.pid, child_addr(&b, "target_beta"), &si) == 0);
	CHECK_STR(si.name, "target_beta");
	child_stop(&a);
	child_stop(&b);
	sym_cache__free(sc);
}

static int build_targets(void)
{
	const char *src = "tests/tools/sym_target.c";
	const char *cc = "cc -O1 -g -fno-inline -fno-omit-frame-pointer";
	char bid[256] = "";
	FILE *f;

	if (sh("%s -o %s/t_plain %s -ldl", cc, dir, src) ||
	    sh("cc -O2 -fomit-frame-pointer -o %s/t_stripped %s -ldl && strip --strip-all %s/t_stripped",
	       dir, src, dir) ||
	    sh("%s -Wl,--build-id -o %s/t_bid %s -ldl && objcopy --only-keep-debug %s/t_bid %s/t_bid.dbg"
	       " && strip --strip-all %s/t_bid", cc, dir, src, dir, dir, dir) ||
	    sh("%s -Wl,--build-id=none -o %s/t_link %s -ldl && cd %s && objcopy --only-keep-debug t_link"
	       " t_link.debug && strip --strip-all t_link && objcopy --add-gnu-debuglink=t_link.debug t_link"
	       " && mkdir -p .debug empty && mv t_link.debug .debug/", cc, dir, src, dir))
		return -1;
	snprintf(bid, sizeof(bid), "readelf -n %s/t_bid | awk '/Build ID/ {print $3}'", dir);
	f = popen(bid, "r");
	if (!f || !fgets(bid, sizeof(bid), f) || strlen(bid) < 4) {
		if (f)
			pclose(f);
		return -1;
	}
	pclose(f);
	bid[strcspn(bid, "\n")] = 0;
	if (sh("mkdir -p %s/debugroot/.build-id/%.2s && mv %s/t_bid.dbg %s/debugroot/.build-id/%.2s/%s.debug",
	       dir, bid, dir, dir, bid, bid + 2))
		return -1;
	have_cxx = !sh("g++ -O1 -g -o %s/sym_cxx tests/symbols/sym_cxx.cc 2>/dev/null", dir);
	return 0;
}

int main(void)
{
	int ok;

	signal(SIGPIPE, SIG_IGN);
	strcpy(dir, "/tmp/galatop-sym.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	ok = !build_targets();
	RUN(self_pie_function);
	RUN(self_libc_function);
	RUN(self_vdso);
	if (ok) {
		RUN(child_functions);
		RUN(stripped_nofp);
		RUN(debuginfo_build_id);
		RUN(debuginfo_debuglink);
		if (have_cxx)
			RUN(cxx_demangled);
		else
			harness_skip("cxx_demangled", "g++ not installed (make deps)");
		RUN(jit_map);
		RUN(short_lived_child);
		RUN(deleted_binary);
		RUN(negative_cache);
		RUN(exit_frees_process_state);
		RUN(shared_across_processes);
	} else {
		printf("FAIL: build_targets: cc/strip/objcopy failed\n");
	}
	sh("rm -rf %s", dir);
	HARNESS_EXIT();
}
