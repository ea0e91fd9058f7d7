/* libFuzzer target for the perf.data reader: file and pipe mode, every option that changes
 * what is parsed. Kernel names come from an empty kallsyms (no /proc/kallsyms per input);
 * user names from whatever files the input's mappings name. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../export/perfdata.h"
#include "../symbols/symbols.h"

static int count(void *ctx, const char *stack, size_t len, uint64_t n)
{
	(void)stack;
	(void)len;
	*(uint64_t *)ctx += n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sym_cache *sc;
	struct perfscript_opts o = { 0 };
	struct perfdata_stats st;
	uint64_t total = 0;
	char err[512];
	int ret;

	if (!sc) {
		sc = sym_cache__new();
		if (!sc || sym_cache__set_kallsyms_path(sc, "/dev/null"))
			abort();
		sym_cache__set_lines(sc, 0);
		sym_cache__set_inlines(sc, 0);
	}
	o.include_tid = size & 1;
	o.annotate_kernel = size & 2;
	o.include_addrs = size & 4;
	ret = perfdata_collapse(data, size, "fuzz", sc, &o, count, &total, &st, err, sizeof(err));
	if (ret && ret != -EINVAL && ret != -ENOMEM)
		abort();
	if (ret == -EINVAL && !err[0])
		abort(); /* every refusal says why */
	return 0;
}
