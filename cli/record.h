/* Options of `galatop record` (and of the live view, which takes the same probe options),
 * filled from the command line or from a gala-gopher flamegraph request (--config). */
#ifndef GALATOP_CLI_RECORD_H
#define GALATOP_CLI_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECORD_MAX_OUTPUTS 16
#define RECORD_MAX_TARGETS 256
#define RECORD_STACK_SIZE 8192 /* default --stack-size */

/* How user stacks are walked (--unwind). */
enum record_unwind {
	RECORD_UNWIND_AUTO,  /* default: DWARF CFI (see docs/unwinding.md for why) */
	RECORD_UNWIND_FP,    /* frame pointers, in the kernel */
	RECORD_UNWIND_DWARF, /* registers + stack copy, unwound in user space with CFI */
};

struct record_opts {
	unsigned types;		 /* PROBE_* mask from bpf/probes.h; 0 = oncpu */
	unsigned freq;		 /* -F: samples per second per CPU (default 99) */
	double duration;	 /* -d: seconds; 0 = until SIGINT or the command exits */
	int cpu;		 /* --cpu: -1 = all */
	bool kernel_only;	 /* --kernel: kernel stacks only */
	bool user_only;		 /* --user: user stacks only */
	bool no_idle;		 /* --no-idle */
	bool threads;		 /* --threads: a thread frame under each process */
	bool multi_instance;	 /* --multi-instance: one output per process in periodic mode */
	bool annotate;		 /* --annotate: _[k] on kernel frames, _[j] on JIT frames */
	bool mem_bytes;		 /* --bytes: mem values in bytes (faults x page size) */
	uint64_t min_block_us;	 /* --min-block (default 1000) */
	uint64_t max_block_us;	 /* --max-block (0 = unlimited) */
	unsigned state_filter;	 /* --state: PROBE_STATE_* mask, 0 = any */
	int unwind;		 /* --unwind: enum record_unwind */
	unsigned stack_size;	 /* --stack-size: user stack bytes copied per sample (0 = 8192) */
	unsigned unwind_cache;	 /* --unwind-cache: processes whose unwinding state is kept (0 = 64) */
	int pids[RECORD_MAX_TARGETS];
	size_t npids;
	int tids[RECORD_MAX_TARGETS];
	size_t ntids;
	char comm[16];		 /* --comm, "" = none */
	char cmdline[256];	 /* --cmdline REGEX, "" = none */
	char containers[RECORD_MAX_TARGETS][128]; /* --container ID/NAME */
	size_t ncontainers;
	char pods[RECORD_MAX_TARGETS][128];	   /* --pod ID/NAME */
	size_t npods;
	const char *outputs[RECORD_MAX_OUTPUTS]; /* -o FILE, format from the extension */
	size_t noutputs;
	double period;		 /* --period S: write every S seconds (periodic mode) */
	char out_dir[4096];	 /* --out-dir DIR (periodic mode, default ".") */
	char svg_dir[4096];	 /* from --config svg_dir: SVGs go here (else out_dir) */
	char flame_dir[4096];	 /* from --config flame_dir: folded files go here (else out_dir) */
	bool periodic_svg;	 /* periodic mode writes SVGs (default true) */
	bool periodic_folded;	 /* periodic mode writes folded files (default true) */
	char **command;		 /* -- CMD ARGS (NULL-terminated), or NULL */
	/* The live view only: */
	bool source_lines;	 /* resolve file:line for the detail line (costs DWARF lookups) */
	const char *theme;	 /* --theme NAME */
	bool no_color;		 /* --no-color */
	bool ascii;		 /* --ascii */
};

/* Fills o with record's defaults. */
void record_opts_init(struct record_opts *o);

/* Parses record's options (cmd "record") or the live view's (cmd "live": -d is the refresh
 * period, --theme/--no-color/--ascii are accepted) into o. 0, or an exit code after reporting. */
int record_parse_args(int argc, char **argv, struct record_opts *o, const char *cmd);

/* Applies a gala-gopher flamegraph request (JSON file at path) on top of o. Unknown keys and
 * out-of-range values give -EINVAL with a one-line message naming the key in err. */
int record_config_load(const char *path, struct record_opts *o, char *err, size_t errlen);
/* The same on JSON text in memory (tests, fuzzing); name labels messages. */
int record_config_parse(const char *text, size_t len, const char *name, struct record_opts *o,
			char *err, size_t errlen);

#endif
