/* The agent's HTTP servers on libmicrohttpd (one internal thread each) and the hand-over of
 * each request to the agent's thread. */
#include "agent_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#define ANSWER_WAIT_S 30 /* the longest a request waits for the agent's thread */

/* A request on its way: allocated by the server's thread, answered by the agent's. */
struct call {
	struct agent_request r;
	char *body;
	size_t len, cap;
	bool too_large;
	bool queued, taken, done, abandoned;
	struct call *next;
};

struct agent_http {
	char name[32];
	struct MHD_Daemon *d;
	size_t body_max;
	pthread_mutex_t lock;
	pthread_cond_t answered;
	struct call *head, **tail; /* waiting for the agent's thread */
	bool closing;
};

static void call_free(struct call *c)
{
	if (!c)
		return;
	free(c->body);
	free(c->r.reply);
	free(c);
}

void agent_request_reply(struct agent_request *r, int status, const char *content_type,
			 const char *text)
{
	free(r->reply);
	r->status = status;
	r->content_type = content_type;
	r->reply = strdup(text);
	r->reply_len = r->reply ? strlen(text) : 0;
	if (!r->reply)
		r->status = 500;
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

int agent_http_addr(const char *addr, struct sockaddr_storage *ss, bool *loopback, char *err,
		    size_t errlen)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	char host[256];
	const char *colon, *port;
	size_t hl;
	int r;

	if (addr[0] == '[') {
		const char *end = strchr(addr, ']');

		if (!end || end[1] != ':') {
			snprintf(err, errlen, "bad address '%s' (HOST:PORT, [IPv6]:PORT)", addr);
			return -EINVAL;
		}
		hl = (size_t)(end - addr - 1);
		port = end + 2;
		if (hl >= sizeof(host))
			hl = sizeof(host) - 1;
		memcpy(host, addr + 1, hl);
	} else {
		colon = strrchr(addr, ':');
		if (!colon) {
			snprintf(err, errlen, "bad address '%s' (HOST:PORT, [IPv6]:PORT)", addr);
			return -EINVAL;
		}
		hl = (size_t)(colon - addr);
		port = colon + 1;
		if (hl >= sizeof(host))
			hl = sizeof(host) - 1;
		memcpy(host, addr, hl);
	}
	host[hl] = 0;
	if (!*port || strspn(port, "0123456789") != strlen(port) || atoi(port) > 65535) {
		snprintf(err, errlen, "bad port in '%s' (1 to 65535, or 0 for any free one)", addr);
		return -EINVAL;
	}
	r = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (r || !res) {
		snprintf(err, errlen, "cannot resolve '%s': %s", addr, gai_strerror(r));
		if (res)
			freeaddrinfo(res);
		return -EINVAL;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*loopback = is_loopback(res->ai_addr);
	freeaddrinfo(res);
	return 0;
}

/* Hands c to the agent's thread and waits for its answer (or the deadline): true when
 * answered (1). When not, c is the caller's again (0) unless the agent's thread is answering it
 * right now: then it is marked abandoned, that thread frees it, and the caller must not touch
 * it (-1). */
static int wait_answer(struct agent_http *h, struct call *c)
{
	struct timespec until;
	int done;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ANSWER_WAIT_S;
	pthread_mutex_lock(&h->lock);
	if (!h->closing) {
		c->queued = true;
		*h->tail = c;
		h->tail = &c->next;
		while (!c->done && !h->closing &&
		       pthread_cond_timedwait(&h->answered, &h->lock, &until) != ETIMEDOUT)
			;
	}
	done = c->done;
	if (!done && c->taken) {
		c->abandoned = true;
		done = -1;
	} else if (!done && c->queued) {
		struct call **pp = &h->head, *prev = NULL;

		while (*pp && *pp != c) {
			prev = *pp;
			pp = &(*pp)->next;
		}
		if (*pp) {
			*pp = c->next;
			if (!*pp)
				h->tail = prev ? &prev->next : &h->head;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return done;
}

static enum MHD_Result respond(struct MHD_Connection *con, int status, const char *ctype,
			       char *body, size_t len)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, body ? body : (char *)"",
						body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!resp) {
		free(body);
		return MHD_NO;
	}
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	ret = MHD_queue_response(con, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct agent_http *h = cls;
	struct call *c = *con_cls;
	enum MHD_Result ret;
	int r;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return MHD_NO;
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_size) {
		/* The body, kept up to the cap; past it only counted. */
		if (!c->too_large && c->len + *upload_size > h->body_max) {
			c->too_large = true;
			free(c->body);
			c->body = NULL;
			c->len = c->cap = 0;
		}
		if (!c->too_large) {
			if (c->len + *upload_size + 1 > c->cap) {
				size_t n = c->len + *upload_size + 1;
				char *b = realloc(c->body, n);

				if (!b)
					return MHD_NO;
				c->body = b;
				c->cap = n;
			}
			memcpy(c->body + c->len, upload, *upload_size);
			c->len += *upload_size;
			c->body[c->len] = 0;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	c->r.method = method;
	c->r.path = url;
	c->r.body = c->body ? c->body : "";
	c->r.len = c->len;
	c->r.too_large = c->too_large;
	c->r.authorization = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_AUTHORIZATION);
	r = wait_answer(h, c);
	if (r != 1) {
		if (r < 0)
			*con_cls = NULL; /* the agent's thread frees it */
		return respond(con, 503, "text/plain; charset=utf-8",
			       strdup("galatop agent: busy or stopping\n"), 32);
	}
	ret = respond(con, c->r.status ? c->r.status : 500, c->r.content_type, c->r.reply,
		      c->r.reply_len);
	c->r.reply = NULL;
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *con, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	call_free(*con_cls);
	*con_cls = NULL;
}

struct agent_http *agent_http__start(const char *name, const char *addr, size_t body_max,
				     char *err, size_t errlen)
{
	struct agent_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	bool loopback;
	char why[256];
	int port;

	if (!h) {
		snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	if (agent_http_addr(addr, &ss, &loopback, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", name, why);
		free(h);
		return NULL;
	}
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->body_max = body_max;
	h->tail = &h->head;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->answered, NULL);
	port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					      : ((struct sockaddr_in *)&ss)->sin_port);
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
					(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				(uint16_t)port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
				(struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "%s: cannot listen on %s: %s", name, addr,
			 errno ? strerror(errno) : "refused");
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->answered);
		free(h);
		return NULL;
	}
	return h;
}

int agent_http__port(const struct agent_http *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);

	return i ? i->port : -1;
}

void agent_http__serve(struct agent_http *h, agent_http_fn fn, void *ctx)
{
	struct call *c;

	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	while ((c = h->head)) {
		h->head = c->next;
		if (!h->head)
			h->tail = &h->head;
		c->taken = true;
		pthread_mutex_unlock(&h->lock);
		fn(ctx, &c->r);
		pthread_mutex_lock(&h->lock);
		c->done = true;
		if (c->abandoned)
			call_free(c); /* its server thread stopped waiting */
		else
			pthread_cond_broadcast(&h->answered);
	}
	pthread_mutex_unlock(&h->lock);
}

void agent_http__stop(struct agent_http *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->closing = true;
	pthread_cond_broadcast(&h->answered);
	pthread_mutex_unlock(&h->lock);
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->answered);
	free(h);
}
