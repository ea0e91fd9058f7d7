/* Unit tests for model/sli: intervals folding into totals, rates and sparklines, missing
 * sources staying NaN, the thread table, and the parsers of PSI and cpu.stat text. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "model/sli.h"

TEST_CASE(interval_rates_and_totals)
{
	struct sli *s = sli__new();
	struct sli_group *g = sli__group(s, "cgroup:/a", "/a", SLI_G_CGROUP);
	uint64_t ns[SLI_MAX] = { 0 };

	s->have = 1u << SLI_CPU_WAIT | 1u << SLI_BIO_LATENCY;
	CHECK(g && sli__group(s, "cgroup:/a", "other", SLI_G_HOST) == g && s->n == 1);
	/* Interval 1: 250 ms of waits in 2 s = 12.5 %. */
	sli_group__add(g, SLI_CPU_WAIT, 250000000, 5);
	CHECK(sli_group__add_bucket(g, SLI_CPU_WAIT, hist_index(50000000), 5) == 0);
	CHECK(sli_group__add_bucket(g, SLI_CPU_WAIT, HIST_BUCKETS, 1) == -EINVAL);
	sli__close(s, 2.0, 1000.0);
	CHECK_NUM(sli_group__pct(s, g, SLI_CPU_WAIT), 12.5);
	CHECK(g->ns[SLI_CPU_WAIT] == 250000000 && g->count[SLI_CPU_WAIT] == 5);
	CHECK(g->hist[SLI_CPU_WAIT].count == 5 && g->hist[SLI_CPU_WAIT].sum == 250000000);
	/* An SLI that is not measured is missing, not zero. */
	CHECK(isnan(sli_group__pct(s, g, SLI_CPU_SLEEP)));
	CHECK(s->start == 998.0 && s->end == 1000.0 && s->nspark == 1);
	/* The closed interval stays readable until the next one begins. */
	CHECK(g->d_ns[SLI_CPU_WAIT] == 250000000);
	sli__begin(s);
	CHECK(g->d_ns[SLI_CPU_WAIT] == 0 && g->d_hist[SLI_CPU_WAIT].count == 0);
	sli_group__add(g, SLI_CPU_WAIT, 1000000000, 1);
	sli__close(s, 1.0, 1001.0);
	CHECK(g->ns[SLI_CPU_WAIT] == 1250000000);
	CHECK_NUM(sli_group__spark(s, g, SLI_CPU_WAIT, 0), 12.5);
	CHECK_NUM(sli_group__spark(s, g, SLI_CPU_WAIT, 1), 100);
	CHECK(isnan(sli_group__spark(s, g, SLI_CPU_WAIT, 2)));
	CHECK(!strcmp(sli_series_name(SLI_SERIES_PSI_MEM), "psi_memory_some"));
	(void)ns;
	sli__free(s);
}

TEST_CASE(psi_and_throttling_rates)
{
	struct sli *s = sli__new();
	struct sli_group *g = sli__group(s, "host", "host", SLI_G_HOST);
	uint64_t t[SLI_PSI_MAX] = { 1000, 0, 0, 0, 500, UINT64_MAX };

	/* The first read is a baseline: no rate yet. */
	sli_group__set_psi(g, t, "/proc/pressure");
	sli_group__set_throttle(g, 3, 1000, "/x/cpu.stat");
	sli__close(s, 1.0, 1.0);
	CHECK(isnan(g->psi[SLI_PSI_CPU_SOME]) && isnan(g->throttled_pct));
	t[SLI_PSI_CPU_SOME] += 250000; /* 250 ms of 1 s */
	sli_group__set_psi(g, t, "/proc/pressure");
	sli_group__set_throttle(g, 5, 1000 + 100000000, "/x/cpu.stat");
	sli__close(s, 1.0, 2.0);
	CHECK_NUM(g->psi[SLI_PSI_CPU_SOME], 25);
	CHECK_NUM(g->psi[SLI_PSI_IO_SOME], 0);
	CHECK(isnan(g->psi[SLI_PSI_IO_FULL]));
	CHECK_NUM(g->throttled_pct, 10);
	CHECK_NUM(g->nr_throttled, 2);
	CHECK(!strcmp(g->psi_src, "/proc/pressure"));
	/* A source that goes away is missing again. */
	sli_group__set_psi(g, NULL, NULL);
	sli_group__set_throttle(g, UINT64_MAX, UINT64_MAX, NULL);
	sli__close(s, 1.0, 3.0);
	CHECK(isnan(g->psi[SLI_PSI_CPU_SOME]) && isnan(g->throttled_pct) && !g->psi_src);
	CHECK(isnan(sli_group__spark(s, g, SLI_SERIES_PSI_CPU, 2)));
	CHECK_NUM(sli_group__spark(s, g, SLI_SERIES_PSI_CPU, 1), 25);
	sli__free(s);
}

