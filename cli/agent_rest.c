/* The agent's REST control, gala-gopher compatible: one stored request per family, merged as
 * gala-gopher merges them (cmd, snoopers and state replaced, params key by key), checked by
 * the request parser of --config (record_config.c) and laid over the command line. */
#include "agent_rest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent.h"
#include "agent_http.h"
#include "agent_sink.h"
#include "record.h"
#include "bpf/probes.h"

#define JSON_TYPE "application/json"

/* The families a REST path names, and the type bits each turns on and off. */
static const struct rest_family {
	const char *path;	/* "/flamegraph" */
	enum record_request kind;
	unsigned bits;		/* 0: the SLI switch */
} families[] = {
	{ "/sli", RECORD_REQ_SLI, 0 },
	{ "/l7", RECORD_REQ_L7, RECORD_TYPE_L7 },
	{ "/tprofiling", RECORD_REQ_TPROFILING, PROBE_THREADS },
	{ "/flamegraph", RECORD_REQ_FLAMEGRAPH, 0 /* the stack types, see owned_bits */ },
};

#define NFAMILIES (sizeof(families) / sizeof(families[0]))

struct agent_rest {
	json_t *req[NFAMILIES]; /* the merged request of each family, NULL until one came */
	int state[NFAMILIES];	/* 1 running, 0 stopped, -1 as the command line says */
	char *token;
	/* A staged request: its family (-1: none), and what it replaced. */
	int staged;
	json_t *old_req;
	int old_state;
};

static unsigned owned_bits(const struct rest_family *f)
{
	return f->kind == RECORD_REQ_FLAMEGRAPH ? stack_type_probes() : f->bits;
}

struct agent_rest *agent_rest__new(const char *token)
{
	struct agent_rest *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	for (size_t i = 0; i < NFAMILIES; i++)
		r->state[i] = -1;
	r->staged = -1;
	if (token && !(r->token = strdup(token))) {
		free(r);
		return NULL;
	}
	return r;
}

void agent_rest__free(struct agent_rest *r)
{
	if (!r)
		return;
	agent_rest__settle(r, false);
	for (size_t i = 0; i < NFAMILIES; i++)
		json_decref(r->req[i]);
	free(r->token);
	free(r);
}

