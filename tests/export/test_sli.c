/* Unit tests for export/sli: the snapshot section round trip, the record JSON (missing
 * sources as null, histogram pairs), Prometheus text, and refusals of malformed sections. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "export/sli.h"

static struct sli *sample(void)
{
	struct sli *s = sli__new();
	struct sli_group *h = sli__group(s, "host", "host", SLI_G_HOST);
	struct sli_group *c = sli__group(s, "container:abc", "[Con]web\"1", SLI_G_CONTAINER);
	uint64_t psi[SLI_PSI_MAX] = { 100, 0, 0, 0, 0, 0 }, ns[SLI_MAX] = { 0 };

	s->have = 1u << SLI_CPU_WAIT | 1u << SLI_BIO_LATENCY;
	s->longsys_ns = 10000000;
	sli__set_notes(s, "mem_swapin: not measured (delay accounting off)");
	sli_group__set_psi(h, psi, "/proc/pressure");
	for (int i = 0; i < 3; i++) {
		sli__begin(s);
		sli_group__add(h, SLI_CPU_WAIT, 3000000, 3);
		sli_group__add_bucket(h, SLI_CPU_WAIT, hist_index(1000000), 3);
		sli_group__add(c, SLI_BIO_LATENCY, 200000, 2);
		sli_group__add_bucket(c, SLI_BIO_LATENCY, hist_index(100000), 2);
		ns[SLI_CPU_WAIT] = 1000000;
		sli_group__add_thread(h, 42, 40, "redis-server", ns);
		psi[SLI_PSI_CPU_SOME] += 100000;
		sli_group__set_psi(h, psi, "/proc/pressure");
		sli__close(s, 1.0, 100.0 + i);
	}
	return s;
}

TEST_CASE(snapshot_round_trip)
{
	struct sli *s = sample(), *r = NULL;
	char *text = sli_snapshot_text(s), err[256] = "";
	const struct sli_group *h, *c;

	CHECK(text != NULL);
	CHECK(sli_snapshot_parse(text, strlen(text), &r, err, sizeof(err)) == 0);
	CHECK(r && r->n == 2 && r->have == s->have && r->nspark == 3 && r->longsys_ns == 10000000);
	h = r ? sli__find(r, "host") : NULL;
	c = r ? sli__find(r, "container:abc") : NULL;
	CHECK(h && c && c->kind == SLI_G_CONTAINER && !strcmp(c->name, "[Con]web\"1"));
	if (h && c) {
		CHECK(h->ns[SLI_CPU_WAIT] == 9000000 && h->count[SLI_CPU_WAIT] == 9);
		CHECK(h->hist[SLI_CPU_WAIT].count == 9);
		CHECK(h->d_ns[SLI_CPU_WAIT] == 3000000); /* the last interval, for the pane's rates */
		CHECK_NUM(sli_group__pct(r, h, SLI_CPU_WAIT), 0.3);
		CHECK_NUM(h->psi[SLI_PSI_CPU_SOME], 10);
		CHECK(isnan(h->psi[SLI_PSI_MEM_FULL]) == isnan(s->groups[0]->psi[SLI_PSI_MEM_FULL]));
		CHECK(isnan(h->throttled_pct));
		CHECK(fabs(sli_group__spark(r, h, SLI_CPU_WAIT, 2) - 0.3) < 1e-6);
		CHECK(h->nthreads == 1 && h->threads[0].tid == 42 && !strcmp(h->threads[0].comm, "redis-server"));
		CHECK(h->threads[0].ns[SLI_CPU_WAIT] == 3000000);
		CHECK(c->hist[SLI_BIO_LATENCY].count == 6);
	}
	free(text);
	sli__free(r);
	sli__free(s);
}

TEST_CASE(record_json)
{
	struct sli *s = sample();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(sli_json_write(f, s, "box", NULL) == 0);
	fclose(f);
	CHECK(strstr(buf, "\"format\": \"galatop-sli\"") != NULL);
	CHECK(strstr(buf, "\"cpu_wait_ns\": 9000000") != NULL);
	CHECK(strstr(buf, "\"cpu_sleep_ns\": null") != NULL); /* not measured: null, not 0 */
	CHECK(strstr(buf, "\"throttled_pct\": null") != NULL);
	CHECK(strstr(buf, "\"kind\": \"container\"") != NULL);
	free(buf);
	sli__free(s);
}

TEST_CASE(prometheus)
{
	struct sli *s = sample();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(sli_prom_write(f, s) == 0);
	fclose(f);
	CHECK(strstr(buf, "# TYPE galatop_sli_cpu_wait_seconds histogram\n") != NULL);
	CHECK(strstr(buf, "galatop_sli_cpu_wait_seconds_count{group=\"host\",kind=\"host\"} 9\n") != NULL);
	CHECK(strstr(buf, "galatop_sli_cpu_wait_seconds_sum{group=\"host\",kind=\"host\"} 0.009") != NULL);
	CHECK(strstr(buf, "group=\"[Con]web\\\"1\"") != NULL);
	CHECK(strstr(buf, "galatop_sli_psi_ratio{group=\"host\",kind=\"host\",resource=\"cpu\",type=\"some\"} 0.1") != NULL);
	CHECK(strstr(buf, "cpu_sleep") == NULL); /* not measured: not exported */
	free(buf);
	sli__free(s);
}

TEST_CASE(malformed_sections)
{
	static const char *const bad[] = {
		"[]",
		"{\"start\":1,\"end\":2,\"dt\":1,\"groups\":{}}",
		"{\"start\":1,\"end\":2,\"dt\":1,\"groups\":[{\"id\":\"a\",\"name\":\"a\",\"kind\":\"zone\"}]}",
		"{\"start\":1,\"end\":2,\"dt\":1,\"groups\":[{\"id\":\"a\",\"name\":\"a\",\"kind\":\"host\"},"
		"{\"id\":\"a\",\"name\":\"b\",\"kind\":\"host\"}]}",
		"{\"start\":1,\"end\":2,\"dt\":1,\"groups\":[{\"id\":\"a\",\"name\":\"a\",\"kind\":\"host\","
		"\"cpu_wait_hist\":[[1000,1]]}]}",
		"{\"start\":1,\"end\":2,\"dt\":1,\"groups\":[{\"id\":\"a\",\"name\":\"a\",\"kind\":\"host\","
		"\"cpu_wait_ns\":-5}]}",
		"{\"start\":\"x\",\"end\":2,\"dt\":1,\"groups\":[]}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sli *r = (struct sli *)1;
		char err[256] = "";

		CHECK(sli_snapshot_parse(bad[i], strlen(bad[i]), &r, err, sizeof(err)) == -EINVAL);
		CHECK(r == NULL && err[0] && !strchr(err, '\n'));
	}
}

int main(void)
{
	RUN(snapshot_round_trip);
	RUN(record_json);
	RUN(prometheus);
	RUN(malformed_sections);
	HARNESS_EXIT();
}
