/* Unit tests for export/event_json: gala-gopher's tprofiling event and L7 trace objects, and
 * OTLP/JSON LogsData of the same, read back with jansson. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "export/event_json.h"

static const struct event_who thread_who = { "mid", "box", 42, 43, "server", "worker",
					     "c0ffee", "web", "shop" };

static const struct event_thread evs[] = {
	{ "file", "read", "/etc/hosts", "main;load;read", 1700000000.25, 1700000000.2505, 3 },
	{ "net", "recvfrom", "127.0.0.1:80", NULL, 1700000001.0, 1700000001.5, 1 },
};

/* The string at path a.b (objects only) of o, "" if missing. */
static const char *get_s(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : "";
}

TEST_CASE(event_formats_named)
{
	CHECK(event_format_parse("gala") == EVENT_GALA);
	CHECK(event_format_parse("otlp") == EVENT_OTLP);
	CHECK(event_format_parse("json") == -1);
	CHECK_STR(event_format_str(EVENT_OTLP), "otlp");
}

TEST_CASE(event_thread_gala)
{
	char *m = event_thread_message(EVENT_GALA, &thread_who, evs, 2, 1700000002.0);
	json_error_t e;
	json_t *o = m ? json_loads(m, 0, &e) : NULL, *res, *vals, *v;

	CHECK(o != NULL);
	if (!o)
		return;
	CHECK(json_integer_value(json_object_get(o, "Timestamp")) == 1700000002000);
	CHECK_STR(get_s(o, "SeverityText"), "INFO");
	res = json_object_get(o, "Resource");
	CHECK_STR(get_s(res, "thread.pid"), "43");
	CHECK_STR(get_s(res, "thread.tgid"), "42");
	CHECK_STR(get_s(res, "thread.comm"), "worker");
	CHECK_STR(get_s(res, "process.comm"), "server");
	CHECK_STR(get_s(res, "container.id"), "c0ffee");
	CHECK_STR(get_s(res, "container.name"), "web");
	CHECK_STR(get_s(res, "host.name"), "box");
	vals = json_object_get(json_object_get(o, "Attributes"), "values");
	CHECK(json_array_size(vals) == 2);
	v = json_array_get(vals, 0);
	CHECK_STR(get_s(v, "event.name"), "read");
	CHECK_STR(get_s(v, "event.type"), "file");
	CHECK(json_integer_value(json_object_get(v, "start_time")) == 1700000000250);
	CHECK(json_integer_value(json_object_get(v, "end_time")) == 1700000000250);
	CHECK_NUM(json_real_value(json_object_get(v, "duration")), 0.5);
	CHECK(json_integer_value(json_object_get(v, "count")) == 3);
	CHECK_STR(get_s(v, "file.path"), "/etc/hosts");
	CHECK_STR(get_s(v, "func.stack"), "main;load;read");
	v = json_array_get(vals, 1);
	CHECK_STR(get_s(v, "sock.conn"), "127.0.0.1:80");
	CHECK(json_object_get(v, "func.stack") == NULL);
	json_decref(o);
	free(m);
}

/* The value of key k in an OTLP KeyValue list, as its JSON text ({"intValue":"42"}). */
static char *kv(json_t *list, const char *k)
{
	size_t i;
	json_t *x;

	json_array_foreach(list, i, x)
		if (!strcmp(get_s(x, "key"), k))
			return json_dumps(json_object_get(x, "value"), JSON_COMPACT);
	return strdup("");
}

#define CHECK_KV(list, k, want)                                                                  \
	do {                                                                                     \
		char *got_ = kv(list, k);                                                        \
		CHECK_STR(got_, want);                                                           \
		free(got_);                                                                      \
	} while (0)

