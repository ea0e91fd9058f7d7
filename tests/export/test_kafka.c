/* Unit tests for export/kafka: delivery to librdkafka's in-process mock cluster counted, a
 * broker that is down gives counted delivery failures without blocking the producer, a full
 * queue drops (counted), settings librdkafka refuses are one line. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "export/kafka.h"
#include "util/clock.h"

TEST_CASE(kafka_delivers_to_mock_cluster)
{
	static const char *const props[] = { "test.mock.num.brokers=1" };
	struct kafka_opts o = { "unused:1", "galatop-test", props, 1, 0, 0 };
	struct kafka_stats st;
	struct kafka *k;
	char err[256];

	CHECK(kafka__new(&o, &k, err, sizeof(err)) == 0);
	if (!k)
		return;
	for (int i = 0; i < 10; i++)
		CHECK(kafka__produce(k, "42", 2, "{\"n\":1}", 7) == 0);
	kafka__free(k, 10000, &st);
	CHECK(st.produced == 10 && st.delivered == 10 && st.failed == 0 && st.dropped == 0);
	CHECK_STR(st.last_error, "");
}

TEST_CASE(kafka_broker_down_fails_counted_without_blocking)
{
	/* Port 1 on loopback: nobody listens. */
	struct kafka_opts o = { "127.0.0.1:1", "t", NULL, 0, 3, 500 };
	struct kafka_stats st;
	struct kafka *k;
	char err[256];
	int64_t t0 = clock_mono_ms(), worst = 0;

	CHECK(kafka__new(&o, &k, err, sizeof(err)) == 0);
	if (!k)
		return;
	for (int i = 0; i < 5; i++) {
		int64_t t = clock_mono_ms();

		kafka__produce(k, NULL, 0, "x", 1);
		if (clock_mono_ms() - t > worst)
			worst = clock_mono_ms() - t;
	}
	CHECK(worst < 50);
	for (int i = 0; i < 300; i++) { /* message.timeout.ms is 500 */
		kafka__stats(k, &st);
		if (st.failed >= 3)
			break;
		usleep(10000);
	}
	CHECK(st.produced == 3 && st.dropped == 2 && st.failed == 3 && st.delivered == 0);
	CHECK(clock_mono_ms() - t0 < 3000);
	CHECK(strstr(st.last_error, "kafka: ") == st.last_error);
	kafka__free(k, 0, &st);
	CHECK(st.failed == 3);
}

TEST_CASE(kafka_bad_settings_one_line)
{
	static const char *const bad[] = { "no.such.setting=1" }, *const noeq[] = { "acks" };
	struct kafka_opts o = { "h:1", "t", bad, 1, 0, 0 };
	struct kafka *k;
	char err[256];

	CHECK(kafka__new(&o, &k, err, sizeof(err)) == -EINVAL && k == NULL);
	CHECK(strstr(err, "no.such.setting=1: ") == err);
	o.props = noeq;
	CHECK(kafka__new(&o, &k, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "acks: not KEY=VALUE");
	o.nprops = 0;
	o.topic = "";
	CHECK(kafka__new(&o, &k, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "--kafka-topic: no topic");
	kafka__free(NULL, 0, NULL);
}

int main(void)
{
	RUN(kafka_delivers_to_mock_cluster);
	RUN(kafka_broker_down_fails_counted_without_blocking);
	RUN(kafka_bad_settings_one_line);
	HARNESS_EXIT();
}
