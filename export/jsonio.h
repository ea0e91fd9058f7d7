/* Streaming JSON for documents too big for a tree (jansson spends ~40 bytes per number, and a
 * snapshot holds millions): a writer that gzip-compresses as it goes, and a strict pull reader
 * over a buffer that names the place of every error. Numbers go through printf and strtod:
 * callers switch to the C numeric locale around them (json_c_locale_begin/end). */
#ifndef GALATOP_EXPORT_JSONIO_H
#define GALATOP_EXPORT_JSONIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <locale.h>
#include <zlib.h>

/* One-line error "name: message"; only the first failure is kept. */
/* Switches this thread to the C numeric locale, whatever the TUI set, so "1.5" stays "1.5";
 * returns the locale to hand to json_c_locale_end with *old. */
locale_t json_c_locale_begin(locale_t *old);
/* Restores the thread's locale. */
void json_c_locale_end(locale_t c, locale_t old);

struct json_err {
	char *s;
	size_t len;
	const char *name;
	bool set;
};

/* Fills e with "name: " and the message unless it already holds one; returns ret. */
int json_err_set(struct json_err *e, int ret, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct json_out {
	FILE *f;
	z_stream z;
	char *buf;
	size_t len, cap;
	unsigned char *zbuf;
	int err; /* -errno of the first failure */
};

/* Prepares o to write gzip data (mtime 0, so equal text gives equal bytes) to f, which stays
 * the caller's. 0 or -ENOMEM. */
int json_out__init(struct json_out *o, FILE *f, int level);
/* Ends the gzip stream; returns 0 or the first -errno of any write since init. */
int json_out__finish(struct json_out *o);
/* Frees o's buffers (not its FILE); safe after a failed init. */
void json_out__fini(struct json_out *o);
/* Appends raw text, a NUL-terminated literal, a JSON string (control bytes escaped, invalid
 * UTF-8 bytes as U+FFFD; NULL is ""), an integer, a number (integral values below 2^53 as
 * integers, others with 17 significant digits so they read back exactly). */
void json_out__raw(struct json_out *o, const char *s, size_t n);
void json_out__lit(struct json_out *o, const char *s);
void json_out__str(struct json_out *o, const char *s, size_t n);
void json_out__cstr(struct json_out *o, const char *s);
void json_out__u64(struct json_out *o, uint64_t v);
void json_out__num(struct json_out *o, double v);
/* Writes s[0..n) as a JSON string (quotes included, escaped as json_out__str does) into dst,
 * which has room for n * 6 + 2 bytes; returns the bytes written. */
size_t json_escape(char *dst, const char *s, size_t n);
/* Writes the NUL-terminated s (NULL is "") to f as a JSON string. */
void json_fput_str(FILE *f, const char *s);
/* True when s[0..n) is exactly one JSON number. */
bool json_is_number(const char *s, size_t n);

struct json_in {
	const char *start, *p, *end;
	struct json_err *e;
	const char *where[2]; /* context for errors: where[0][index[0]].where[1][index[1]] */
	size_t index[2];      /* SIZE_MAX prints no index */
	char *sbuf;	      /* decoded strings that held escapes */
	size_t scap;
};

/* Reads text[0..len) (borrowed); errors go to e. */
void json_in__init(struct json_in *s, const char *text, size_t len, struct json_err *e);
void json_in__fini(struct json_in *s);
/* Reports "context: message[, found the end] (byte N of the JSON)" to e; returns -EINVAL. */
int json_in__fail(struct json_in *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets the error context of a level; setting level 0 clears level 1. */
void json_in__where(struct json_in *s, int level, const char *where, size_t index);
/* True when the next non-blank byte is c (not consumed). */
bool json_in__peek(struct json_in *s, char c);
/* True when only whitespace is left. */
bool json_in__at_end(struct json_in *s);
/* Consumes c after blanks, or fails. 0 or -EINVAL. */
int json_in__expect(struct json_in *s, char c);
/* Reads a string: *out points into the text or s->sbuf, valid until the next string; the bytes
 * are unchecked (\u0000 gives a NUL, raw bytes pass as they are). 0, -EINVAL or -ENOMEM. */
int json_in__str(struct json_in *s, const char **out, size_t *len);
/* Reads a number's text; plain when it is a non-negative integer without fraction or exponent. */
int json_in__number(struct json_in *s, const char **tok, size_t *len, bool *plain);
/* Reads an integer in 0..max. */
int json_in__uint(struct json_in *s, uint64_t max, uint64_t *v);
/* Reads a finite number >= 0 (-0 and overflow to infinity are refused). */
int json_in__value(struct json_in *s, double *v);
/* Reads a finite number, negative ones too. */
int json_in__signed(struct json_in *s, double *v);
/* Consumes the bare word w (true, false, null) if it comes next. */
bool json_in__word(struct json_in *s, const char *w);
int json_in__bool(struct json_in *s, bool *v);
/* Steps through an object: 1 with the next key read (its value follows), 0 after the closing
 * brace, -errno on error. *first is true before the first call. */
int json_in__obj_next(struct json_in *s, bool *first, const char **key, size_t *klen);
/* Steps through an array: 1 when an element follows, 0 after the closing bracket. */
int json_in__arr_next(struct json_in *s, bool *first);
/* Skips one value of any kind, nested at most 64 deep. */
int json_in__skip(struct json_in *s);
/* True when the key k[0..n) is the literal lit. */
bool json_key_is(const char *k, size_t n, const char *lit);

#endif
