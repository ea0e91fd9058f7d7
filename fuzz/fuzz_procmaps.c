/* libFuzzer target: the /proc/PID/maps parser on arbitrary bytes (paths in maps are chosen by
 * the process). What it returns is sorted, executable, non-empty and findable. */
#include <stdint.h>
#include <stdlib.h>

#include "symbols/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_map *maps;
	size_t n;

	if (proc_maps__parse((const char *)data, size, &maps, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (maps[i].end <= maps[i].start || !maps[i].path)
			abort();
		if (i && maps[i].start < maps[i - 1].start)
			abort();
		if (!proc_maps__find(maps, n, maps[i].start))
			abort();
	}
	proc_maps__free(maps, n);
	return 0;
}
