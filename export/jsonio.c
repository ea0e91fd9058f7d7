#include "jsonio.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../model/sanitize.h"
#include "util/grow.h"
#include "util/utf8.h"

#define MAX_DEPTH 64
#define EXACT_LIMIT 9007199254740992.0 /* 2^53: doubles below it are exact integers */
#define OUT_CHUNK (1u << 20)

int json_err_set(struct json_err *e, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (e->set || !e->s || !e->len)
		return ret;
	e->set = true;
	n = snprintf(e->s, e->len, "%s: ", e->name);
	if (n >= 0 && (size_t)n < e->len) {
		va_start(ap, fmt);
		vsnprintf(e->s + n, e->len - n, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static void out_deflate(struct json_out *o, int flush)
{
	int ret;

	o->z.next_in = (unsigned char *)o->buf;
	o->z.avail_in = (uInt)o->len;
	do {
		size_t n;

		o->z.next_out = o->zbuf;
		o->z.avail_out = OUT_CHUNK;
		ret = deflate(&o->z, flush);
		n = OUT_CHUNK - o->z.avail_out;
		if (n && !o->err && fwrite(o->zbuf, 1, n, o->f) != n)
			o->err = errno ? -errno : -EIO;
	} while (o->z.avail_out == 0 || (flush == Z_FINISH && ret == Z_OK));
	o->len = 0;
}

/* Makes room for n more bytes in the buffer, deflating what it holds first if needed. */
static char *out_room(struct json_out *o, size_t n)
{
	if (o->len + n > o->cap && o->len)
		out_deflate(o, Z_NO_FLUSH);
	if (ARRAY_GROW(o->buf, o->cap, n)) {
		o->err = o->err ? o->err : -ENOMEM;
		o->len = 0;
		return NULL;
	}
	return o->buf + o->len;
}

void json_out__raw(struct json_out *o, const char *s, size_t n)
{
	char *p = out_room(o, n);

	if (p) {
		memcpy(p, s, n);
		o->len += n;
	}
}

void json_out__lit(struct json_out *o, const char *s)
{
	json_out__raw(o, s, strlen(s));
}

/* Writes s[0..n) as a JSON string: controls as \u00XX, invalid UTF-8 bytes as U+FFFD. */
size_t json_escape(char *dst, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	char *p = dst;

	*p++ = '"';
	for (size_t i = 0; i < n;) {
		size_t k;

		if (u[i] == '"' || u[i] == '\\') {
			*p++ = '\\';
			*p++ = (char)u[i++];
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[u[i] >> 4];
			p[5] = hex[u[i++] & 15];
			p += 6;
		} else if (u[i] < 0x7f) {
			*p++ = (char)u[i++];
		} else if ((k = utf8_seq_len(u + i, n - i))) {
			memcpy(p, u + i, k);
			p += k;
			i += k;
		} else {
			memcpy(p, "\\ufffd", 6);
			p += 6;
			i++;
		}
	}
	*p++ = '"';
	return (size_t)(p - dst);
}

void json_out__str(struct json_out *o, const char *s, size_t n)
{
	char *p = out_room(o, n * 6 + 2);

	if (p)
		o->len += json_escape(p, s, n);
}

void json_fput_str(FILE *f, const char *s)
{
	char buf[1024], *p = buf;
	size_t n = s ? strlen(s) : 0;

	if (n * 6 + 2 > sizeof(buf) && !(p = malloc(n * 6 + 2))) {
		fputs("\"\"", f);
		return;
	}
	fwrite(p, 1, json_escape(p, s ? s : "", n), f);
	if (p != buf)
		free(p);
}

void json_out__cstr(struct json_out *o, const char *s)
{
	json_out__str(o, s ? s : "", s ? strlen(s) : 0);
}

void json_out__u64(struct json_out *o, uint64_t v)
{
	char tmp[24], *q = tmp + sizeof(tmp);

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	json_out__raw(o, q, (size_t)(tmp + sizeof(tmp) - q));
}

/* Integral values below 2^53 as integers, others with the 17 digits that read back exactly. */
void json_out__num(struct json_out *o, double v)
{
	char tmp[32];

	if (v >= 0 && v < EXACT_LIMIT && v == floor(v)) {
		json_out__u64(o, (uint64_t)v);
		return;
	}
	json_out__raw(o, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%.17g", v));
}

int json_in__fail(struct json_in *s, const char *fmt, ...)
{
	char msg[160], ctx[160] = "";
	size_t n = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (int i = 0; i < 2 && s->where[i]; i++) {
		n += (size_t)snprintf(ctx + n, sizeof(ctx) - n, "%s%s", i ? "." : "", s->where[i]);
		if (s->index[i] != SIZE_MAX && n < sizeof(ctx))
			n += (size_t)snprintf(ctx + n, sizeof(ctx) - n, "[%zu]", s->index[i]);
		if (n >= sizeof(ctx))
			break;
	}
	return json_err_set(s->e, -EINVAL, "%s%s%s%s (byte %zu of the JSON)", ctx, *ctx ? ": " : "",
			    msg, s->p < s->end ? "" : ", found the end", (size_t)(s->p - s->start));
}

void json_in__where(struct json_in *s, int level, const char *where, size_t index)
{
	s->where[level] = where;
	s->index[level] = index;
	if (!level)
		s->where[1] = NULL;
}

static void json_in__ws(struct json_in *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

bool json_in__peek(struct json_in *s, char c)
{
	json_in__ws(s);
	return s->p < s->end && *s->p == c;
}

int json_in__expect(struct json_in *s, char c)
{
	if (json_in__peek(s, c)) {
		s->p++;
		return 0;
	}
	return json_in__fail(s, "expected '%c'", c);
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16u;

		if (d > 15)
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

/* Decodes the escapes of the string body src[0..n) into s->sbuf; lone surrogates become
 * U+FFFD. The output is never longer than the input. */
static int unescape(struct json_in *s, const char *src, size_t n, size_t *len)
{
	char *o;

	if (ARRAY_GROW(s->sbuf, s->scap, n + 1))
		return json_err_set(s->e, -ENOMEM, "%s", strerror(ENOMEM));
	o = s->sbuf;
	for (size_t i = 0; i < n;) {
		unsigned cp, lo;

		if ((unsigned char)src[i] < 0x20)
			return json_in__fail(s, "control character inside a string");
		if (src[i] != '\\') {
			*o++ = src[i++];
			continue;
		}
		switch (src[i + 1]) { /* src[n] is the closing quote, so i + 1 <= n */
		case '"':
		case '\\':
		case '/':
			*o++ = src[i + 1];
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			if (n - i < 6 || hex4(src + i + 2, &cp))
				return json_in__fail(s, "invalid \\u escape");
			i += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && n - i >= 8 && src[i + 2] == '\\' &&
			    src[i + 3] == 'u' && !hex4(src + i + 4, &lo) && lo >= 0xdc00 &&
			    lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;
			}
			o += utf8_put(o, cp);
			break;
		default:
			return json_in__fail(s, "invalid escape in a string");
		}
		i += 2;
	}
	*len = (size_t)(o - s->sbuf);
	return 0;
}

/* Reads a string; *out points into the input or s->sbuf, valid until the next string. */
int json_in__str(struct json_in *s, const char **out, size_t *len)
{
	const char *q;
	size_t i, n;
	bool esc = false;

	if (!json_in__peek(s, '"'))
		return json_in__fail(s, "expected a string");
	q = ++s->p;
	n = (size_t)(s->end - q);
	for (i = 0; i < n && q[i] != '"'; i++) {
		if (q[i] == '\\') {
			esc = true;
			i++;
		} else if ((unsigned char)q[i] < 0x20) {
			esc = true; /* unescape reports it */
		}
	}
	if (i >= n)
		return json_in__fail(s, "unterminated string");
	s->p = q + i + 1;
	if (!esc) {
		*out = q;
		*len = i;
		return 0;
	}
	if (unescape(s, q, i, len))
		return -EINVAL;
	*out = s->sbuf;
	return 0;
}

/* Length of the JSON number at p[0..n), 0 if there is none; plain when it is a non-negative
 * integer without fraction or exponent. */
static size_t number_len(const char *p, size_t n, bool *plain)
{
	size_t i = 0, d;

	*plain = true;
	if (i < n && p[i] == '-') {
		*plain = false;
		i++;
	}
	for (d = i; i < n && p[i] >= '0' && p[i] <= '9'; i++)
		;
	if (i == d || (p[d] == '0' && i - d > 1))
		return 0;
	if (i < n && p[i] == '.') {
		*plain = false;
		for (d = ++i; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		*plain = false;
		if (++i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		for (d = i; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	return i;
}

bool json_is_number(const char *s, size_t n)
{
	bool plain;

	return number_len(s, n, &plain) == n;
}

int json_in__number(struct json_in *s, const char **tok, size_t *len, bool *plain)
{
	json_in__ws(s);
	*len = number_len(s->p, (size_t)(s->end - s->p), plain);
	if (!*len)
		return json_in__fail(s, "expected a number");
	*tok = s->p;
	s->p += *len;
	return 0;
}

int json_in__uint(struct json_in *s, uint64_t max, uint64_t *v)
{
	const char *tok = NULL;
	size_t len;
	bool plain;

	if (json_in__number(s, &tok, &len, &plain))
		return -EINVAL;
	*v = 0;
	for (size_t i = 0; plain && i < len; i++) {
		uint64_t d = (uint64_t)(tok[i] - '0');

		if (d > max || *v > (max - d) / 10) {
			plain = false;
			break;
		}
		*v = *v * 10 + d;
	}
	if (!plain) {
		s->p = tok;
		return json_in__fail(s, "expected an integer in 0..%llu", (unsigned long long)max);
	}
	return 0;
}

/* Reads a finite number, negative ones too when neg. */
static int read_double(struct json_in *s, double *v, bool neg)
{
	const char *tok;
	size_t len;
	bool plain;

	if (json_in__number(s, &tok, &len, &plain))
		return -EINVAL;
	if (plain && len < 16) {
		uint64_t u = 0;

		for (size_t i = 0; i < len; i++)
			u = u * 10 + (uint64_t)(tok[i] - '0');
		*v = (double)u;
		return 0;
	}
	if (ARRAY_GROW(s->sbuf, s->scap, len + 1))
		return json_err_set(s->e, -ENOMEM, "%s", strerror(ENOMEM));
	memcpy(s->sbuf, tok, len);
	s->sbuf[len] = '\0';
	*v = strtod(s->sbuf, NULL);
	if (!isfinite(*v) || (!neg && (*v < 0 || (*v == 0 && tok[0] == '-')))) {
		s->p = tok;
		return json_in__fail(s, neg ? "expected a finite number" : "expected a finite number >= 0");
	}
	return 0;
}

/* Every value of a snapshot is a count or a time, or a change of one. */
int json_in__value(struct json_in *s, double *v)
{
	return read_double(s, v, false);
}

int json_in__signed(struct json_in *s, double *v)
{
	return read_double(s, v, true);
}

bool json_in__word(struct json_in *s, const char *w)
{
	size_t n = strlen(w);

	json_in__ws(s);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
		return false;
	s->p += n;
	return true;
}

int json_in__bool(struct json_in *s, bool *v)
{
	if (json_in__word(s, "true"))
		*v = true;
	else if (json_in__word(s, "false"))
		*v = false;
	else
		return json_in__fail(s, "expected true or false");
	return 0;
}

/* Steps through an object: 1 with the next key read (its value follows), 0 after the closing
 * brace, -errno on error. *first is true before the first call. */
int json_in__obj_next(struct json_in *s, bool *first, const char **key, size_t *klen)
{
	if (*first && json_in__expect(s, '{'))
		return -EINVAL;
	if (json_in__peek(s, '}')) {
		s->p++;
		return 0;
	}
	if (!*first && json_in__expect(s, ','))
		return -EINVAL;
	*first = false;
	if (json_in__str(s, key, klen) || json_in__expect(s, ':'))
		return -EINVAL;
	return 1;
}

/* Steps through an array: 1 when an element follows, 0 after the closing bracket. */
int json_in__arr_next(struct json_in *s, bool *first)
{
	if (*first && json_in__expect(s, '['))
		return -EINVAL;
	if (json_in__peek(s, ']')) {
		s->p++;
		return 0;
	}
	if (!*first && json_in__expect(s, ','))
		return -EINVAL;
	*first = false;
	return 1;
}

bool json_key_is(const char *k, size_t n, const char *lit)
{
	return n == strlen(lit) && !memcmp(k, lit, n);
}

/* Skips a value of a member this reader does not know (a newer writer's addition). */
static int skip(struct json_in *s, int depth)
{
	const char *str;
	size_t n;
	bool first = true, b;
	int more;

	if (depth > MAX_DEPTH)
		return json_in__fail(s, "nested deeper than %d levels", MAX_DEPTH);
	if (json_in__peek(s, '"'))
		return json_in__str(s, &str, &n);
	if (json_in__peek(s, '{')) {
		while ((more = json_in__obj_next(s, &first, &str, &n)) == 1)
			if (skip(s, depth + 1))
				return -EINVAL;
		return more;
	}
	if (json_in__peek(s, '[')) {
		while ((more = json_in__arr_next(s, &first)) == 1)
			if (skip(s, depth + 1))
				return -EINVAL;
		return more;
	}
	if (json_in__word(s, "null") || json_in__word(s, "true") || json_in__word(s, "false"))
		return 0;
	return json_in__number(s, &str, &n, &b);
}

int json_in__skip(struct json_in *s)
{
	return skip(s, 0);
}

bool json_in__at_end(struct json_in *s)
{
	json_in__ws(s);
	return s->p == s->end;
}

void json_in__init(struct json_in *s, const char *text, size_t len, struct json_err *e)
{
	*s = (struct json_in){.start = text, .p = text, .end = text + len, .e = e};
	s->where[0] = s->where[1] = NULL;
	s->index[0] = s->index[1] = SIZE_MAX;
}

void json_in__fini(struct json_in *s)
{
	free(s->sbuf);
	s->sbuf = NULL;
}

int json_out__init(struct json_out *o, FILE *f, int level)
{
	*o = (struct json_out){.f = f, .cap = OUT_CHUNK};
	o->buf = malloc(OUT_CHUNK);
	o->zbuf = malloc(OUT_CHUNK);
	/* windowBits 31: a gzip header without name and with mtime 0. */
	if (!o->buf || !o->zbuf ||
	    deflateInit2(&o->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(o->buf);
		free(o->zbuf);
		o->buf = NULL;
		o->zbuf = NULL;
		return -ENOMEM;
	}
	return 0;
}

int json_out__finish(struct json_out *o)
{
	out_deflate(o, Z_FINISH);
	return o->err;
}

void json_out__fini(struct json_out *o)
{
	if (o->buf)
		deflateEnd(&o->z);
	free(o->buf);
	free(o->zbuf);
	o->buf = NULL;
	o->zbuf = NULL;
}

locale_t json_c_locale_begin(locale_t *old)
{
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);

	*old = c ? uselocale(c) : (locale_t)0;
	return c;
}

void json_c_locale_end(locale_t c, locale_t old)
{
	if (!c)
		return;
	uselocale(old);
	freelocale(c);
}
