#include "sanitize.h"

#include <stdint.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

size_t utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned c = s[0];

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0; /* C0 controls, DEL, continuation bytes, overlong leads, > U+10FFFF */
	if (c < 0xe0) {
		/* U+0080..U+009F are the C1 controls. */
		if (len < 2 || (s[1] & 0xc0) != 0x80 || (c == 0xc2 && s[1] < 0xa0))
			return 0;
		return 2;
	}
	if (c < 0xf0) {
		if (len < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0; /* overlong, or a UTF-16 surrogate */
		return 3;
	}
	if (len < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
		return 0;
	if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return 4;
}

bool sanitize_is_clean(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n;

		/* Eight printable ASCII bytes at a time: none >= 0x80, none < 0x20, none 0x7f. */
		while (len - i >= 8) {
			uint64_t w, ones = 0x0101010101010101ULL, high = ones << 7, x;

			memcpy(&w, p + i, 8);
			x = w ^ (ones * 0x7f);
			if ((w | ((w - ones * 0x20) & ~w) | ((x - ones) & ~x)) & high)
				break;
			i += 8;
		}
		if (i == len)
			break;
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			i++;
			continue;
		}
		n = utf8_seq_len(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

size_t sanitize_text(const char *s, size_t len, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < len) {
		size_t n;
		uint64_t w;

		/* Printable ASCII, the common case: eight bytes at a time while no byte of the
		 * word is below 0x20 or above 0x7e (a carry can only flag more bytes, which then
		 * go one at a time), then a byte at a time without the UTF-8 checks. */
		if (len - i >= 8) {
			memcpy(&w, p + i, 8);
			if (!(((w - 0x2020202020202020ull) | (w + 0x0101010101010101ull) | w) &
			      0x8080808080808080ull)) {
				memcpy(out + o, &w, 8);
				o += 8;
				i += 8;
				continue;
			}
		}
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			out[o++] = (char)p[i++];
			continue;
		}
		n = utf8_seq_len(p + i, len - i);

		if (n) {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, replacement, 3);
			o += 3;
			i++;
		}
	}
	return o;
}

void sanitize_cstr(const char *s, char *out, size_t cap)
{
	out[sanitize_text(s, strnlen(s, (cap - 1) / 3), out)] = 0;
}
