/* The options of a capture: what `galatop record` and the live view ask of the engine (probe
 * families, targets, their settings) and, beside them, what the caller does with the result
 * (outputs, periods, the view's look). Filled by cli/ from the command line or from a
 * gala-gopher flamegraph request (--config). */
#ifndef GALATOP_ENGINE_RECORD_OPTS_H
#define GALATOP_ENGINE_RECORD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECORD_MAX_OUTPUTS 16
#define RECORD_MAX_TARGETS 256
#define RECORD_STACK_SIZE 8192 /* default --stack-size */
#define RECORD_EVENT_RATE 500	/* default --event-rate */
#define RECORD_MAX_STACKS 200000 /* default --max-stacks */
#define RECORD_LEAK_MIN_AGE 1.0	 /* default --leak-min-age, seconds */
#define TRIGGER_BEFORE_S 10	 /* default --trigger-before */
#define TRIGGER_AFTER_S 5	 /* default --trigger-after */
#define TRIGGER_COOLDOWN_S 30	 /* default --trigger-cooldown */
/* --type l7: the L7 capture (engine/l7_capture.c), a bit beside the PROBE_* mask of bpf/probes.h. */
#define RECORD_TYPE_L7 0x1000u

/* SLI families a gala-gopher sli request can ask for (cmd.probe "cpu", "mem", "io"). */
#define RECORD_SLI_CPU 1u
#define RECORD_SLI_MEM 2u
#define RECORD_SLI_IO 4u
#define RECORD_LONGSYS_OFF UINT64_MAX /* --longsys off: no system call hooks */
#define RECORD_LONGSYS_DEFAULT 10000000ull /* --longsys on: 10 ms */
#define RECORD_STATS_HELD -1.0 /* --probe-stats on */
#define RECORD_STATS_OFF -2.0  /* --probe-stats off */

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
	char cpu_list[256];	 /* --cpu LIST ("0,2-3"), checked; "" = every CPU */
	bool kernel_only;	 /* --kernel: kernel stacks only */
	bool user_only;		 /* --user: user stacks only */
	bool no_idle;		 /* --no-idle */
	bool fixed_period;	 /* --fixed-period: oncpu every 1/freq exactly (not randomized) */
	bool threads;		 /* --threads: a thread frame under each process (--group thread) */
	int group;		 /* --group: enum group_by; -1 = default (command; process with
				  * --config, as gala-gopher's stackprobe) */
	bool multi_instance;	 /* --multi-instance: one output per process in periodic mode */
	bool annotate;		 /* --annotate: _[k] on kernel frames, _[j] on JIT frames */
	bool mem_bytes;		 /* --bytes: mem values in bytes (faults x page size) */
	uint64_t min_block_us;	 /* --min-block (default 1000) */
	uint64_t max_block_us;	 /* --max-block (0 = unlimited) */
	unsigned state_filter;	 /* --state: PROBE_STATE_* mask, 0 = any */
	int unwind;		 /* --unwind: enum record_unwind */
	unsigned stack_size;	 /* --stack-size: user stack bytes copied per sample (0 = 8192) */
	unsigned unwind_cache;	 /* --unwind-cache: processes whose unwinding state is kept (0 = 64) */
	unsigned event_rate;	 /* --event-rate: offcpu/mem records per s per CPU before the kernel
				  * samples 1 in n (default RECORD_EVENT_RATE; 0 = every event) */
	bool include_self;	 /* --include-self: galatop's own threads are sampled too */
	uint64_t leak_sample;	 /* --leak-sample: mean bytes between sampled allocations (0 =
				  * 512 KiB, 1 = every allocation) */
	bool leak_uretprobe;	 /* --leak-uretprobe: entry and return uprobes, not uprobe.session */
	bool leak_uprobes;	 /* --leak-uprobes: -- CMD's allocator gets uprobes, no in-process
				  * sampler preloaded */
	double leak_min_age;	 /* --leak-min-age: seconds a block must live to be shown
				  * (default RECORD_LEAK_MIN_AGE) */
	size_t max_stacks;	 /* --max-stacks: distinct stacks kept per probe (0 = no limit) */
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
	double history;		 /* --history S: seconds of per-second slices kept (live and .gtop;
				  * 0 = the default: 600 live, all of a recording) */
	char trigger[256];	 /* --trigger EXPR (model/trigger.h), checked; "" = none */
	double trigger_before;	 /* --trigger-before S: seconds captured before the moment */
	double trigger_after;	 /* --trigger-after S: and after it */
	double trigger_cooldown; /* --trigger-cooldown S: quiet time after each capture */
	double period;		 /* --period S: write every S seconds (periodic mode) */
	char out_dir[4096];	 /* --out-dir DIR (periodic mode, default ".") */
	char svg_dir[4096];	 /* from --config svg_dir: SVGs go here (else out_dir) */
	char flame_dir[4096];	 /* from --config flame_dir: folded files go here (else out_dir) */
	char pyroscope_server[256]; /* from --config pyroscope_server: the agent posts there */
	bool periodic_svg;	 /* periodic mode writes SVGs (default true) */
	bool periodic_folded;	 /* periodic mode writes folded files (default true) */
	char **command;		 /* -- CMD ARGS (NULL-terminated), or NULL */
	/* The thread timeline (--type threads, see docs/threads.md): */
	uint64_t min_dur_us;	 /* --min-dur: shorter intervals are only counted (0 = 10) */
	uint64_t min_aggr_ms;	 /* --min-aggr-dur: .jsonl aggregation window (0 = 100) */
	size_t timeline_mem;	 /* --timeline-mem: bytes of intervals kept (0 = 64 MiB) */
	unsigned tl_classes;	 /* TL_PROBE_* from --config's tprofiling probes; 0 = all */
	bool all_syscalls;	 /* --all-syscalls: every traced call from sys_enter to sys_exit,
				  * not only the blocking ones (docs/threads.md) */
	/* SLI (--type sli): */
	bool sli;		 /* record (or, live, attach at start) the SLI probes */
	unsigned sli_families;	 /* from --config cmd.probe: RECORD_SLI_* mask, 0 = all */
	uint64_t longsys_ns;	 /* --longsys MS; 0 (the default) or RECORD_LONGSYS_OFF: no cpu_longsys */
	char cgroup[4096];	 /* --cgroup PATH, "" = none */
	/* --probe-stats: seconds between sampled windows of the BPF statistics; 0 = the default
	 * (COST_PERIOD_S), RECORD_STATS_HELD (on), RECORD_STATS_OFF (off). */
	double probe_stats;
	/* L7 (--type l7): */
	unsigned l7_protocols;	 /* --protocols: bit 1 << enum l7_proto each, 0 = all */
	bool no_tls;		 /* --no-tls: no OpenSSL uprobes */
	bool no_java_agent;	 /* --no-java-agent: JVMs are not attached */
	bool no_java_native;	 /* --no-java-native, native_stack 0: libjvm frames between Java
				  * frames are dropped */
	unsigned l7_capture;	 /* --l7-capture: bytes copied per message, 0 = 4096 */
	bool no_l7_count;	 /* --no-l7-count: no request counted in the kernel */
	/* The live view only: */
	bool cpu_switch;	 /* the CPU set changes at run time (oncpu samples every CPU) */
	bool source_lines;	 /* resolve file:line for the detail line (costs DWARF lookups) */
	unsigned lazy_types;	 /* PROBE_* loaded at start, attached by session__attach_probe */
	const char *theme;	 /* --theme NAME */
	bool no_color;		 /* --no-color */
	bool ascii;		 /* --ascii */
};

#endif
