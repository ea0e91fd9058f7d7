/* libFuzzer target for the SLI parsers of untrusted bytes: the "sli" section of snapshots
 * (export/sli) and the kernel's PSI and cpu.stat text (model/sli). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/sli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[256];
	struct sli *s = NULL;
	uint64_t a, b;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (!sli_snapshot_parse(text, size, &s, err, sizeof(err))) {
		char *again = sli_snapshot_text(s);

		/* What was read writes back; a valid section stays valid. */
		if (again) {
			struct sli *s2 = NULL;

			if (sli_snapshot_parse(again, strlen(again), &s2, err, sizeof(err)))
				abort();
			sli__free(s2);
		}
		free(again);
		sli__free(s);
	}
	sli_parse_psi(text, &a, &b);
	sli_parse_cpu_stat(text, &a, &b);
	free(text);
	return 0;
}
