/* The Pyroscope sender: see pyroscope_post.h. */
#include "pyroscope_post.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/sanitize.h"
#include "util/clock.h"
#include "util/file.h"

#define AUTH_MAX 4096
#define BACKOFF_MAX_MS 30000
#define REPLY_MAX 200 /* bytes of a refusal's body kept for the error line */

struct pyro_post {
	char *base; /* URL up to "/ingest", without the trailing slash */
	char *userpwd;
	struct curl_slist *headers;
	struct pyro_post_opts o;
	CURL *curl;
	int64_t deadline_ms; /* of the send under way */
	pthread_mutex_t lock; /* st, read by other threads */
	struct pyro_post_stats st;
	char reply[REPLY_MAX + 1];
	size_t reply_len;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_ret;

static void curl_init(void)
{
	curl_init_ret = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* Reads the auth file into userpwd (Basic) or an Authorization header (Bearer). */
static int read_auth(struct pyro_post *pp, const char *path, char *err, size_t errlen)
{
	char *text, *s, *e, hdr[AUTH_MAX + 32];
	size_t len;
	int ret = file_read(path, AUTH_MAX, 0, &text, &len);

	if (ret) {
		set_err(err, errlen, "--pyroscope-auth %s: %s", path, file_strerror(ret, AUTH_MAX));
		return ret;
	}
	s = text;
	e = text + len;
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		e--;
	*e = '\0';
	ret = -EINVAL;
	if (s == e || memchr(s, '\0', (size_t)(e - s)) || has_ctl(s)) {
		set_err(err, errlen, "--pyroscope-auth %s: %s", path,
			s == e ? "empty" : "more than one line, or control characters");
	} else if (!strncmp(s, "Bearer ", 7) || !strchr(s, ':')) {
		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s",
			 strncmp(s, "Bearer ", 7) ? s : s + 7);
		struct curl_slist *h = curl_slist_append(pp->headers, hdr);

		ret = h ? 0 : -ENOMEM;
		if (h)
			pp->headers = h;
	} else {
		pp->userpwd = strdup(s);
		ret = pp->userpwd ? 0 : -ENOMEM;
	}
	memset(text, 0, len);
	free(text);
	return ret;
}

static size_t on_reply(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct pyro_post *pp = ctx;
	size_t n = size * nmemb, room = REPLY_MAX - pp->reply_len;

	memcpy(pp->reply + pp->reply_len, data, n < room ? n : room);
	pp->reply_len += n < room ? n : room;
	return n;
}

/* Aborts a transfer at the send's deadline. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct pyro_post *pp = ctx;

	return clock_mono_ms() >= pp->deadline_ms;
}

static void record_error(struct pyro_post *pp, const char *query, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void record_error(struct pyro_post *pp, const char *query, const char *fmt, ...)
{
	char msg[sizeof(pp->st.last_error)], name[160];
	const char *q = strncmp(query, "name=", 5) ? query : query + 5;
	size_t nlen = strcspn(q, "&");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(name, sizeof(name), "%.*s", (int)(nlen < 100 ? nlen : 100), q);
	pthread_mutex_lock(&pp->lock);
	/* 11 + 200 + 14 + 100 + 3 + 180 bytes at most: fits last_error. */
	snprintf(pp->st.last_error, sizeof(pp->st.last_error),
		 "pyroscope: %.200s/ingest (name=%.100s): %.180s", pp->base, name, msg);
	pthread_mutex_unlock(&pp->lock);
}

