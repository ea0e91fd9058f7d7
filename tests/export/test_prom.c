/* Unit tests for export/prom: label escaping, number formatting, histogram buckets that add up
 * to the exact counts at bounds on bucket edges. */
#include "harness.h"
#include "export/prom.h"

static char *render(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void write_sample(FILE *f, void *arg)
{
	struct prom_label l[] = { { "path", "/a\"b\\c\nd" }, { "code", "200" } };

	(void)arg;
	prom_family(f, "gt_requests_total", "counter", "Requests\\seen\nso far");
	prom_sample(f, "gt_requests_total", l, 2, 42);
	prom_sample(f, "gt_ratio", NULL, 0, 0.25);
}

TEST_CASE(sample_escaping)
{
	char *s = render(write_sample, NULL);

	CHECK_STR(s, "# HELP gt_requests_total Requests\\\\seen\\nso far\n"
		     "# TYPE gt_requests_total counter\n"
		     "gt_requests_total{path=\"/a\\\"b\\\\c\\nd\",code=\"200\"} 42\n"
		     "gt_ratio 0.25\n");
	free(s);
}

static void write_hist(FILE *f, void *arg)
{
	struct hist *h = arg;
	static const double le[] = { 1e-6, 1e-3, 1 };
	struct prom_label l[] = { { "proto", "http" } };

	prom_histogram(f, "gt_latency_seconds", l, 1, h, le, 3, 1e-9);
}

TEST_CASE(histogram_counts)
{
	struct hist h = { 0 };
	char *s;

	/* 10 values under 1 us, 5 at 0.5 ms, 2 at 2 s. */
	for (int i = 0; i < 10; i++)
		hist_add(&h, 500);
	hist_add_n(&h, 500000, 5);
	hist_add_n(&h, 2000000000ull, 2);
	s = render(write_hist, &h);
	CHECK(strstr(s, "gt_latency_seconds_bucket{proto=\"http\",le=\"1e-06\"} 10\n") != NULL);
	CHECK(strstr(s, "gt_latency_seconds_bucket{proto=\"http\",le=\"0.001\"} 15\n") != NULL);
	CHECK(strstr(s, "gt_latency_seconds_bucket{proto=\"http\",le=\"1\"} 15\n") != NULL);
	CHECK(strstr(s, "gt_latency_seconds_bucket{proto=\"http\",le=\"+Inf\"} 17\n") != NULL);
	CHECK(strstr(s, "gt_latency_seconds_count{proto=\"http\"} 17\n") != NULL);
	CHECK(strstr(s, "gt_latency_seconds_sum{proto=\"http\"} 4.0025050") != NULL);
	free(s);
	hist_reset(&h);
}

int main(void)
{
	RUN(sample_escaping);
	RUN(histogram_counts);
	HARNESS_EXIT();
}
