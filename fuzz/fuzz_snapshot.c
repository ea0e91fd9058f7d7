/* libFuzzer target for snapshot_read_mem. Input that is not gzip is gzipped first, so the
 * fuzzer mutates the JSON itself and not only bytes behind a CRC; gzip input is read as is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/snapshot.h"

static unsigned char *gzip(const uint8_t *data, size_t size, size_t *len)
{
	z_stream z = {0};
	size_t cap = size + size / 100 + 64;
	unsigned char *out = malloc(cap);

	if (!out || deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)size;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	*len = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	unsigned char *gz = NULL;
	struct snapshot s;
	char err[256];
	size_t len = size;

	if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
		gz = gzip(data, size, &len);
		if (!gz)
			goto out;
	}
	snapshot_sniff(gz ? gz : data, len);
	if (snapshot_read_mem(gz ? gz : data, len, "fuzz", ft, &s, err, sizeof(err)) == 0) {
		/* What was accepted is a well-formed tree. */
		for (size_t i = 0; i < s.nprofiles; i++) {
			const struct profile *p = s.profiles[i].p;

			for (uint32_t id = 1; id < profile__node_count(p); id++)
				if (profile__node(p, id)->parent >= id)
					abort();
			if (!(profile__total(p) >= 0))
				abort();
		}
	} else if (!memchr(err, '\0', sizeof(err)) || strncmp(err, "fuzz: ", 6)) {
		abort(); /* every failure explains itself */
	}
	snapshot_release(&s);
out:
	free(gz);
	frames__free(ft);
	strtab__free(st);
	return 0;
}
