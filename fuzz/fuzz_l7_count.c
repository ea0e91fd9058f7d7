/* libFuzzer target for the request shape the kernel and galatop agree on (bpf/l7_count.h's
 * l7c_request, compiled for the host as galatop runs it on every request it may name): whatever
 * the bytes, it reads only inside its buffer, and what it counts is one whole request: an HTTP
 * head with a single end at its end, or a RESP array whose lengths add up to the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/l7_count.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 h;

	if (l7c_request_copy(data, size, L7_KPROTO_HTTP, &h)) {
		const char *end = memmem(data, size, "\r\n\r\n", 4);

		if (!end || (size_t)(end - (const char *)data) + 4 != size)
			abort();
	}
	if (l7c_request_copy(data, size, L7_KPROTO_REDIS, &h) && data[0] != '*')
		abort();
	return 0;
}
