/* CPython support (symbols/python.h): the location table decoder against the interpreter's own
 * co_positions(), the interpreter found in a live Debian python3 and its code objects named
 * from its memory (ids are addresses in CPython), and the merge of Python frames into native
 * stacks. The live parts use /usr/bin/python3 (3.11 on Debian 12) and SKIP without it (FAIL
 * under CI). */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/python.h"

#define PY "/usr/bin/python3"

/* A script printing, for functions of varied shapes, "firstlineno hex(linetable) line..." with
 * the line of every code unit (-1: none). */
static const char lines_script[] =
	"import sys\n"
	"def f(a):\n"
	"    x = [i * 2\n"
	"         for i in range(a)\n"
	"         if i % 3]\n"
	"    while a > 0:\n"
	"        a -= 1\n"
	"        if a == 5:\n"
	"            continue\n"
	"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
	"        x.append(\n"
	"            a)\n"
	"    try:\n"
	"        1 / 0\n"
	"    except ZeroDivisionError:\n"
	"        pass\n"
	"    return x\n"
	"for co in (f.__code__, compile('y = 1\\nz = (y +\\n 2)\\n', 'm', 'exec')):\n"
	"    ls = [-1 if p[0] is None else p[0] for p in co.co_positions()]\n"
	"    print(co.co_firstlineno, co.co_linetable.hex(), *ls)\n";

static int unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned b;

	while (h[0] && h[1] && n < cap && sscanf(h, "%2x", &b) == 1) {
		out[n++] = (uint8_t)b;
		h += 2;
	}
	return (int)n;
}

TEST_CASE(python_line_table)
{
	char cmd[4096], *line = NULL;
	size_t cap = 0;
	int tables = 0;
	FILE *f;

	if (access(PY, X_OK))
		SKIP_CASE("no %s (make deps installs python3)", PY);
	snprintf(cmd, sizeof(cmd), "%s -c \"$GT_SCRIPT\"", PY);
	setenv("GT_SCRIPT", lines_script, 1);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && getline(&line, &cap, f) > 0) {
		char hex[8192];
		uint8_t table[4096];
		int first, off, len, lasti = 0, wrong = 0, want;
		char *p;

		if (sscanf(line, "%d %8191s%n", &first, hex, &off) != 2)
			continue;
		len = unhex(hex, table, sizeof(table));
		for (p = line + off; sscanf(p, "%d%n", &want, &off) == 1; p += off, lasti++) {
			unsigned got = py_line(table, (size_t)len, first, lasti);

			if (got != (want < 0 ? 0u : (unsigned)want) && wrong++ < 3)
				printf("  lasti %d: line %u, python says %d\n", lasti, got, want);
		}
		CHECK(wrong == 0);
		CHECK(lasti > 5);
		tables++;
	}
	CHECK(tables == 2);
	if (f)
		CHECK(pclose(f) == 0);
	free(line);
	/* Before the first instruction: the first line. */
	CHECK(py_line((const uint8_t *)"", 0, 7, -1) == 7);
}

/* A live interpreter printing the ids (addresses) of code objects, then waiting. */
static const char live_script[] =
	"import sys, time\n"
	"class Outer:\n"
	"    def method(self):\n"
	"        pass\n"
	"def caf\xc3\xa9():\n"
	"    pass\n"
	"def \xe4\xb8\xad\xf0\xa0\x80\x80():\n"
	"    pass\n"
	"print(id(Outer.method.__code__), id(caf\xc3\xa9.__code__),\n"
	"      id(\xe4\xb8\xad\xf0\xa0\x80\x80.__code__), id(Outer), flush=True)\n"
	"time.sleep(60)\n";