TEST_CASE(event_thread_otlp)
{
	char *m = event_thread_message(EVENT_OTLP, &thread_who, evs, 2, 1700000002.0);
	json_error_t e;
	json_t *o = m ? json_loads(m, 0, &e) : NULL, *rl, *attrs, *sl, *recs, *r;

	CHECK(o != NULL);
	if (!o)
		return;
	rl = json_array_get(json_object_get(o, "resourceLogs"), 0);
	attrs = json_object_get(json_object_get(rl, "resource"), "attributes");
	CHECK_KV(attrs, "thread.id", "{\"intValue\":\"43\"}");
	CHECK_KV(attrs, "process.pid", "{\"intValue\":\"42\"}");
	CHECK_KV(attrs, "thread.name", "{\"stringValue\":\"worker\"}");
	CHECK_KV(attrs, "process.executable.name", "{\"stringValue\":\"server\"}");
	CHECK_KV(attrs, "container.id", "{\"stringValue\":\"c0ffee\"}");
	CHECK_KV(attrs, "k8s.pod.name", "{\"stringValue\":\"shop\"}");
	CHECK_KV(attrs, "host.name", "{\"stringValue\":\"box\"}");
	sl = json_array_get(json_object_get(rl, "scopeLogs"), 0);
	CHECK_STR(get_s(json_object_get(sl, "scope"), "name"), "galatop");
	recs = json_object_get(sl, "logRecords");
	CHECK(json_array_size(recs) == 2);
	r = json_array_get(recs, 0);
	CHECK_STR(get_s(r, "timeUnixNano"), "1700000000250000000");
	CHECK_STR(get_s(r, "observedTimeUnixNano"), "1700000002000000000");
	CHECK(json_integer_value(json_object_get(r, "severityNumber")) == 9);
	CHECK_STR(get_s(json_object_get(r, "body"), "stringValue"), "read");
	CHECK_KV(json_object_get(r, "attributes"), "count", "{\"intValue\":\"3\"}");
	CHECK_KV(json_object_get(r, "attributes"), "duration", "{\"doubleValue\":0.5}");
	CHECK_KV(json_object_get(r, "attributes"), "event.type", "{\"stringValue\":\"file\"}");
	json_decref(o);
	free(m);
}

TEST_CASE(event_l7_both_formats)
{
	struct l7_session s = { .key = { .tgid = 42, .server_port = 6379, .l7_role = 1,
					 .client_ip = { 127, 0, 0, 1 },
					 .server_ip = { 127, 0, 0, 2 } } };
	struct l7_record r = { .req_start_ns = 100, .resp_end_ns = 2100, .error = true,
			       .status = 0 };
	struct event_who w = { NULL, "box", 42, 0, "redis-cli", NULL, NULL, "web", NULL };
	json_error_t e;
	char *m;
	json_t *o;

	strcpy(s.comm, "redis-cli");
	strcpy(s.container, "web");
	strcpy(r.endpoint, "GET");
	strcpy(r.detail, "GET k\xc3\xa9");
	m = event_l7_message(EVENT_GALA, &w, &s, &r, 44, 1700000000.5, 1700000001.0);
	o = m ? json_loads(m, 0, &e) : NULL;
	CHECK(o != NULL);
	CHECK_STR(get_s(o, "endpoint"), "GET");
	CHECK_STR(get_s(o, "client_ip"), "127.0.0.1");
	CHECK_STR(get_s(o, "container"), "web");
	CHECK(json_integer_value(json_object_get(o, "latency")) == 2000);
	CHECK(json_integer_value(json_object_get(o, "tid")) == 44);
	json_decref(o);
	free(m);
	m = event_l7_message(EVENT_OTLP, &w, &s, &r, 44, 1700000000.5, 1700000001.0);
	o = m ? json_loads(m, 0, &e) : NULL;
	CHECK(o != NULL);
	if (o) {
		json_t *rl = json_array_get(json_object_get(o, "resourceLogs"), 0);
		json_t *sl = json_array_get(json_object_get(rl, "scopeLogs"), 0);
		json_t *rec = json_array_get(json_object_get(sl, "logRecords"), 0);
		json_t *ra = json_object_get(json_object_get(rl, "resource"), "attributes");

		CHECK_KV(ra, "process.pid", "{\"intValue\":\"42\"}");
		CHECK_KV(ra, "container.name", "{\"stringValue\":\"web\"}");
		CHECK_KV(ra, "thread.id", "");
		CHECK_STR(get_s(rec, "timeUnixNano"), "1700000000500000000");
		CHECK(json_integer_value(json_object_get(rec, "severityNumber")) == 13);
		CHECK_STR(get_s(json_object_get(rec, "body"), "stringValue"), "GET k\xc3\xa9");
		CHECK_KV(json_object_get(rec, "attributes"), "latency", "{\"intValue\":\"2000\"}");
		CHECK_KV(json_object_get(rec, "attributes"), "error", "{\"boolValue\":true}");
	}
	json_decref(o);
	free(m);
}

int main(void)
{
	RUN(event_formats_named);
	RUN(event_thread_gala);
	RUN(event_thread_otlp);
	RUN(event_l7_both_formats);
	HARNESS_EXIT();
}