/* One try: 0 sent, 1 worth retrying, -1 refused. */
static int post_once(struct pyro_post *pp, const char *query, const char *body, size_t len,
		     bool last)
{
	size_t ulen = strlen(pp->base) + strlen(query) + 10;
	char *url = malloc(ulen), clean[SANITIZE_MAX(REPLY_MAX) + 1];
	int64_t left = pp->deadline_ms - clock_mono_ms();
	long code = 0;
	CURLcode res;

	if (!url)
		return 1;
	snprintf(url, ulen, "%s/ingest?%s", pp->base, query);
	pp->reply_len = 0;
	if (left > pp->o.timeout_ms)
		left = pp->o.timeout_ms;
	curl_easy_setopt(pp->curl, CURLOPT_TIMEOUT_MS, (long)(left > 1 ? left : 1));
	curl_easy_setopt(pp->curl, CURLOPT_URL, url);
	curl_easy_setopt(pp->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(pp->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	res = curl_easy_perform(pp->curl);
	free(url);
	if (res != CURLE_OK) {
		if (last)
			record_error(pp, query, "%s", curl_easy_strerror(res));
		return 1;
	}
	curl_easy_getinfo(pp->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		return 0;
	bool retry = code == 408 || code == 429 || code >= 500;

	if (last || !retry) {
		size_t n = sanitize_text(pp->reply, pp->reply_len, clean);

		while (n && (clean[n - 1] == '\n' || clean[n - 1] == ' '))
			n--;
		clean[n] = '\0';
		record_error(pp, query, "HTTP %ld%s%s", code, n ? ": " : "", clean);
	}
	return retry ? 1 : -1;
}

int pyro_post__send(struct pyro_post *pp, const char *query, const char *body, size_t len,
		    int64_t deadline_ms)
{
	unsigned backoff = pp->o.backoff_ms;
	int ret = -ETIMEDOUT;

	pp->deadline_ms = deadline_ms;
	for (unsigned attempt = 0; clock_mono_ms() < deadline_ms; attempt++) {
		bool last = attempt >= pp->o.retries;
		int r = post_once(pp, query, body, len, last);
		int64_t wake = clock_mono_ms() + backoff;

		if (r <= 0) {
			ret = r ? -EINVAL : 0;
			break;
		}
		ret = -EIO;
		if (last)
			break;
		if (wake >= deadline_ms) {
			ret = -ETIMEDOUT;
			break;
		}
		pthread_mutex_lock(&pp->lock);
		pp->st.retried++;
		pthread_mutex_unlock(&pp->lock);
		usleep((useconds_t)backoff * 1000);
		backoff = backoff > BACKOFF_MAX_MS / 2 ? BACKOFF_MAX_MS : backoff * 2;
	}
	if (ret == -ETIMEDOUT)
		record_error(pp, query, "out of time (the period's deadline) after %s",
			     pp->st.retried ? "retries" : "a try");
	pthread_mutex_lock(&pp->lock);
	if (ret) {
		pp->st.failed++;
	} else {
		pp->st.sent++;
		pp->st.bytes += len;
	}
	pthread_mutex_unlock(&pp->lock);
	return ret;
}

/* The base URL: a scheme added to "host:port" (gala-gopher's pyroscope_server), the trailing
 * slash and an "/ingest" the user gave taken off. NULL when not http(s) or on ENOMEM. */
static char *base_url(const char *url)
{
	bool scheme = strstr(url, "://") != NULL;
	size_t n;
	char *b;

	if (scheme && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return NULL;
	if (!*url || has_ctl(url) || strpbrk(url, " ?#"))
		return NULL;
	if (asprintf(&b, "%s%s", scheme ? "" : "http://", url) < 0)
		return NULL;
	n = strlen(b);
	while (n && b[n - 1] == '/')
		b[--n] = '\0';
	if (n > 7 && !strcmp(b + n - 7, "/ingest"))
		b[n - 7] = '\0';
	return b;
}

int pyro_post__new(const struct pyro_post_opts *o, struct pyro_post **out, char *err,
		   size_t errlen)
{
	struct pyro_post *pp = calloc(1, sizeof(*pp));
	char hdr[512];
	int ret = -ENOMEM;

	*out = NULL;
	if (!pp)
		goto nomem;
	pp->o = *o;
	if (!pp->o.backoff_ms)
		pp->o.backoff_ms = 500;
	if (!pp->o.timeout_ms)
		pp->o.timeout_ms = 10000;
	pthread_mutex_init(&pp->lock, NULL);
	pp->base = base_url(o->url);
	if (!pp->base) {
		set_err(err, errlen, "--pyroscope %s: not an http:// or https:// URL", o->url);
		ret = -EINVAL;
		goto fail;
	}
	if (o->tenant) {
		if (!*o->tenant || strlen(o->tenant) > 256 || has_ctl(o->tenant)) {
			set_err(err, errlen, "--pyroscope-tenant: 1 to 256 printable characters");
			ret = -EINVAL;
			goto fail;
		}
		snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", o->tenant);
		pp->headers = curl_slist_append(pp->headers, hdr);
		if (!pp->headers)
			goto nomem;
	}
	if (o->auth_file) {
		ret = read_auth(pp, o->auth_file, err, errlen);
		if (ret)
			goto fail;
	}
	pp->headers = curl_slist_append(pp->headers, "Content-Type: binary/octet-stream");
	pthread_once(&curl_once, curl_init);
	if (!pp->headers || curl_init_ret != CURLE_OK || !(pp->curl = curl_easy_init()))
		goto nomem;
	curl_easy_setopt(pp->curl, CURLOPT_HTTPHEADER, pp->headers);
	curl_easy_setopt(pp->curl, CURLOPT_USERAGENT, "galatop/" GALATOP_VERSION);
	curl_easy_setopt(pp->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)pp->o.timeout_ms);
	curl_easy_setopt(pp->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(pp->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(pp->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(pp->curl, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(pp->curl, CURLOPT_WRITEDATA, pp);
	curl_easy_setopt(pp->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(pp->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(pp->curl, CURLOPT_XFERINFODATA, pp);
	if (pp->userpwd) {
		curl_easy_setopt(pp->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(pp->curl, CURLOPT_USERPWD, pp->userpwd);
	}
	*out = pp;
	return 0;
nomem:
	set_err(err, errlen, "--pyroscope: out of memory");
	ret = -ENOMEM;
fail:
	if (pp) {
		curl_easy_cleanup(pp->curl);
		curl_slist_free_all(pp->headers);
		free(pp->base);
		free(pp->userpwd);
		pthread_mutex_destroy(&pp->lock);
		free(pp);
	}
	return ret;
}

void pyro_post__stats(struct pyro_post *pp, struct pyro_post_stats *st)
{
	pthread_mutex_lock(&pp->lock);
	*st = pp->st;
	pthread_mutex_unlock(&pp->lock);
}

void pyro_post__free(struct pyro_post *pp)
{
	if (!pp)
		return;
	curl_easy_cleanup(pp->curl);
	curl_slist_free_all(pp->headers);
	free(pp->base);
	if (pp->userpwd)
		memset(pp->userpwd, 0, strlen(pp->userpwd));
	free(pp->userpwd);
	pthread_mutex_destroy(&pp->lock);
	free(pp);
}
