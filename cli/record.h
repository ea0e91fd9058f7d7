/* Options of `galatop record` (and of the live view, which takes the same probe options),
 * filled from the command line or from a gala-gopher flamegraph request (--config). */
#ifndef GALATOP_CLI_RECORD_H
#define GALATOP_CLI_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/gt_event.h"
#include "engine/record_opts.h"
#include "model/stack_type.h"

/* The probe families `galatop record` writes outputs of, each with its own file formats. */
#define RECORD_FAMILY_STACKS 1u	 /* oncpu, offcpu, mem: .folded, .svg, .pb.gz, .speedscope.json */
#define RECORD_FAMILY_THREADS 2u /* .json (Chrome trace), .jsonl */
#define RECORD_FAMILY_SLI 4u	 /* .json, .prom */
#define RECORD_FAMILY_L7 8u	 /* .json, .prom, .jsonl (the request trace) */
#define RECORD_FAMILY_ALL 15u	 /* .gtop: one snapshot holds every family */

/* The families o records (RECORD_FAMILY_* mask). */
unsigned record_families(const struct record_opts *o);
/* The family of o that writes path (by its extension; RECORD_FAMILY_* of those recorded, all
 * of them for .gtop), 0 when none does. */
unsigned record_output_family(const struct record_opts *o, const char *path);

/* Fills o with record's defaults. */
void record_opts__init(struct record_opts *o);

/* Parses record's options (cmd "record") or the live view's (cmd "live": -d is the refresh
 * period, --theme/--no-color/--ascii are accepted) into o. 0, or an exit code after reporting. */
int record_parse_args(int argc, char **argv, struct record_opts *o, const char *cmd);

/* Options a command takes beside record's (`galatop agent`'s): their long options
 * ({0}-terminated; .flag and .val are ignored), and take(ctx, name, arg) called for each one
 * met (arg NULL for a flag), 0 or an exit code after reporting; help replaces record's. */
struct option;
struct record_extra_opts {
	const struct option *options;
	int (*take)(void *ctx, const char *name, const char *arg);
	void *ctx;
	const char *help;
};
#define RECORD_OPT_EXTRA 0x10000 /* getopt values of the extra options start here */

/* record_parse_args with x's options too (x NULL: none). */
int record_parse_args_extra(int argc, char **argv, struct record_opts *o, const char *cmd,
			    const struct record_extra_opts *x);

struct profile;
struct pprof_meta;
/* Writes p (of stack type t) to path in the format its extension names (.svg, .pb.gz,
 * .speedscope.json, else folded); m (NULL: unknown) dates a pprof file. 0, or 1 after
 * reporting. */
int record_write_profile(const char *path, enum stack_type t, const struct profile *p,
			 const struct pprof_meta *m);
/* The extension of path that names its format: ".pb.gz" and ".speedscope.json" whole, else
 * from the last dot (".svg"); NULL when it has none. */
const char *record_output_ext(const char *path);

struct session;
/* Writes each stack type's periodic files (--period: timestamped .svg and .folded into
 * --out-dir, svg_dir, flame_dir; per process with --multi-instance). 0, or 1 after
 * reporting. */
int record_write_period_files(struct session *s, double start_unix);
struct sli;
struct sli_json_periods;
/* Writes the SLI outputs of o but the snapshot: JSON on standard output when there is no
 * output, only the .prom files with prom_only (periodic updates, written under a temporary
 * name and renamed). An exit code. */
int record_sli_write(const struct record_opts *o, struct sli *sli,
		     const struct sli_json_periods *periods, bool prom_only);
/* Writes the .gtop snapshot of `galatop record`: every family the session recorded (stack
 * profiles with their histories when kept, thread timeline, L7 tables, SLI series);
 * start_unix is when the recording began, secs its length. 0, or 1 after reporting. */
int record_gtop_write(struct session *s, const char *path, double start_unix, double secs);

/* The kind of a gala-gopher request: guessed from its content (a --config file), or named by
 * the REST path it came to (PUT /flamegraph, /tprofiling, /l7, /sli). */
enum record_request {
	RECORD_REQ_GUESS,
	RECORD_REQ_FLAMEGRAPH,
	RECORD_REQ_TPROFILING,
	RECORD_REQ_L7,
	RECORD_REQ_SLI,
};
/* record_config_parse of a request of the given kind; with state not NULL, "state":
 * "running" sets *state to 1 and "stopped" to 0 (untouched when absent) instead of refusing a
 * stop. */
int record_config_parse_request(const char *text, size_t len, const char *name,
				enum record_request kind, struct record_opts *o, int *state,
				char *err, size_t errlen);

/* Applies a gala-gopher flamegraph request (JSON file at path) on top of o. Unknown keys and
 * out-of-range values give -EINVAL with a one-line message naming the key in err. */
int record_config_load(const char *path, struct record_opts *o, char *err, size_t errlen);
/* The same on JSON text in memory (tests, fuzzing); name labels messages. */
int record_config_parse(const char *text, size_t len, const char *name, struct record_opts *o,
			char *err, size_t errlen);

#endif
