/* Tiny unit-test harness: each CHECK prints nothing when it holds and "FAIL: file:line: expr"
 * when it does not; TEST_CASE(name) groups checks and prints "PASS: name" or "FAIL: name".
 * tests/run.sh counts those lines. */
#ifndef GALATOP_TESTS_HARNESS_H
#define GALATOP_TESTS_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_case_failed;
static int harness_failed_cases;

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
		test_##name();                                                               \
		printf("%s: %s\n", harness_case_failed ? "FAIL" : "PASS", #name);            \
		fflush(stdout);                                                              \
		harness_failed_cases += harness_case_failed;                                 \
	}                                                                                    \
	static void test_##name(void)

#define RUN(name) run_##name()
#define HARNESS_EXIT() return harness_failed_cases ? 1 : 0

#endif
