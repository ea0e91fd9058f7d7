/* libFuzzer target: the dns parser (model/l7/dns.c) on scripted chunks (see l7_driver.h). */
#include "l7_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return l7_fuzz_run(L7_DNS, data, size);
}
