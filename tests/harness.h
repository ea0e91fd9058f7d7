/* Tiny unit-test harness: each CHECK prints nothing when it holds and "  check failed:
 * file:line: expr" when it does not; TEST_CASE(name) groups checks and prints one closing line:
 * "PASS: name", "FAIL: name", "SKIP: name: why" (SKIP_CASE: cannot run here; FAIL under CI) or
 * "N/A: name: why" (NA_CASE: does not apply to this machine by nature). tests/run.sh counts
 * those lines; a case that did not run is never PASS. */
#ifndef GALATOP_TESTS_HARNESS_H
#define GALATOP_TESTS_HARNESS_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_case_failed;
static int harness_failed_cases;
static const char *harness_case_kind; /* NULL when the case ran; "SKIP" or "N/A" */
static char harness_case_why[512];

/* True when CI is set to anything but "", "0" or "false" (as `ci` in tests/lib.sh). */
static inline int harness_ci(void)
{
	const char *ci = getenv("CI");

	return ci && *ci && strcmp(ci, "0") && strcmp(ci, "false");
}

/* Open descriptors of this process (with the one reading the list): to check that code under
 * test closes what it opens. */
static inline int harness_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* A case that cannot run here (a missing tool, privilege or resource): "SKIP: name: why", or
 * under CI "FAIL: name: cannot run under CI: why", counted as a failed case (make deps installs
 * every tool a test needs, so a CI run cannot go green by skipping). */
static inline void harness_skip(const char *name, const char *why)
{
	if (harness_ci()) {
		printf("FAIL: %s: cannot run under CI: %s\n", name, why);
		harness_failed_cases++;
	} else {
		printf("SKIP: %s: %s\n", name, why);
	}
	fflush(stdout);
}

/* A case that does not apply to this machine by nature (a cgroup-v1 case on a cgroup-v2
 * machine): "N/A: name: why", neither a pass nor a failure. */
static inline void harness_na(const char *name, const char *why)
{
	printf("N/A: %s: %s\n", name, why);
	fflush(stdout);
}

/* Inside a TEST_CASE: say why the case cannot run (SKIP_CASE) or does not apply (NA_CASE), and
 * return from it; its closing line is then SKIP or N/A (FAIL if a check failed before). */
#define SKIP_CASE(...) HARNESS_LEAVE_CASE("SKIP", __VA_ARGS__)
#define NA_CASE(...) HARNESS_LEAVE_CASE("N/A", __VA_ARGS__)
#define HARNESS_LEAVE_CASE(kind, ...)                                                        \
	do {                                                                                 \
		harness_case_kind = kind;                                                    \
		snprintf(harness_case_why, sizeof(harness_case_why), __VA_ARGS__);          \
		return;                                                                      \
	} while (0)

static inline void harness_end_case(const char *name)
{
	if (harness_case_failed) {
		printf("FAIL: %s\n", name);
		harness_failed_cases++;
	} else if (!harness_case_kind) {
		printf("PASS: %s\n", name);
	} else if (!strcmp(harness_case_kind, "SKIP")) {
		harness_skip(name, harness_case_why);
	} else {
		harness_na(name, harness_case_why);
	}
	fflush(stdout);
}

#define CHECK(expr)                                                                          \
	do {                                                                                 \
		if (!(expr)) {                                                               \
			printf("  check failed: %s:%d: %s\n", __FILE__, __LINE__, #expr);   \
			harness_case_failed = 1;                                             \
		}                                                                            \
	} while (0)

#define CHECK_STR(a, b)                                                                      \
	do {                                                                                 \
		const char *ca_ = (a), *cb_ = (b);                                           \
		if (!ca_ || !cb_ || strcmp(ca_, cb_)) {                                      \
			printf("  check failed: %s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
			       ca_ ? ca_ : "(null)", cb_ ? cb_ : "(null)");                   \
			harness_case_failed = 1;                                             \
		}                                                                            \
	} while (0)

#define CHECK_NUM(a, b)                                                                      \
	do {                                                                                 \
		double na_ = (a), nb_ = (b);                                                 \
		if (fabs(na_ - nb_) > 1e-9) {                                                \
			printf("  check failed: %s:%d: %s = %.17g, expected %.17g\n", __FILE__,  \
			       __LINE__, #a, na_, nb_);                                      \
			harness_case_failed = 1;                                             \
		}                                                                            \
	} while (0)

#define TEST_CASE(name)                                                                      \
	static void test_##name(void);                                                       \
	static void run_##name(void)                                                         \
	{                                                                                    \
		harness_case_failed = 0;                                                     \
		harness_case_kind = NULL;                                                    \
		test_##name();                                                               \
		harness_end_case(#name);                                                     \
	}                                                                                    \
	static void test_##name(void)

#define RUN(name) run_##name()
#define HARNESS_EXIT() return harness_failed_cases ? 1 : 0

#endif
