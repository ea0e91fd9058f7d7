/* Unit tests for model/trigger: the condition grammar, its errors, evaluation, and when
 * captures start and end. */
#include <errno.h>
#include <math.h>

#include "harness.h"
#include "model/trigger.h"

static char err[256];

static bool holds(const char *text, double cpu, double load)
{
	struct trigger_expr e;
	struct trigger_metrics m = { cpu, NULL, 0, load };

	CHECK(trigger_parse(text, &e, err, sizeof(err)) == 0);
	return trigger_eval(&e, &m, NULL, 0);
}

TEST_CASE(grammar_and_evaluation)
{
	CHECK(holds("cpu>80", 80.5, 0));
	CHECK(!holds("cpu>80", 80, 0));
	CHECK(holds("cpu>=80", 80, 0));
	CHECK(holds(" cpu < 10 ", 5, 0));
	CHECK(!holds("cpu<=10", 10.01, 0));
	CHECK(holds("load>2.5", 0, 3));
	CHECK(!holds("load>2.5", 0, 2.5));
	/* && binds tighter than ||. */
	CHECK(holds("cpu>50 && load>4 || load>10", 60, 5));
	CHECK(!holds("cpu>50 && load>4 || load>10", 60, 3));
	CHECK(holds("cpu>50 && load>4 || load>10", 0, 11));
	CHECK(!holds("cpu>50 && load>4", 40, 11));
	/* An unreadable metric (NaN) makes its conditions false. */
	CHECK(!holds("cpu>10", NAN, 0));
	CHECK(holds("cpu>10 || load>1", NAN, 2));
}

TEST_CASE(per_cpu_metric)
{
	struct trigger_expr e;
	const double cpus[2] = { 5, 97 };
	struct trigger_metrics m = { 51, cpus, 2, 0 };
	char why[64];

	CHECK(trigger_parse("cpu1>90", &e, err, sizeof(err)) == 0);
	CHECK(e.n == 1 && e.c[0].metric == TRIGGER_CPU_N && e.c[0].cpu == 1);
	CHECK(trigger_eval(&e, &m, why, sizeof(why)));
	CHECK_STR(why, "cpu1=97.0 > 90");
	CHECK(trigger_parse("cpu0>90", &e, err, sizeof(err)) == 0 && !trigger_eval(&e, &m, NULL, 0));
	CHECK(trigger_parse("cpu7>1", &e, err, sizeof(err)) == 0 && !trigger_eval(&e, &m, NULL, 0));
	CHECK(trigger_uses(&e, TRIGGER_CPU_N) && !trigger_uses(&e, TRIGGER_LOAD));
}

/* Each bad expression: -EINVAL and one line naming the place and the problem. */
TEST_CASE(errors_name_the_problem)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "", "at the end: an empty condition (e.g. cpu>80)" },
		{ "mem>80", "at 'mem>80': unknown metric 'mem' (cpu, cpuN, load)" },
		{ "cpu 80", "at 'cpu 80': a comparison is missing (>, >=, <, <=)" },
		{ "cpu=80", "at 'cpu=80': a comparison is missing (>, >=, <, <=)" },
		{ "cpu>", "at 'cpu>': a number is missing after the comparison" },
		{ "cpu>x", "at 'cpu>x': a number is missing after the comparison" },
		{ "cpu>80 load>1", "at 'load>1': expected && or || or the end, not 'l'" },
		{ "cpu>80 &&", "at the end: a metric is missing (cpu, cpuN, load)" },
		{ "cpu>80 | load>1", "at '| load>1': expected && or || or the end, not '|'" },
		{ ">80", "at '>80': a metric is missing (cpu, cpuN, load)" },
		{ "cpu99999>1", "at 'cpu99999>1': CPU number past 4095" },
	};
	struct trigger_expr e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK(trigger_parse(bad[i].text, &e, err, sizeof(err)) == -EINVAL);
		CHECK_STR(err, bad[i].msg);
	}
}

/* A burst at 10 s with 3 s before, 2 s after, 5 s cooldown: one capture at 10, due at 12; the
 * condition still holding at 13..16 does not start another; at 17 it may. */
TEST_CASE(captures_and_cooldown)
{
	struct trigger_state s;
	double at = 0;

	trigger_state_init(&s, 3, 2, 5);
	for (int t = 0; t < 10; t++)
		CHECK(!trigger_state_step(&s, t, false));
	CHECK(trigger_state_step(&s, 10, true));
	CHECK(!trigger_state_step(&s, 11, true)); /* under way */
	CHECK(!trigger_state_due(&s, 11, &at));
	CHECK(trigger_state_due(&s, 12, &at) && at == 10);
	CHECK(!trigger_state_due(&s, 13, &at));
	for (int t = 12; t < 17; t++)
		CHECK(!trigger_state_step(&s, t, true));
	CHECK(trigger_state_step(&s, 17, true));
	CHECK(s.fired == 2);
}

int main(void)
{
	RUN(grammar_and_evaluation);
	RUN(per_cpu_metric);
	RUN(errors_name_the_problem);
	RUN(captures_and_cooldown);
	HARNESS_EXIT();
}