TEST_CASE(python_live_names)
{
	unsigned long long ids[4] = { 0 };
	struct py_frame_name fn;
	struct py_runtime rt;
	struct py_names *pn;
	char why[256], path[] = "/tmp/gt_test_python_XXXXXX";
	int fds[2], fd, err;
	FILE *out;
	pid_t pid;

	if (access(PY, X_OK))
		SKIP_CASE("no %s (make deps installs python3)", PY);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, live_script, sizeof(live_script) - 1) == (ssize_t)sizeof(live_script) - 1);
	close(fd);
	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(PY, PY, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	CHECK(out && fscanf(out, "%llu %llu %llu %llu", &ids[0], &ids[1], &ids[2], &ids[3]) == 4);

	err = py_detect(pid, &rt, why, sizeof(why));
	CHECK(err == 0);
	if (err)
		printf("  py_detect: %d %s\n", err, why);
	CHECK(rt.version >> 16 >= 0x030b);
	CHECK(rt.runtime && rt.code_type);
	CHECK(py_detect(getpid(), &(struct py_runtime){ 0 }, NULL, 0) == -ENOENT);
	pn = py_names__new();
	CHECK(pn != NULL);
	if (!err && pn) {
		CHECK(py_names__frame(pn, pid, &rt, ids[0], -1, &fn) == 0);
		CHECK_STR(fn.name, "Outer.method");
		CHECK_STR(fn.file, path);
		CHECK(fn.line == 3);
		CHECK(py_names__frame(pn, pid, &rt, ids[1], -1, &fn) == 0);
		CHECK_STR(fn.name, "caf\xc3\xa9"); /* latin-1 storage */
		CHECK(fn.line == 5);
		CHECK(py_names__frame(pn, pid, &rt, ids[2], -1, &fn) == 0);
		CHECK_STR(fn.name, "\xe4\xb8\xad\xf0\xa0\x80\x80"); /* UCS-4 storage */
		/* Not a code object (a class), no object at all: refused. */
		CHECK(py_names__frame(pn, pid, &rt, ids[3], -1, &fn) == -ENOENT);
		CHECK_STR(fn.name, "[python]");
		CHECK(py_names__frame(pn, pid, &rt, 8, 0, &fn) == -ENOENT);
		/* Cached: still named once the process is gone, until forgotten. */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		CHECK(py_names__frame(pn, pid, &rt, ids[0], -1, &fn) == 0);
		CHECK_STR(fn.name, "Outer.method");
		py_names__forget(pn, pid);
		CHECK(py_names__frame(pn, pid, &rt, ids[0], -1, &fn) == -ENOENT);
		pid = 0;
	}
	py_names__free(pn);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (out)
		fclose(out);
	unlink(path);
}

/* Native stacks root first (E: the interpreter loop), Python frames innermost first. */
enum { A = 1, B, C, E, MARK, P0 = 100, P1, P2, P3 };

static size_t merge(const uint32_t *native, size_t n, size_t keep, const uint32_t *py,
		    const bool *entry, size_t np, uint32_t *out)
{
	bool eval[16];

	for (size_t i = 0; i < n; i++)
		eval[i] = native[i] == E;
	return py_merge(native, eval, n, keep, py, entry, np, out, 16);
}

#define CHECK_IDS(out, n, ...)                                                                    \
	do {                                                                                       \
		const uint32_t want_[] = { __VA_ARGS__ };                                          \
		CHECK((n) == sizeof(want_) / sizeof(want_[0]));                                    \
		CHECK(!memcmp((out), want_, sizeof(want_)));                                       \
	} while (0)

TEST_CASE(python_merge)
{
	const uint32_t py[] = { P0, P1, P2, P3 };
	const bool two_calls[] = { false, true, false, true };
	const bool one_call[] = { false, false, false, true };
	uint32_t out[16];
	size_t n;

	/* One native interpreter-loop frame per call: each replaced by its call's frames. */
	n = merge((const uint32_t[]){ A, E, B, E, C }, 5, 0, py, two_calls, 4, out);
	CHECK_IDS(out, n, A, P3, P2, B, P1, P0, C);
	/* The native walk cut short: the outer call goes to the root, after the marker. */
	n = merge((const uint32_t[]){ MARK, B, E, C }, 4, 1, py, two_calls, 4, out);
	CHECK_IDS(out, n, MARK, P3, P2, B, P1, P0, C);
	/* No interpreter-loop frame at all (a leaf in libc with a broken walk). */
	n = merge((const uint32_t[]){ C }, 1, 0, py, two_calls, 4, out);
	CHECK_IDS(out, n, P3, P2, P1, P0, C);
	/* More native loops than calls (a walk truncated): the innermost are matched. */
	n = merge((const uint32_t[]){ A, E, E }, 3, 0, py, one_call, 4, out);
	CHECK_IDS(out, n, A, E, P3, P2, P1, P0);
	/* The last frame closes its call even without an entry mark. */
	n = merge((const uint32_t[]){ E }, 1, 0, py, (const bool[]){ false, false, false, false },
		  4, out);
	CHECK_IDS(out, n, P3, P2, P1, P0);
	/* Capacity. */
	n = py_merge((const uint32_t[]){ A, E }, (const bool[]){ false, true }, 2, 0, py, one_call,
		     4, out, 3);
	CHECK_IDS(out, n, A, P3, P2);
}

int main(void)
{
	RUN(python_line_table);
	RUN(python_live_names);
	RUN(python_merge);
	HARNESS_EXIT();
}