TEST_CASE(threads_sorted_and_capped)
{
	struct sli *s = sli__new();
	struct sli_group *g = sli__group(s, "host", "host", SLI_G_HOST);
	uint64_t ns[SLI_MAX] = { 0 };

	for (uint32_t tid = 1; tid <= SLI_MAX_THREADS + 10; tid++) {
		ns[SLI_CPU_WAIT] = tid;
		ns[SLI_CPU_SLEEP] = 1000000; /* voluntary: does not rank */
		CHECK(sli_group__add_thread(g, tid, 1, "w\x1b[2J", ns) == 0);
	}
	sli__close(s, 1.0, 1.0);
	CHECK(g->nthreads == SLI_MAX_THREADS);
	CHECK(g->threads[0].tid == SLI_MAX_THREADS + 10);
	CHECK(g->threads[0].ns[SLI_CPU_WAIT] == SLI_MAX_THREADS + 10);
	/* The comm was sanitized: no escape byte reaches a terminal. */
	CHECK(!strchr(g->threads[0].comm, 0x1b));
	sli__free(s);
}

TEST_CASE(parse_psi)
{
	uint64_t some, full;

	CHECK(sli_parse_psi("some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n"
			    "full avg10=0.00 avg60=0.00 avg300=0.00 total=42\n",
			    &some, &full) == 0);
	CHECK(some == 123456 && full == 42);
	CHECK(sli_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=7", &some, &full) == 0);
	CHECK(some == 7 && full == UINT64_MAX);
	CHECK(sli_parse_psi("garbage\n", &some, &full) == -EINVAL);
	CHECK(sli_parse_psi("some total=99999999999999999999999\n", &some, &full) == -EINVAL);
}

TEST_CASE(parse_cpu_stat)
{
	uint64_t nr, ns;

	/* cgroup v1 cpu controller */
	CHECK(sli_parse_cpu_stat("nr_periods 10\nnr_throttled 4\nthrottled_time 123000\n", &nr,
				 &ns) == 0);
	CHECK(nr == 4 && ns == 123000);
	/* cgroup v2 */
	CHECK(sli_parse_cpu_stat("usage_usec 5\nnr_periods 9\nnr_throttled 2\nthrottled_usec 7\n",
				 &nr, &ns) == 0);
	CHECK(nr == 2 && ns == 7000);
	/* v2 without the cpu controller: no throttling figures at all */
	CHECK(sli_parse_cpu_stat("usage_usec 5\nuser_usec 3\nsystem_usec 2\n", &nr, &ns) == -EINVAL);
}

TEST_CASE(names)
{
	for (int k = 0; k < SLI_MAX; k++)
		CHECK(sli_parse_name(sli_name(k)) == k && strlen(sli_hook(k)) > 10);
	for (int k = 0; k < SLI_G_MAX; k++)
		CHECK(sli_parse_gkind(sli_gkind_str(k)) == k);
	CHECK(sli_parse_name("cpu_nope") == -1 && !strcmp(sli_name(SLI_BIO_LATENCY), "bio_latency"));
}

int main(void)
{
	RUN(interval_rates_and_totals);
	RUN(psi_and_throttling_rates);
	RUN(threads_sorted_and_capped);
	RUN(parse_psi);
	RUN(parse_cpu_stat);
	RUN(names);
	HARNESS_EXIT();
}
