#include "text.h"

#include <time.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "../model/sanitize.h"
#include "util/duration.h"

static const struct tui_glyphs utf8_glyphs = {
	"\xe2\x94\x80", "\xe2\x94\x82", "\xe2\x94\x8c", "\xe2\x94\x90", "\xe2\x94\x94",
	"\xe2\x94\x98", "\xe2\x96\xbc", "\xef\xbf\xbd",
};
static const struct tui_glyphs ascii_glyphs = { "-", "|", "+", "+", "+", "+", "v", "?" };
static bool utf8_mode;

void tui_text_init(bool ascii)
{
	utf8_mode = !ascii;
}

bool tui_text_utf8(void)
{
	return utf8_mode;
}

const struct tui_glyphs *tui_glyphs(void)
{
	return utf8_mode ? &utf8_glyphs : &ascii_glyphs;
}

static unsigned decode(const unsigned char *s, size_t n)
{
	switch (n) {
	case 1:
		return s[0];
	case 2:
		return (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu);
	case 3:
		return (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
	default:
		return (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 |
		       (s[3] & 0x3fu);
	}
}

/* Next display unit of s: sets *bytes (input consumed), *out and *outlen (what to print) and
 * returns its width. */
static int next_unit(const unsigned char *s, size_t len, size_t *bytes, const char **out,
		     size_t *outlen)
{
	size_t n;
	int wd;

	if (s[0] >= 0x20 && s[0] < 0x7f) {
		*bytes = 1;
		*out = (const char *)s;
		*outlen = 1;
		return 1;
	}
	n = utf8_seq_len(s, len);
	*bytes = n ? n : 1;
	if (n && utf8_mode) {
		wd = wcwidth((wchar_t)decode(s, n));
		if (wd >= 0) {
			*out = (const char *)s;
			*outlen = n;
			return wd;
		}
	}
	*out = tui_glyphs()->bad;
	*outlen = strlen(*out);
	return 1;
}

int tui_width(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, b, ol;
	const char *o;
	int wd = 0;

	while (i < len) {
		wd += next_unit(p + i, len - i, &b, &o, &ol);
		i += b;
	}
	return wd;
}

int tui_put(WINDOW *w, const char *s, size_t len, int cols)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, b, ol, run = 0;
	const char *o;
	int used = 0;

	/* Printable ASCII runs are written in one call: the common case, and the fast one. */
	while (i < len && used < cols) {
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			run++;
			i++;
			used++;
			continue;
		}
		if (run)
			waddnstr(w, (const char *)p + i - run, (int)run);
		run = 0;
		int wd = next_unit(p + i, len - i, &b, &o, &ol);

		if (used + wd > cols)
			break;
		if (wd > 0)
			waddnstr(w, o, (int)ol);
		used += wd;
		i += b;
	}
	if (run)
		waddnstr(w, (const char *)p + i - run, (int)run);
	return used;
}

int tui_put_fit(WINDOW *w, const char *s, size_t len, int cols)
{
	int used;

	if (cols <= 0)
		return 0;
	if (tui_width(s, len) <= cols)
		return tui_put(w, s, len, cols);
	if (cols < 3)
		return tui_put(w, s, len, cols);
	used = tui_put(w, s, len, cols - 2);
	waddstr(w, "..");
	return used + 2;
}

void tui_pad(WINDOW *w, int n)
{
	static const char spaces[] = "                                                                ";

	while (n > 0) {
		int k = n < (int)sizeof(spaces) - 1 ? n : (int)sizeof(spaces) - 1;

		waddnstr(w, spaces, k);
		n -= k;
	}
}

int tui_printf(WINDOW *w, int cols, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return tui_put(w, buf, (size_t)n, cols);
}

void tui_fmt_value(enum value_kind k, double v, char *buf, size_t n)
{
	static const char *const bunits[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	switch (k) {
	case VALUE_NANOSECONDS:
	case VALUE_MICROSECONDS:
		duration_format(k == VALUE_MICROSECONDS ? v * 1e3 : v, buf, n);
		return;
	case VALUE_BYTES:
		while (v >= 1024 && u < 4) {
			v /= 1024;
			u++;
		}
		snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, bunits[u]);
		return;
	default:
		snprintf(buf, n, "%.0f", v);
	}
}

void tui_fmt_clock(double unix_s, char *buf, size_t n)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	if (!(unix_s > 0) || !localtime_r(&t, &tm) || !strftime(buf, n, "%H:%M:%S", &tm))
		snprintf(buf, n, "?");
}