/* Lays family i's request (req, running or not) over *o. 0 or -EINVAL with one line in err. */
static int overlay_one(size_t i, const json_t *req, int state, struct record_opts *o, char *err,
		       size_t errlen)
{
	const struct rest_family *f = &families[i];
	unsigned owned = owned_bits(f);
	struct record_opts *n;
	char *text;
	int r, st = state;

	if (!state) {
		if (f->kind == RECORD_REQ_SLI)
			o->sli = false;
		else
			o->types &= ~owned;
		return 0;
	}
	text = json_dumps(req, JSON_COMPACT);
	n = malloc(sizeof(*n));
	if (!text || !n) {
		free(text);
		free(n);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*n = *o;
	r = record_config_parse_request(text, strlen(text), f->path + 1, f->kind, n, &st, err,
					errlen);
	free(text);
	if (!r) {
		/* The request's own type bits; the other families' stay as they were. */
		unsigned mine = n->types & owned;

		if (!mine)
			mine = f->kind == RECORD_REQ_FLAMEGRAPH
				       ? ((o->types & owned) ? o->types & owned : PROBE_ONCPU)
				       : owned;
		n->types = (o->types & ~owned) | mine;
		n->sli = f->kind == RECORD_REQ_SLI ? true : o->sli;
		if (f->kind == RECORD_REQ_SLI)
			n->period = o->period; /* report_period: the agent's period stays */
		*o = *n;
	}
	free(n);
	return r;
}

int agent_rest__overlay(const struct agent_rest *r, const struct record_opts *base,
			struct record_opts *out, char *err, size_t errlen)
{
	*out = *base;
	for (size_t i = 0; i < NFAMILIES; i++) {
		int ret;

		if (r->state[i] < 0 && !r->req[i])
			continue;
		ret = overlay_one(i, r->req[i] ? r->req[i] : json_object(), r->state[i] ? 1 : 0,
				  out, err, errlen);
		if (ret)
			return ret;
	}
	agent_files_default(out);
	return 0;
}

/* {"result": ..., "message": ...} as gala-gopher answers. */
static void reply(struct agent_request *q, int status, const char *message)
{
	json_t *o = json_pack("{ssss}", "result", status == 200 ? "success" : "failed", "message",
			      message);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (!text) {
		agent_request_reply(q, 500, "text/plain; charset=utf-8", "out of memory\n");
		return;
	}
	agent_request_reply(q, status, JSON_TYPE, text);
	free(text);
	/* One line, as gala-gopher's. */
	if (q->reply) {
		char *b = realloc(q->reply, q->reply_len + 2);

		if (b) {
			q->reply = b;
			q->reply[q->reply_len++] = '\n';
			q->reply[q->reply_len] = 0;
		}
	}
}

/* stored with the keys of body over it: params key by key, the others replaced. */
static json_t *merge(const json_t *stored, json_t *body)
{
	json_t *m = stored ? json_deep_copy(stored) : json_object();
	const char *key;
	json_t *v;

	if (!m)
		return NULL;
	json_object_foreach(body, key, v) {
		json_t *old = json_object_get(m, key);

		if (!strcmp(key, "params") && json_is_object(old) && json_is_object(v)) {
			if (json_object_update(old, v))
				goto fail;
		} else if (json_object_set(m, key, v)) {
			goto fail;
		}
	}
	/* The state is kept apart (r->state), the rest is the request. */
	json_object_del(m, "state");
	return m;
fail:
	json_decref(m);
	return NULL;
}

static bool family_on(const struct rest_family *f, const struct record_opts *o)
{
	return f->kind == RECORD_REQ_SLI ? o->sli : (o->types & owned_bits(f)) != 0;
}

/* GET: the family's request as it runs, with "state". */
static void get_family(struct agent_rest *r, struct agent *a, int i, struct agent_request *q)
{
	const struct rest_family *f = &families[i];
	const struct record_opts *o = agent_opts(a);
	json_t *res = r->req[i] ? json_deep_copy(r->req[i]) : json_object();
	char *text;

	if (!res) {
		reply(q, 500, "out of memory");
		return;
	}
	if (f->kind == RECORD_REQ_FLAMEGRAPH) {
		json_t *cmd = json_object_get(res, "cmd"), *probes = json_array();

		for_each_stack_type(t)
			if (o->types & stack_types[t].probe)
				json_array_append_new(probes, json_string(stack_types[t].name));
		if (!json_is_object(cmd)) {
			cmd = json_object();
			json_object_set_new(res, "cmd", cmd);
		}
		json_object_set_new(cmd, "probe", probes);
	}
	json_object_set_new(res, "state", json_string(family_on(f, o) ? "running" : "stopped"));
	text = json_dumps(res, JSON_COMPACT);
	json_decref(res);
	if (!text) {
		reply(q, 500, "out of memory");
		return;
	}
	agent_request_reply(q, 200, JSON_TYPE, text);
	free(text);
}

int agent_rest_family(const char *path)
{
	for (size_t i = 0; i < NFAMILIES; i++)
		if (!strcmp(path, families[i].path))
			return (int)i;
	return -1;
}

int agent_rest__stage(struct agent_rest *r, int family, const char *body, size_t len,
		      const struct record_opts *base, struct record_opts *want, char *err,
		      size_t errlen)
{
	const struct rest_family *f = &families[family];
	struct record_opts *check = malloc(sizeof(*check));
	json_t *doc = NULL, *merged;
	int state = -1, ret;
	json_error_t je;

	agent_rest__settle(r, false);
	if (!check) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* gala-gopher's form is json={...}; a bare JSON object is taken too. */
	if (len >= 5 && !strncmp(body, "json=", 5)) {
		body += 5;
		len -= 5;
	}
	/* Checked alone first: the message names the key at fault. */
	*check = *base;
	ret = record_config_parse_request(body, len, f->path + 1, f->kind, check, &state, err,
					  errlen);
	free(check);
	if (ret)
		return ret;
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	merged = doc ? merge(r->req[family], doc) : NULL;
	json_decref(doc);
	if (!merged) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->staged = family;
	r->old_req = r->req[family];
	r->old_state = r->state[family];
	r->req[family] = merged;
	/* A request without a state changes a running family, and starts one never asked for
	 * (galatop's families are started by the request that configures them). */
	r->state[family] = state >= 0 ? state : r->old_state >= 0 ? r->old_state : 1;
	ret = agent_rest__overlay(r, base, want, err, errlen);
	if (ret)
		agent_rest__settle(r, false);
	return ret;
}

void agent_rest__settle(struct agent_rest *r, bool keep)
{
	int i = r->staged;

	if (i < 0)
		return;
	if (keep) {
		json_decref(r->old_req);
	} else {
		json_decref(r->req[i]);
		r->req[i] = r->old_req;
		r->state[i] = r->old_state;
	}
	r->old_req = NULL;
	r->staged = -1;
}

/* PUT: staged, applied, and kept only once applied. */
static void put_family(struct agent_rest *r, struct agent *a, const struct record_opts *base,
		       int i, struct agent_request *q)
{
	struct record_opts *want = malloc(sizeof(*want));
	char err[512] = "";

	if (!want) {
		reply(q, 500, "out of memory");
		return;
	}
	if (q->too_large) {
		snprintf(err, sizeof(err), "put data size exceeds %d bytes", AGENT_REST_BODY_MAX);
		reply(q, 400, err);
	} else if (agent_rest__stage(r, i, q->body, q->len, base, want, err, sizeof(err))) {
		reply(q, err[0] && strcmp(err, "out of memory") ? 400 : 500, err);
	} else if (agent_apply(a, want, err, sizeof(err))) {
		agent_rest__settle(r, false);
		reply(q, 400, err[0] ? err : "the new configuration failed");
	} else {
		agent_rest__settle(r, true);
		reply(q, 200, "New config takes effect");
	}
	free(want);
}

/* Constant-time comparison of the bearer token. */
static bool token_ok(const struct agent_rest *r, const char *auth)
{
	size_t n = strlen(r->token), m;
	unsigned char diff = 0;

	if (!auth || strncmp(auth, "Bearer ", 7))
		return false;
	auth += 7;
	m = strlen(auth);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)r->token[i] ^ (unsigned char)(i < m ? auth[i] : 0);
	return !diff && m == n;
}

void agent_rest__answer(struct agent_rest *r, struct agent *a, const struct record_opts *base,
			struct agent_request *q)
{
	int i;

	if (r->token && !token_ok(r, q->authorization)) {
		reply(q, 401, "unauthorized: send Authorization: Bearer TOKEN (--rest-token)");
		return;
	}
	i = agent_rest_family(q->path);
	if (i < 0) {
		reply(q, 404, "url not found");
		return;
	}
	if (!strcmp(q->method, "GET")) {
		get_family(r, a, i, q);
		return;
	}
	if (strcmp(q->method, "PUT")) {
		reply(q, 405, "method not allowed");
		return;
	}
	put_family(r, a, base, i, q);
	if (q->status == 200)
		agent_log(AGENT_LOG_INFO, "REST: PUT %s applied", q->path);
	else
		agent_log(AGENT_LOG_WARNING, "REST: PUT %s refused (%d): %.*s", q->path, q->status,
			  (int)(q->reply_len ? q->reply_len - 1 : 0), q->reply ? q->reply : "");
}
