/* Event messages: see event_json.h. */
#include "event_json.h"

#include "jsonio.h" /* before jansson.h, whose json_is_number is a macro */

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l7_tables.h"
#include "model/sanitize.h"

static const char *const format_names[EVENT_FORMATS] = { "gala", "otlp" };

int event_format_parse(const char *s)
{
	for (int f = 0; f < EVENT_FORMATS; f++)
		if (!strcmp(s, format_names[f]))
			return f;
	return -1;
}

const char *event_format_str(enum event_format f)
{
	return (unsigned)f < EVENT_FORMATS ? format_names[f] : "?";
}

/* A JSON string of s (invalid UTF-8 and control bytes replaced); NULL on ENOMEM. */
static json_t *str(const char *s)
{
	size_t n = strlen(s);
	char buf[1024], *big = NULL, *out = buf;
	json_t *v;

	if (sanitize_is_clean(s, n))
		return json_stringn(s, n);
	if (SANITIZE_MAX(n) > sizeof(buf) && !(out = big = malloc(SANITIZE_MAX(n))))
		return NULL;
	v = json_stringn(out, sanitize_text(s, n, out));
	free(big);
	return v;
}

/* Sets o[k] to v (taken), false on ENOMEM. */
static bool set(json_t *o, const char *k, json_t *v)
{
	return v && !json_object_set_new(o, k, v);
}

static bool set_str(json_t *o, const char *k, const char *s)
{
	return !s || !*s || set(o, k, str(s));
}

/* Who's fields, in gala-gopher's names (ids as strings, as it writes them) or OpenTelemetry's
 * resource conventions (ids as integers). */
static bool who_json(json_t *o, const struct event_who *w, bool otlp)
{
	char id[16];
	bool ok = true;

	if (w->tid) {
		snprintf(id, sizeof(id), "%" PRIu32, w->tid);
		ok &= otlp ? set(o, "thread.id", json_integer(w->tid)) : set_str(o, "thread.pid", id);
	}
	snprintf(id, sizeof(id), "%" PRIu32, w->pid);
	ok &= otlp ? set(o, "process.pid", json_integer(w->pid))
		   : set_str(o, w->tid ? "thread.tgid" : "process.pid", id);
	if (w->tid)
		ok &= set_str(o, otlp ? "thread.name" : "thread.comm", w->thread);
	ok &= set_str(o, otlp ? "process.executable.name" : "process.comm", w->comm);
	if (!otlp)
		ok &= set_str(o, "process.name", w->comm);
	ok &= set_str(o, "container.id", w->container_id);
	ok &= set_str(o, "container.name", w->container);
	ok &= set_str(o, otlp ? "k8s.pod.name" : "pod.name", w->pod);
	ok &= set_str(o, "host.id", w->host_id);
	ok &= set_str(o, "host.name", w->host_name);
	return ok;
}

