/* Shared body of the L7 parser fuzz targets: the input is a script of chunks. Byte 0 picks the
 * role and transport; then each chunk is a header byte (bit 0: direction, bit 1: capture cut
 * to half, bit 2: close the connection after it), a length byte (length - 1) and the bytes.
 * Every record must carry terminated, clean strings. */
#include <stdint.h>
#include <string.h>

#include "model/l7/proto.h"
#include "model/sanitize.h"

static void l7_fuzz_record(void *ctx, const struct l7_record *r)
{
	size_t *n = ctx;

	if (!memchr(r->endpoint, 0, sizeof(r->endpoint)) || !memchr(r->detail, 0, sizeof(r->detail)) ||
	    !memchr(r->errmsg, 0, sizeof(r->errmsg)) ||
	    !sanitize_is_clean(r->endpoint, strlen(r->endpoint)) ||
	    !sanitize_is_clean(r->detail, strlen(r->detail)) ||
	    !sanitize_is_clean(r->errmsg, strlen(r->errmsg)))
		__builtin_trap();
	(*n)++;
}

static int l7_fuzz_run(enum l7_proto proto, const uint8_t *data, size_t size)
{
	struct l7_parser *p;
	struct l7_topics *topics;
	size_t i = 1, n = 0;
	uint64_t ts = 0;

	if (!size)
		return 0;
	topics = l7_topics__new(); /* Kafka's topic ids, learnt across connections */
	p = l7_parser__new(proto, (enum l7_role)(data[0] % 3), data[0] & 4);
	if (!p || !topics) {
		l7_parser__free(p);
		l7_topics__free(topics);
		return 0;
	}
	l7_parser__set_topics(p, topics);
	while (i < size) {
		uint8_t h = data[i++];
		size_t len = i < size ? (size_t)data[i++] + 1 : 0, cap;

		if (len > size - i)
			len = size - i;
		cap = h & 2 ? len / 2 : len;
		l7_parser__feed(p, h & 1 ? L7_DIR_RECV : L7_DIR_SEND, data + i, cap, len + (h & 2 ? 100 : 0),
				++ts, l7_fuzz_record, &n);
		i += len;
		if (h & 4) {
			l7_parser__close(p, l7_fuzz_record, &n);
			l7_parser__free(p);
			p = l7_parser__new(proto, (enum l7_role)(data[0] % 3), data[0] & 4);
			if (!p)
				break;
			l7_parser__set_topics(p, topics);
		}
	}
	if (p)
		l7_parser__close(p, l7_fuzz_record, &n);
	l7_parser__free(p);
	l7_topics__free(topics);
	return 0;
}
