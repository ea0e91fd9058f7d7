/* libFuzzer target: the HTTP/2 and gRPC parser (model/l7/http2.c) on scripted chunks (see
 * l7_driver.h). */
#include "l7_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return l7_fuzz_run(L7_HTTP2, data, size);
}
