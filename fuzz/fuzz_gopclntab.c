/* libFuzzer target: Go's .gopclntab reader on arbitrary bytes (a stripped Go binary is any
 * file a profiled process maps). The input is the table and, at the same address, the only
 * segment of the image (inline trees and module data are read there). Every name returned
 * must lie inside the input and every function must end after it starts. */
#include <stdint.h>
#include <stdlib.h>

#include "symbols/gopclntab.h"

#define VADDR 0x4a0000ull
#define TEXT 0x401000ull

static void inside(const uint8_t *data, size_t size, struct gopcln_name n)
{
	if ((const uint8_t *)n.s < data || n.len > size ||
	    (const uint8_t *)n.s + n.len > data + size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopcln_seg seg = { VADDR, data, size };
	struct gopcln_name name, inl[8];
	struct gopcln *g;
	uint64_t entry, end;
	int32_t delta;
	bool top;

	if (gopcln__new(data, size, VADDR, TEXT, &seg, 1, &g))
		return 0;
	for (size_t i = 0; i < gopcln__count(g) && i < 4096; i++) {
		if (gopcln__func(g, i, &entry, &end, &name))
			continue;
		inside(data, size, name);
		for (uint64_t pc = entry; pc < end && pc - entry < 512; pc += 7) {
			gopcln__frame(g, pc, &delta, &top);
			size_t n = gopcln__inlines(g, pc, inl, 8);

			if (n > 8)
				abort();
			for (size_t k = 0; k < n; k++)
				inside(data, size, inl[k]);
		}
	}
	gopcln__free(g);
	return 0;
}