/* gala-gopher's attributes of one thread event. */
static json_t *thread_value(const struct event_thread *e)
{
	json_t *v = json_object();
	double ms0 = e->start * 1e3, ms1 = e->end * 1e3;
	bool ok = v != NULL;

	ok = ok && set_str(v, "event.name", e->name) && set_str(v, "event.type", e->kind) &&
	     set(v, "start_time", json_integer((json_int_t)ms0)) &&
	     set(v, "end_time", json_integer((json_int_t)ms1)) &&
	     set(v, "duration", json_real(round((ms1 - ms0) * 1e3) / 1e3)) &&
	     set(v, "count", json_integer(e->count)) &&
	     set_str(v, e->kind && !strcmp(e->kind, "net") ? "sock.conn" : "file.path", e->attr) &&
	     set_str(v, "func.stack", e->stack);
	if (!ok) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* OTLP's AnyValue of v (64-bit integers as decimal strings, as its JSON mapping says); NULL
 * for a null or on ENOMEM. */
static json_t *any_value(json_t *v)
{
	char n[24];

	switch (json_typeof(v)) {
	case JSON_STRING:
		return json_pack("{sO}", "stringValue", v);
	case JSON_INTEGER:
		snprintf(n, sizeof(n), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return json_pack("{ss}", "intValue", n);
	case JSON_REAL:
		return json_pack("{sf}", "doubleValue", json_real_value(v));
	case JSON_TRUE:
	case JSON_FALSE:
		return json_pack("{sb}", "boolValue", json_is_true(v));
	default:
		return NULL;
	}
}

/* An object's members as OTLP KeyValues, in its order; NULL on ENOMEM. */
static json_t *otlp_attrs(json_t *o)
{
	json_t *a = json_array(), *v;
	const char *k;

	if (!a)
		return NULL;
	json_object_foreach(o, k, v) {
		json_t *av = json_is_null(v) ? NULL : any_value(v);

		if (json_is_null(v))
			continue;
		if (!av || json_array_append_new(a, json_pack("{sssO}", "key", k, "value", av))) {
			json_decref(av);
			json_decref(a);
			return NULL;
		}
		json_decref(av);
	}
	return a;
}

/* UNIX nanoseconds as OTLP writes them (a decimal string); seconds and their fraction apart,
 * as a double cannot hold the product exactly. */
static json_t *nanos(double unix_s)
{
	double sec = unix_s > 0 ? floor(unix_s) : 0;
	uint64_t ns = (uint64_t)sec * 1000000000ull + (uint64_t)llround((unix_s - sec) * 1e9);
	char n[24];

	snprintf(n, sizeof(n), "%" PRIu64, unix_s > 0 ? ns : 0);
	return json_string(n);
}

/* A log record: its time, body and attributes (taken). */
static json_t *log_record(double t, double now, bool warn, const char *body, json_t *attrs)
{
	json_t *r = json_object();
	bool ok = r && attrs && set(r, "timeUnixNano", nanos(t)) &&
		  set(r, "observedTimeUnixNano", nanos(now)) &&
		  set(r, "severityNumber", json_integer(warn ? 13 : 9)) &&
		  set(r, "severityText", json_string(warn ? "WARN" : "INFO")) &&
		  set(r, "body", json_pack("{so}", "stringValue", str(body ? body : ""))) &&
		  set(r, "attributes", attrs);

	if (!ok) {
		if (!r || !json_object_get(r, "attributes"))
			json_decref(attrs);
		json_decref(r);
		return NULL;
	}
	return r;
}

/* LogsData of w's records (taken). */
static json_t *logs_data(const struct event_who *w, json_t *records)
{
	json_t *res = json_object(), *ra;

	if (!res || !records || !who_json(res, w, true) || !(ra = otlp_attrs(res))) {
		json_decref(res);
		json_decref(records);
		return NULL;
	}
	json_decref(res);
	return json_pack("{s[{s{so}s[{s{ssss}so}]}]}", "resourceLogs", "resource", "attributes", ra,
			 "scopeLogs", "scope", "name", "galatop", "version", GALATOP_VERSION,
			 "logRecords", records);
}

/* The compact text of o (taken), numbers in the C locale; NULL on ENOMEM. */
static char *dump(json_t *o)
{
	locale_t old, c;
	char *s;

	if (!o)
		return NULL;
	c = json_c_locale_begin(&old);
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_c_locale_end(c, old);
	json_decref(o);
	return s;
}

char *event_thread_message(enum event_format f, const struct event_who *w,
			   const struct event_thread *ev, size_t n, double now)
{
	json_t *list = json_array(), *m, *res;

	if (!list)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *v = thread_value(&ev[i]);

		if (v && f == EVENT_OTLP) {
			json_t *a = otlp_attrs(v);

			json_decref(v);
			v = log_record(ev[i].start, now, false, ev[i].name, a);
		}
		if (!v || json_array_append_new(list, v)) {
			json_decref(list);
			return NULL;
		}
	}
	if (f == EVENT_OTLP)
		return dump(logs_data(w, list));
	res = json_object();
	if (!res || !who_json(res, w, false)) {
		json_decref(res);
		json_decref(list);
		return NULL;
	}
	m = json_pack("{sIsssisssos{so}}", "Timestamp", (json_int_t)(now * 1e3), "SeverityText",
		      "INFO", "SeverityNumber", 9, "Body", "", "Resource", res, "Attributes",
		      "values", list);
	return dump(m);
}

char *event_l7_message(enum event_format f, const struct event_who *w, const struct l7_session *s,
		       const struct l7_record *r, uint32_t tid, double timestamp, double now)
{
	json_t *o = l7_trace_json(s, r, tid, timestamp), *rec;

	if (!o || f == EVENT_GALA)
		return dump(o);
	rec = log_record(timestamp, now, r->error || r->no_response, r->detail, otlp_attrs(o));
	json_decref(o);
	return dump(logs_data(w, rec ? json_pack("[o]", rec) : NULL));
}
