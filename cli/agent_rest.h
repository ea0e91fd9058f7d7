/* gala-gopher's REST control of the agent: PUT /flamegraph, /tprofiling, /l7, /sli with
 * json={cmd, snoopers, params, state} start, stop and reconfigure that family; GET returns its
 * state. The requests are kept per family and laid over the command line's options. */
#ifndef GALATOP_CLI_AGENT_REST_H
#define GALATOP_CLI_AGENT_REST_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/record_opts.h"

#define AGENT_REST_BODY_MAX 65536 /* bytes of a request body; a request is a few hundred */

struct agent;
struct agent_request;
struct agent_rest;

/* The families' requests, none yet; NULL on ENOMEM. token (NULL: none) is the bearer token
 * every request must carry. */
struct agent_rest *agent_rest__new(const char *token);
/* Frees it; NULL is a no-op. */
void agent_rest__free(struct agent_rest *r);
/* out = base with every family's request laid over it (a stopped family off, a running one on
 * with its targets and parameters). 0, or -EINVAL with one line in err. */
int agent_rest__overlay(const struct agent_rest *r, const struct record_opts *base,
			struct record_opts *out, char *err, size_t errlen);
/* The family a REST path names (an index for agent_rest__stage), or -1. */
int agent_rest_family(const char *path);
/* Stages the PUT body[0..len) ("json={...}" or a bare object) for family: checked alone,
 * merged into the family's request as gala-gopher merges (cmd, snoopers and state replaced,
 * params key by key), and laid over base into *want. 0, or -EINVAL (the 400 message in err)
 * or -ENOMEM; nothing stays staged then. */
int agent_rest__stage(struct agent_rest *r, int family, const char *body, size_t len,
		      const struct record_opts *base, struct record_opts *want, char *err,
		      size_t errlen);
/* Keeps the staged request (keep: it was applied) or drops it, back to the one before;
 * no-op when none is staged. */
void agent_rest__settle(struct agent_rest *r, bool keep);
/* Answers one request on the agent's thread: checks, stores and applies (agent_apply) a PUT,
 * describes a family on GET; errors as gala-gopher answers them (400, 404, 405 with
 * {"result": "failed", "message": ...}), 401 without the token when one is set. */
void agent_rest__answer(struct agent_rest *r, struct agent *a, const struct record_opts *base,
			struct agent_request *q);

#endif
