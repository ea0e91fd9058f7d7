/* Options of `galatop record` (and of the live view, which takes the same probe options),
 * filled from the command line or from a gala-gopher flamegraph request (--config). */
#ifndef GALATOP_CLI_RECORD_H
#define GALATOP_CLI_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/gt_event.h"
#include "engine/record_opts.h"

/* Fills o with record's defaults. */
void record_opts__init(struct record_opts *o);

/* Parses record's options (cmd "record") or the live view's (cmd "live": -d is the refresh
 * period, --theme/--no-color/--ascii are accepted) into o. 0, or an exit code after reporting. */
int record_parse_args(int argc, char **argv, struct record_opts *o, const char *cmd);

struct profile;
/* Writes p (of event type t) to path in the format its extension names (.svg, else folded).
 * 0, or 1 after reporting. */
int record_write_profile(const char *path, enum gt_event_type t, const struct profile *p);

/* Whether ext (".json") is a format of `record --type sli`. */
bool record_sli_format(const char *ext);
/* Checks the SLI options of o against the rest (cmd: "record" or "live"). 0 or an exit code
 * after reporting. */
int record_sli_check(const struct record_opts *o, const char *cmd);
/* Runs `galatop record --type sli` (cli/record_sli.c). Returns an exit code. */
int record_sli_run(struct record_opts *o);

/* Applies a gala-gopher flamegraph request (JSON file at path) on top of o. Unknown keys and
 * out-of-range values give -EINVAL with a one-line message naming the key in err. */
int record_config_load(const char *path, struct record_opts *o, char *err, size_t errlen);
/* The same on JSON text in memory (tests, fuzzing); name labels messages. */
int record_config_parse(const char *text, size_t len, const char *name, struct record_opts *o,
			char *err, size_t errlen);

#endif
