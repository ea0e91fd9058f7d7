/* libFuzzer target: the kafka parser (model/l7/kafka.c) on scripted chunks (see l7_driver.h). */
#include "l7_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return l7_fuzz_run(L7_KAFKA, data, size);
}
