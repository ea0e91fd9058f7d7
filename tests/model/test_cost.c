/* Unit tests for model/cost: families from program names, interval and total figures from
 * cumulative readings, programs that come and go, and the summary text. */
#include "harness.h"
#include "model/cost.h"

static struct cost_reading rd(uint32_t id, const char *name, uint64_t ns, uint64_t cnt)
{
	struct cost_reading r = { .id = id, .run_ns = ns, .run_cnt = cnt };

	snprintf(r.name, sizeof(r.name), "%s", name);
	return r;
}

TEST_CASE(cost_families_by_name)
{
	CHECK(cost_family_of("gt_l7_exit") == COST_L7);
	CHECK(cost_family_of("gt_sli_switch") == COST_SLI);
	CHECK(cost_family_of("gt_tl_sys_enter") == COST_THREADS);
	CHECK(cost_family_of("gt_oncpu") == COST_STACKS);
	CHECK_STR(cost_family_name(COST_L7), "l7");
	CHECK_STR(cost_family_name(COST_FAMILIES), "?");
}

TEST_CASE(cost_interval_and_total)
{
	struct cost c = { .stats_on = true };
	struct cost_reading a[2] = { rd(1, "gt_l7_exit", 1000, 10), rd(2, "gt_oncpu", 0, 0) };
	struct cost_figures f;
	char text[2048];

	CHECK(cost__sample(&c, 100.0, 5.0, a, 2) == 0);
	CHECK(cost__own_cpu(&c, true) < 0);
	a[0] = rd(1, "", 3000, 30); /* names are given once */
	a[1] = rd(2, "", 500, 1);
	CHECK(cost__sample(&c, 102.0, 5.5, a, 2) == 0);
	CHECK_STR(c.p[0].r.name, "gt_l7_exit");
	cost__figures(&c, COST_L7, true, &f);
	CHECK(f.ns == 2000 && f.calls == 20);
	CHECK(fabs(f.ns_per_call - 100) < 1e-9 && fabs(f.calls_per_s - 10) < 1e-9);
	CHECK(fabs(f.cpu_pct - 100.0 * 2000e-9 / 2) < 1e-12);
	cost__figures(&c, COST_L7, false, &f); /* since load: the kernel's totals */
	CHECK(f.ns == 3000 && f.calls == 30);
	cost__figures(&c, COST_FAMILIES, true, &f);
	CHECK(f.ns == 2500 && f.calls == 21);
	CHECK(fabs(cost__own_cpu(&c, true) - 25.0) < 1e-9);
	/* The L7 family detaches: its program stays with its totals, nothing in the interval. */
	a[0] = rd(2, "", 800, 2);
	CHECK(cost__sample(&c, 103.0, 6.5, a, 1) == 0);
	CHECK(c.n == 2 && c.p[0].gone && !c.p[1].gone);
	cost__figures(&c, COST_L7, true, &f);
	CHECK(f.ns == 0 && f.calls == 0 && f.ns_per_call == 0);
	cost__figures(&c, COST_L7, false, &f);
	CHECK(f.calls == 30);
	CHECK(fabs(cost__own_cpu(&c, false) - 50.0) < 1e-9);
	cost__format(&c, false, text, sizeof(text));
	CHECK(strstr(text, "galatop CPU 50.00% of one core (1.50 s in 3.0 s)") != NULL);
	CHECK(strstr(text, "  gt_l7_exit") != NULL && strstr(text, "\nl7 ") != NULL);
	/* Interval: programs without calls are left out, their family stays. */
	cost__format(&c, true, text, sizeof(text));
	CHECK(strstr(text, "gt_l7_exit") == NULL && strstr(text, "  gt_oncpu") != NULL);
	/* Truncation: the length needed is returned and the text is terminated. */
	CHECK(cost__format(&c, false, text, 10) > 10 && strlen(text) == 9);
	c.stats_on = false;
	cost__format(&c, false, text, sizeof(text));
	CHECK(strstr(text, "BPF statistics off") != NULL && strstr(text, "gt_oncpu") == NULL);
	cost__free(&c);
	cost__free(NULL);
}

/* Sampled statistics: each window's growth makes the figures, what ran between windows (the
 * statistics on for another holder) is not counted, and the CPU goes on between windows. */
TEST_CASE(cost_sampled_windows)
{
	struct cost c = { .stats_on = true, .period = 10 };
	struct cost_reading a[1] = { rd(1, "gt_l7_send", 0, 0) };
	struct cost_figures f;
	char text[2048];

	CHECK(cost__sample(&c, 100.0, 1.0, a, 1) == 0); /* at open: the first window */
	a[0] = rd(1, "", 4000, 40);
	CHECK(cost__sample(&c, 101.0, 1.1, a, 1) == 0); /* closes it */
	cost__figures(&c, COST_L7, true, &f);
	CHECK(f.calls == 40 && fabs(f.secs - 1) < 1e-9 && fabs(f.calls_per_s - 40) < 1e-9);
	CHECK(cost__sample(&c, 105.0, 1.5, NULL, 0) == 0); /* between windows: CPU only */
	CHECK(fabs(cost__own_cpu(&c, true) - 10.0) < 1e-9);
	cost__figures(&c, COST_L7, true, &f);
	CHECK(f.calls == 40); /* the last window's, still */
	a[0] = rd(1, "", 9000, 90); /* someone else's statistics counted meanwhile */
	CHECK(cost__window_open(&c, 110.0, a, 1) == 0);
	a[0] = rd(1, "", 11000, 110);
	CHECK(cost__sample(&c, 112.0, 2.0, a, 1) == 0);
	cost__figures(&c, COST_L7, true, &f);
	CHECK(f.calls == 20 && f.ns == 2000 && fabs(f.secs - 2) < 1e-9);
	cost__figures(&c, COST_L7, false, &f);
	CHECK(f.calls == 60 && f.ns == 6000 && fabs(f.secs - 3) < 1e-9);
	CHECK(fabs(f.cpu_pct - 100.0 * 6000e-9 / 3) < 1e-12);
	cost__format(&c, false, text, sizeof(text));
	CHECK(strstr(text, "sampled (BPF statistics on 3.0 s of 12.0 s, 1 s in 10") != NULL);
	CHECK(strstr(text, "galatop CPU 8.33% of one core (1.00 s in 12.0 s)") != NULL);
	cost__format(&c, true, text, sizeof(text));
	CHECK(strstr(text, "sampled (BPF statistics on 1 s in 10: the last window, 2.0 s)") != NULL);
	cost__free(&c);
}

int main(void)
{
	RUN(cost_families_by_name);
	RUN(cost_interval_and_total);
	RUN(cost_sampled_windows);
	HARNESS_EXIT();
}
