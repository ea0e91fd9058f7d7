/* libFuzzer target: the trigger condition parser (--trigger, from the command line) and the
 * /proc/stat, /proc/PID/stat and /proc/loadavg parsers on arbitrary bytes. A parsed expression
 * has 1..TRIGGER_MAX_CONDS conditions and evaluates without reading past them; an error is one
 * non-empty line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/trigger.h"
#include "util/procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[256] = "", why[64];
	struct trigger_expr e;
	struct procstat_cpu all, cpus[4];
	double cpu[4] = { 1, 50, 99, 100 }, load;
	struct trigger_metrics m = { 50, cpu, 4, 1 };
	uint64_t ticks;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (trigger_parse(text, &e, err, sizeof(err)) == 0) {
		if (e.n < 1 || e.n > TRIGGER_MAX_CONDS)
			abort();
		trigger_eval(&e, &m, why, sizeof(why));
	} else if (!err[0] || strchr(err, '\n')) {
		abort();
	}
	procstat_parse(text, &all, cpus, 4);
	procstat_parse_pid(text, &ticks);
	procstat_parse_load(text, &load);
	free(text);
	return 0;
}
