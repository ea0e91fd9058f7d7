/* libFuzzer target: the perf map (/tmp/perf-PID.map) parser on arbitrary bytes, which any
 * process can write. Every symbol found must lie in the table it came from. */
#include <stdint.h>
#include <stdlib.h>

#include "symbols/jitmap.h"
#include "symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_table *t;

	if (jitmap__parse((const char *)data, size, &t))
		return 0;
	for (size_t i = 0; i < size; i += 7) {
		uint64_t addr = 0;

		for (size_t k = 0; k < 8 && i + k < size; k++)
			addr = addr << 8 | data[i + k];
		const struct sym_entry *e = sym_table__find(t, addr);

		if (e && (addr < e->start || !sym_table__name(t, e)))
			abort();
	}
	sym_table__free(t);
	return 0;
}
