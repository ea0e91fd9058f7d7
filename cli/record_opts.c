/* galatop record's options: the help text and the command line parser shared with the live
 * view (record_parse_args); gala-gopher's config file is in record_config.c. */
#include "record.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "engine/history.h"
#include "record_threads.h"
#include "record_trigger.h"
#include "engine/session.h"
#include "engine/stack_collector.h"
#include "bpf/drain.h"
#include "bpf/probes.h"
#include "export/folded.h"
#include "bpf/l7_event.h"
#include "export/svg.h"
#include "l7.h"
#include "util/clock.h"
#include "util/cpulist.h"
#include "model/split.h"

const char cmd_record_help[] =
	"Usage: galatop record [OPTIONS] [-o FILE]... [-- CMD [ARGS]]\n"
	"\n"
	"Samples stacks with eBPF (needs root) and writes flame graphs when it stops: after\n"
	"-d SECONDS, on Ctrl-C (SIGINT) or SIGTERM, when CMD exits, or when every -p target\n"
	"has exited.\n"
	"\n"
	"Probes:\n"
	"  --type T[,T]      oncpu (default), offcpu (time blocked, microseconds), mem (user\n"
	"                    page faults), leak (bytes allocated and not freed, by stack:\n"
	"                    docs/leak.md), growth (anonymous memory mapped and not\n"
	"                    unmapped, by stack: brk/mmap/munmap), threads (thread\n"
	"                    timeline: docs/threads.md);\n"
	"                    l7 (request tables, see below)\n"
	"  --leak-sample B   leak: mean bytes allocated between two sampled allocations\n"
	"                    (default 524288; 1 = every allocation)\n"
	"  --leak-min-age S  leak: only blocks older than S seconds (default 1)\n"
	"  --leak-uretprobe  leak: a uretprobe on every allocation call, even where the kernel\n"
	"                    has uprobe.session (which skips the return of unsampled calls)\n"
	"  --leak-uprobes    leak: uprobes on the allocator rather than the in-process sampler\n"
	"                    (libgalatop-leak.so) galatop preloads into -- CMD and injects\n"
	"                    into running processes (-p, --cmdline: ptrace, GOT hooks)\n"
	"  --min-dur US      threads: shorter calls are only counted (default 10)\n"
	"  --all-syscalls    threads: every file, net, lock and sleep system call from entry to\n"
	"                    exit, also those that do not block (by default only the calls\n"
	"                    that block are seen, at no cost to the others; this one puts\n"
	"                    every system call of the machine on the kernel's slow path)\n"
	"  --min-aggr-dur MS threads: .jsonl aggregation window (default 100)\n"
	"  --timeline-mem MB threads: memory for intervals, oldest dropped (default 64)\n"
	"  -F, --freq HZ     oncpu samples per second per CPU (default 99, 1..10000); max =\n"
	"                    the kernel's perf_event_max_sample_rate (at most 10000); each\n"
	"                    CPU's rate is redrawn within +-25% of HZ at random moments\n"
	"                    (every 64 periods on average), so that loops cannot phase-lock\n"
	"                    with the samples and skew the split (docs/probes.md)\n"
	"  --fixed-period    sample every 1/HZ exactly, as perf does\n"
	"  -a, --all-cpus    every CPU (the default; accepted as in perf)\n"
	"  -g                stacks (always recorded; accepted as in perf)\n"
	"  --call-graph M    perf's spelling of --unwind: fp or dwarf\n"
	"  --cpu LIST        only events on these CPUs, e.g. 1 or 0,2-3 (filtered in the kernel)\n"
	"  --kernel          kernel stacks only          --user    user stacks only\n"
	"  --no-idle         drop samples of the idle task\n"
	"  --min-block US    offcpu: shortest block recorded, microseconds (default 1000)\n"
	"  --max-block US    offcpu: longest block recorded (default unlimited)\n"
	"  --state S         offcpu: only blocks in state S: interruptible (S) or\n"
	"                    uninterruptible (D)\n"
	"  --bytes           mem: count bytes (faults x page size) instead of faults\n"
	"  --unwind M        user stacks: fp (frame pointers, in the kernel), dwarf (copy\n"
	"                    registers and stack, unwind with the binaries' CFI) or auto\n"
	"                    (default: dwarf; complete stacks without frame pointers)\n"
	"  --stack-size B    dwarf: user stack bytes copied per sample (default 8192, at\n"
	"                    most 16384); deeper stacks end in a [truncated] frame\n"
	"  --unwind-cache N  dwarf: processes whose unwinding state is kept (default 64)\n"
	"  --event-rate N    offcpu, mem: most records per second per CPU before the kernel\n"
	"                    samples them, 1 in n with weight n (default 500; 0 = all)\n"
	"  --include-self    sample galatop's own threads too (default: never)\n"
	"  --probe-stats S|on|off  the kernel's BPF statistics (galatop's probes' own cost) on\n"
	"                    1 s in every S s (default 10: each program run pays two clock\n"
	"                    reads while they are on), held on, or off\n"
	"Targets (several combine as a union; none = the whole system):\n"
	"  -p, --pid PID,..  processes            -t, --tid TID,..  threads\n"
	"  --comm NAME       processes whose command name is NAME (first 15 bytes)\n"
	"  --cmdline REGEX   processes whose command line matches REGEX (also ones started\n"
	"                    later)\n"
	"  --container ID    a container, by id prefix or runtime name (repeatable)\n"
	"  --pod ID          a Kubernetes pod, by uid or name (repeatable)\n"
	"  -- CMD ARGS       run CMD and profile it and its children until it exits\n"
	"Output:\n"
	"  -o, --output FILE write FILE when done; the format comes from the extension:\n"
	"                    .folded (folded stacks), .svg (flame graph), .pb.gz (pprof:\n"
	"                    go tool pprof, Pyroscope) or .speedscope.json; threads:\n"
	"                    .json (Chrome trace for Perfetto), .jsonl (gala-gopher event\n"
	"                    lines) or .gtop (snapshot: the profiles and their per-second\n"
	"                    history, docs/snapshot.md); repeatable. Default: folded stacks\n"
	"                    (threads: event lines) on standard output; lock hints go to\n"
	"                    standard error\n"
	"  -d, --duration S  stop after S seconds\n"
	"  --group G         roots of the stacks: command (default: one root per program\n"
	"                    name, every process of it merged, as perf + flamegraph.pl),\n"
	"                    process ([PID]comm, gala-gopher's), thread ([PID]comm then\n"
	"                    [TID]name) or none (no identity frames)\n"
	"  --threads         same as --group thread\n"
	"  --annotate        suffix kernel frames with _[k] and JIT frames with _[j]\n"
	"  --history S       keep the last S seconds of per-second slices in .gtop files\n"
	"                    (default: all; coarser past the memory cap, docs/history.md)\n"
	"  --trigger EXPR    trigger mode: keep a rolling window and, each time EXPR holds\n"
	"                    (e.g. 'cpu>80', 'cpu1>90', 'load>4', joined by && and ||; cpu is\n"
	"                    the host's busy %, or with -p/CMD the targets' CPU %), write a\n"
	"                    snapshot of the seconds around it: -o's .gtop/.svg/.folded with\n"
	"                    the time in their names, else --out-dir/galatop-trigger-TIME.gtop\n"
	"  --trigger-before S, --trigger-after S, --trigger-cooldown S\n"
	"                    seconds captured before (10) and after (5) the moment; quiet\n"
	"                    seconds after each capture (30). docs/trigger.md\n"
	"  --period S        periodic mode: every S seconds write timestamped .svg and\n"
	"                    .folded files into --out-dir, then start afresh\n"
	"  --out-dir DIR     where periodic files go (default .)\n"
	"  --multi-instance  periodic mode: one file per process\n"
	"  --max-stacks N    keep at most N distinct stacks per probe (default 200000); the\n"
	"                    rarest go into an [other] frame; 0 = no limit\n"
	"  --config FILE     apply a gala-gopher flamegraph, sli or l7 request (JSON); see\n"
	"                    docs/config.md\n"
	"SLIs (--type sli, see docs/sli.md):\n"
	"  --type sli        per group (host, containers, pods, services, cgroups) the time\n"
	"                    lost to the scheduler, memory and block I/O; -o FILE.json,\n"
	"                    FILE.prom or FILE.gtop; --period S closes an interval every S s\n"
	"  --longsys MS|on|off  system calls of at least MS ms (on: 10) count as cpu_longsys; off by\n"
	"                    default (its hooks slow every system call down)\n"
	"  --cgroup PATH     a cgroup target and row: v2 path, or v1 controller path\n"
	"  --no-java-agent   do not load the JVMTI agent into Java targets (JIT frames unnamed)\n"
	"  --no-java-native  hide the JVM's own frames (libjvm) between Java frames;\n"
	"                    --java-native shows them (default; config key native_stack)\n"
	"L7 (--type l7: request tables; docs/l7.md, protocols in docs/l7-protocols.md):\n"
	"  --protocols P,..  only these protocols (default all; a wrong name lists them)\n"
	"  --no-tls          no OpenSSL uprobes (HTTPS and other TLS traffic is not seen)\n"
	"  --l7-capture B    bytes copied per message (default 4096, 64..16384)\n"
	"  --no-l7-count     every message to user space: no request of a busy connection\n"
	"                    counted in the kernel (docs/l7.md, \"Counted in the kernel\")\n"
	"  -o FILE           .json (sessions and endpoints), .prom (Prometheus text),\n"
	"                    .jsonl (one line per request), .gtop (galatop view reopens it);\n"
	"                    default: the tables as text on standard output\n"
	"\n"
	"Stacks are rooted at [Pod]pod and [Con]container frames as in gala-gopher's\n"
	"stackprobe, then the --group root. A summary of samples, drops and failed stack captures\n"
	"goes to standard error.\n";

/* Parses "1,2,3" into ints within [1, max]. */
static int parse_int_list(const char *cmd, const char *opt, const char *arg, int *out,
			  size_t *n, long max)
{
	char *copy = strdup(arg), *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		long v;

		if (*n >= RECORD_MAX_TARGETS) {
			cli_usage_error(cmd, "%s: more than %d targets", opt, RECORD_MAX_TARGETS);
			ret = -1;
			break;
		}
		if (cli_parse_long(cmd, opt, t, 1, max, &v)) {
			ret = -1;
			break;
		}
		out[(*n)++] = (int)v;
	}
	free(copy);
	return ret;
}

/* perf's -F max: the kernel's perf_event_max_sample_rate, within galatop's 1..10000. */
/* Formats whose extension has two parts (the last part alone may name another format). */
static const char *const long_exts[] = { ".pb.gz", ".speedscope.json" };

static const char *long_ext(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(long_exts) / sizeof(long_exts[0]); i++) {
		size_t e = strlen(long_exts[i]);

		if (n > e && !strcmp(path + n - e, long_exts[i]))
			return path + n - e;
	}
	return NULL;
}

const char *record_output_ext(const char *path)
{
	const char *ext = long_ext(path);

	return ext ? ext : strrchr(path, '.');
}

static long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	long v = 0;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v < 1 ? 1000 : v > 10000 ? 10000 : v;
}

/* The families that write each file format, and what each family writes (for messages). */
static const struct {
	const char *ext;
	unsigned families; /* RECORD_FAMILY_* */
} formats[] = {
	{ ".folded", RECORD_FAMILY_STACKS },
	{ ".svg", RECORD_FAMILY_STACKS },
	{ ".pb.gz", RECORD_FAMILY_STACKS },
	{ ".speedscope.json", RECORD_FAMILY_STACKS },
	{ ".gtop", RECORD_FAMILY_ALL },
	{ ".json", RECORD_FAMILY_THREADS | RECORD_FAMILY_SLI | RECORD_FAMILY_L7 },
	{ ".jsonl", RECORD_FAMILY_THREADS | RECORD_FAMILY_L7 },
	{ ".prom", RECORD_FAMILY_SLI | RECORD_FAMILY_L7 },
};

static const struct {
	unsigned family;
	const char *names;  /* as --type says them */
	const char *writes; /* the formats it writes */
} families[] = {
	{ RECORD_FAMILY_STACKS, "oncpu, offcpu, mem, leak or growth",
	  ".folded, .svg, .pb.gz (pprof), .speedscope.json or .gtop" },
	{ RECORD_FAMILY_THREADS, "threads", ".json (Chrome trace), .jsonl or .gtop" },
	{ RECORD_FAMILY_SLI, "sli", ".json, .prom or .gtop" },
	{ RECORD_FAMILY_L7, "l7", ".json, .prom, .jsonl or .gtop" },
};

#define NFAMILIES (sizeof(families) / sizeof(families[0]))

/* The families that can write path's format (0: none). */
static unsigned format_families(const char *path)
{
	const char *ext = record_output_ext(path);

	for (size_t i = 0; ext && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(ext, formats[i].ext))
			return formats[i].families;
	return 0;
}

unsigned record_families(const struct record_opts *o)
{
	return (o->types & stack_type_probes() ? RECORD_FAMILY_STACKS : 0) |
	       (o->types & PROBE_THREADS ? RECORD_FAMILY_THREADS : 0) |
	       (o->types & RECORD_TYPE_L7 ? RECORD_FAMILY_L7 : 0) |
	       (o->sli ? RECORD_FAMILY_SLI : 0);
}

unsigned record_output_family(const struct record_opts *o, const char *path)
{
	return format_families(path) & record_families(o);
}

/* "a, b or c" of the families in mask, into buf; with writes, "--type a: X; --type b: Y". */
static void family_list(unsigned mask, bool writes, char *buf, size_t len)
{
	size_t n = 0, k = 0, total = (size_t)__builtin_popcount(mask);

	buf[0] = 0;
	for (size_t i = 0; i < NFAMILIES && n < len; i++) {
		if (!(mask & families[i].family))
			continue;
		if (writes)
			n += (size_t)snprintf(buf + n, len - n, "%s--type %s: %s", k ? "; " : "",
					      families[i].names, families[i].writes);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      !k ? "" : k + 1 == total ? " or " : ", ",
					      families[i].names);
		k++;
	}
}

/* Every output is written by exactly one family recorded (the snapshot by all of them), and
 * standard output is left to one family. 0 or EXIT_USAGE after a one-line report. */
static int check_outputs(const struct record_opts *o, const char *cmd)
{
	unsigned fams = record_families(o) ? record_families(o) : RECORD_FAMILY_STACKS; /* oncpu */
	char need[128], have[256];

	for (size_t i = 0; i < o->noutputs; i++) {
		unsigned can = format_families(o->outputs[i]), mine = can & fams;

		if (!mine) {
			family_list(can, false, need, sizeof(need));
			family_list(fams, true, have, sizeof(have));
			return cli_usage_error(cmd, "-o %s: this format needs --type %s (%s)",
					       o->outputs[i], need, have);
		}
		if (can != RECORD_FAMILY_ALL && __builtin_popcount(mine) > 1) {
			family_list(mine, false, need, sizeof(need));
			return cli_usage_error(cmd, "-o %s: --type %s each write this format: "
					       "record them apart, or write one .gtop",
					       o->outputs[i], need);
		}
	}
	if (!o->noutputs && (fams & (RECORD_FAMILY_SLI | RECORD_FAMILY_L7)) &&
	    __builtin_popcount(fams) > 1 && !strcmp(cmd, "record"))
		return cli_usage_error(cmd, "several types write to standard output: name the "
					    "outputs with -o (one .gtop holds every type)");
	return 0;
}

static int parse_types(const char *cmd, const char *arg, unsigned *types, bool *sli)
{
	char *copy = strdup(arg), *save = NULL;
	int ret = 0;

	*types = 0;
	*sli = false;
	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int st = stack_type_parse(t);

		if (st >= 0)
			*types |= stack_types[st].probe;
		else if (!strcmp(t, "threads"))
			*types |= PROBE_THREADS;
		else if (!strcmp(t, "l7"))
			*types |= RECORD_TYPE_L7;
		else if (!strcmp(t, "sli"))
			*sli = true;
		else {
			cli_usage_error(cmd, "--type: unknown probe '%s' (%s, threads, sli, l7)", t,
					stack_type_list());
			ret = -1;
			break;
		}
	}
	free(copy);
	return ret;
}

static int add_name(const char *cmd, const char *opt, const char *arg, char (*list)[128], size_t *n)
{
	if (*n >= RECORD_MAX_TARGETS) {
		cli_usage_error(cmd, "%s: more than %d targets", opt, RECORD_MAX_TARGETS);
		return -1;
	}
	if (!*arg || strlen(arg) >= 128) {
		cli_usage_error(cmd, "%s: bad value '%s' (1 to 127 characters)", opt, arg);
		return -1;
	}
	strcpy(list[(*n)++], arg);
	return 0;
}

/* --cpu LIST: CPUs that exist on this machine, in the kernel's list syntax. */
static int parse_cpu_list(const char *cmd, const char *arg, struct record_opts *o)
{
	long n = sysconf(_SC_NPROCESSORS_CONF), bad = -1;
	uint8_t *set = calloc(n > 0 ? n : 1, 1);
	int r;

	if (!set)
		return cli_usage_error(cmd, "out of memory");
	r = cpulist_parse(arg, set, n > 0 ? (size_t)n : 1, &bad);
	free(set);
	if (r == -ERANGE)
		return cli_usage_error(cmd, "--cpu: no CPU %ld on this machine (CPUs 0-%ld), in "
				       "'%s'", bad, n - 1, arg);
	if (r < 0 || strlen(arg) >= sizeof(o->cpu_list))
		return cli_usage_error(cmd, "--cpu: bad CPU list '%s' (e.g. 1 or 0,2-3)", arg);
	strcpy(o->cpu_list, arg);
	return 0;
}

enum {
	OPT_TYPE = 256, OPT_CPU, OPT_KERNEL, OPT_USER, OPT_NO_IDLE, OPT_MIN_BLOCK, OPT_MAX_BLOCK,
	OPT_STATE, OPT_BYTES, OPT_COMM, OPT_CMDLINE, OPT_CONTAINER, OPT_POD, OPT_THREADS,
	OPT_ANNOTATE, OPT_PERIOD, OPT_OUT_DIR, OPT_MULTI, OPT_CONFIG, OPT_THEME, OPT_NO_COLOR,
	OPT_ASCII, OPT_UNWIND, OPT_STACK_SIZE, OPT_UNWIND_CACHE, OPT_EVENT_RATE, OPT_INCLUDE_SELF,
	OPT_MAX_STACKS, OPT_LONGSYS, OPT_CGROUP, OPT_MIN_DUR, OPT_MIN_AGGR, OPT_TIMELINE_MEM,
	OPT_PROTOCOLS, OPT_NO_TLS, OPT_NO_L7_COUNT, OPT_L7_CAPTURE, OPT_NO_JAVA_AGENT, OPT_GROUP, OPT_CALL_GRAPH,
	OPT_TRIGGER, OPT_TRIGGER_BEFORE, OPT_TRIGGER_AFTER, OPT_TRIGGER_COOLDOWN,
	OPT_JAVA_NATIVE, OPT_NO_JAVA_NATIVE, OPT_HISTORY, OPT_FIXED_PERIOD, OPT_LEAK_SAMPLE,
	OPT_LEAK_MIN_AGE, OPT_LEAK_URETPROBE, OPT_LEAK_UPROBES, OPT_ALL_SYSCALLS, OPT_PROBE_STATS,
};

static int parse_args(int argc, char **argv, struct record_opts *o, const char *cmd,
		      const struct option *longopts, const struct record_extra_opts *x);

int record_parse_args(int argc, char **argv, struct record_opts *o, const char *cmd)
{
	return record_parse_args_extra(argc, argv, o, cmd, NULL);
}

/* record's options, then x's (their .val replaced by RECORD_OPT_EXTRA + index). NULL on
 * ENOMEM; caller frees. */
static struct option *merge_options(const struct option *mine, size_t nmine,
				    const struct record_extra_opts *x)
{
	size_t nx = 0;
	struct option *all;

	while (x && x->options[nx].name)
		nx++;
	all = calloc(nmine + nx + 1, sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, mine, nmine * sizeof(*all));
	for (size_t i = 0; i < nx; i++) {
		all[nmine + i] = x->options[i];
		all[nmine + i].flag = NULL;
		all[nmine + i].val = RECORD_OPT_EXTRA + (int)i;
	}
	return all;
}

int record_parse_args_extra(int argc, char **argv, struct record_opts *o, const char *cmd,
			    const struct record_extra_opts *x)
{
	static const struct option longopts[] = {
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "freq", required_argument, NULL, 'F' },
		{ "fixed-period", no_argument, NULL, OPT_FIXED_PERIOD },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "cmdline", required_argument, NULL, OPT_CMDLINE },
		{ "container", required_argument, NULL, OPT_CONTAINER },
		{ "pod", required_argument, NULL, OPT_POD },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "user", no_argument, NULL, OPT_USER },
		{ "no-idle", no_argument, NULL, OPT_NO_IDLE },
		{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
		{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "bytes", no_argument, NULL, OPT_BYTES },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "unwind-cache", required_argument, NULL, OPT_UNWIND_CACHE },
		{ "event-rate", required_argument, NULL, OPT_EVENT_RATE },
		{ "leak-sample", required_argument, NULL, OPT_LEAK_SAMPLE },
		{ "leak-min-age", required_argument, NULL, OPT_LEAK_MIN_AGE },
		{ "leak-uretprobe", no_argument, NULL, OPT_LEAK_URETPROBE },
		{ "leak-uprobes", no_argument, NULL, OPT_LEAK_UPROBES },
		{ "include-self", no_argument, NULL, OPT_INCLUDE_SELF },
		{ "probe-stats", required_argument, NULL, OPT_PROBE_STATS },
		{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "multi-instance", no_argument, NULL, OPT_MULTI },
		{ "output", required_argument, NULL, 'o' },
		{ "period", required_argument, NULL, OPT_PERIOD },
		{ "history", required_argument, NULL, OPT_HISTORY },
		{ "trigger", required_argument, NULL, OPT_TRIGGER },
		{ "trigger-before", required_argument, NULL, OPT_TRIGGER_BEFORE },
		{ "trigger-after", required_argument, NULL, OPT_TRIGGER_AFTER },
		{ "trigger-cooldown", required_argument, NULL, OPT_TRIGGER_COOLDOWN },
		{ "out-dir", required_argument, NULL, OPT_OUT_DIR },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "theme", required_argument, NULL, OPT_THEME },
		{ "no-color", no_argument, NULL, OPT_NO_COLOR },
		{ "ascii", no_argument, NULL, OPT_ASCII },
		{ "min-dur", required_argument, NULL, OPT_MIN_DUR },
		{ "all-syscalls", no_argument, NULL, OPT_ALL_SYSCALLS },
		{ "min-aggr-dur", required_argument, NULL, OPT_MIN_AGGR },
		{ "timeline-mem", required_argument, NULL, OPT_TIMELINE_MEM },
		{ "longsys", required_argument, NULL, OPT_LONGSYS },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "protocols", required_argument, NULL, OPT_PROTOCOLS },
		{ "no-tls", no_argument, NULL, OPT_NO_TLS },
		{ "no-l7-count", no_argument, NULL, OPT_NO_L7_COUNT },
		{ "no-java-agent", no_argument, NULL, OPT_NO_JAVA_AGENT },
		{ "java-native", no_argument, NULL, OPT_JAVA_NATIVE },
		{ "no-java-native", no_argument, NULL, OPT_NO_JAVA_NATIVE },
		{ "l7-capture", required_argument, NULL, OPT_L7_CAPTURE },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option *all = merge_options(longopts, sizeof(longopts) / sizeof(longopts[0]), x);
	int ret;

	if (!all)
		return cli_usage_error(cmd, "out of memory");
	ret = parse_args(argc, argv, o, cmd, all, x);
	free(all);
	return ret;
}

static int parse_args(int argc, char **argv, struct record_opts *o, const char *cmd,
		      const struct option *longopts, const struct record_extra_opts *x)
{
	long l;
	double d;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:F:agd:p:t:o:h", longopts, NULL)) != -1) {
		if (x && c >= RECORD_OPT_EXTRA) {
			int r = x->take(x->ctx, x->options[c - RECORD_OPT_EXTRA].name, optarg);

			if (r)
				return r;
			continue;
		}
		switch (c) {
		case OPT_TYPE:
			if (parse_types(cmd, optarg, &o->types, &o->sli))
				return EXIT_USAGE;
			break;
		case OPT_MIN_DUR:
			if (cli_parse_long(cmd, "--min-dur", optarg, 1, 10000000, &l))
				return EXIT_USAGE;
			o->min_dur_us = (uint64_t)l;
			break;
		case OPT_ALL_SYSCALLS:
			o->all_syscalls = true;
			break;
		case OPT_MIN_AGGR:
			if (cli_parse_long(cmd, "--min-aggr-dur", optarg, 1, 3600000, &l))
				return EXIT_USAGE;
			o->min_aggr_ms = (uint64_t)l;
			break;
		case OPT_TIMELINE_MEM:
			if (cli_parse_long(cmd, "--timeline-mem", optarg, 1, 65536, &l))
				return EXIT_USAGE;
			o->timeline_mem = (size_t)l << 20;
			break;
		case 'F':
			if (!strcmp(optarg, "max"))
				l = max_sample_rate();
			else if (cli_parse_long(cmd, "-F", optarg, 1, 10000, &l))
				return EXIT_USAGE;
			o->freq = (unsigned)l;
			break;
		case OPT_FIXED_PERIOD:
			o->fixed_period = true;
			break;
		case 'a': /* perf's system-wide switch: already the default without targets */
		case 'g': /* perf's call graphs: galatop always records stacks */
			break;
		case 'd':
			if (cli_parse_double(cmd, "-d", optarg, 0.01, 31536000, &o->duration))
				return EXIT_USAGE;
			break;
		case 'p':
			if (parse_int_list(cmd, "-p", optarg, o->pids, &o->npids, 4194304))
				return EXIT_USAGE;
			break;
		case 't':
			if (parse_int_list(cmd, "-t", optarg, o->tids, &o->ntids, 4194304))
				return EXIT_USAGE;
			break;
		case OPT_COMM:
			if (!*optarg || strlen(optarg) > 15)
				return cli_usage_error(cmd, "--comm: bad value '%s' (1 to 15 bytes, "
						       "as the kernel keeps it)", optarg);
			strcpy(o->comm, optarg);
			break;
		case OPT_CMDLINE: {
			regex_t re;
			int err;

			if (strlen(optarg) >= sizeof(o->cmdline))
				return cli_usage_error(cmd, "--cmdline: regex too long");
			err = regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB);
			if (err) {
				char why[128];

				regerror(err, &re, why, sizeof(why));
				return cli_usage_error(cmd, "--cmdline: bad regex '%s': %s",
						       optarg, why);
			}
			regfree(&re);
			strcpy(o->cmdline, optarg);
			break;
		}
		case OPT_CONTAINER:
			if (add_name(cmd, "--container", optarg, o->containers, &o->ncontainers))
				return EXIT_USAGE;
			break;
		case OPT_POD:
			if (add_name(cmd, "--pod", optarg, o->pods, &o->npods))
				return EXIT_USAGE;
			break;
		case OPT_CPU:
			if (parse_cpu_list(cmd, optarg, o))
				return EXIT_USAGE;
			break;
		case OPT_KERNEL:
			o->kernel_only = true;
			break;
		case OPT_USER:
			o->user_only = true;
			break;
		case OPT_NO_IDLE:
			o->no_idle = true;
			break;
		case OPT_INCLUDE_SELF:
			o->include_self = true;
			break;
		case OPT_EVENT_RATE:
			if (cli_parse_long(cmd, "--event-rate", optarg, 0, 1000000, &l))
				return EXIT_USAGE;
			o->event_rate = (unsigned)l;
			break;
		case OPT_LEAK_SAMPLE:
			if (cli_parse_long(cmd, "--leak-sample", optarg, 1, 1L << 32, &l))
				return EXIT_USAGE;
			o->leak_sample = (uint64_t)l;
			break;
		case OPT_LEAK_URETPROBE:
			o->leak_uretprobe = true;
			break;
		case OPT_LEAK_UPROBES:
			o->leak_uprobes = true;
			break;
		case OPT_LEAK_MIN_AGE:
			if (cli_parse_double(cmd, "--leak-min-age", optarg, 0, 7 * 86400, &d))
				return EXIT_USAGE;
			o->leak_min_age = d;
			break;
		case OPT_MAX_STACKS:
			if (cli_parse_long(cmd, "--max-stacks", optarg, 0, 100000000, &l))
				return EXIT_USAGE;
			o->max_stacks = (size_t)l;
			break;
		case OPT_MIN_BLOCK:
			if (cli_parse_long(cmd, "--min-block", optarg, 0, 1L << 40, &l))
				return EXIT_USAGE;
			o->min_block_us = (uint64_t)l;
			break;
		case OPT_MAX_BLOCK:
			if (cli_parse_long(cmd, "--max-block", optarg, 1, 1L << 40, &l))
				return EXIT_USAGE;
			o->max_block_us = (uint64_t)l;
			break;
		case OPT_STATE:
			if (!strcmp(optarg, "interruptible") || !strcmp(optarg, "S"))
				o->state_filter = PROBE_STATE_INTERRUPTIBLE;
			else if (!strcmp(optarg, "uninterruptible") || !strcmp(optarg, "D"))
				o->state_filter = PROBE_STATE_UNINTERRUPTIBLE;
			else
				return cli_usage_error(cmd, "--state: bad value '%s' "
						       "(interruptible or uninterruptible)", optarg);
			break;
		case OPT_BYTES:
			o->mem_bytes = true;
			break;
		case OPT_UNWIND:
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "auto"))
				o->unwind = RECORD_UNWIND_AUTO;
			else if (!strcmp(optarg, "fp"))
				o->unwind = RECORD_UNWIND_FP;
			else if (!strcmp(optarg, "dwarf"))
				o->unwind = RECORD_UNWIND_DWARF;
			else
				return cli_usage_error(cmd, "%s: bad value '%s' (fp, dwarf or auto)",
						       c == OPT_UNWIND ? "--unwind" : "--call-graph", optarg);
			break;
		case OPT_STACK_SIZE:
			if (cli_parse_long(cmd, "--stack-size", optarg, 512, GT_USTACK_MAX, &l))
				return EXIT_USAGE;
			o->stack_size = (unsigned)l;
			break;
		case OPT_UNWIND_CACHE:
			if (cli_parse_long(cmd, "--unwind-cache", optarg, 1, 65536, &l))
				return EXIT_USAGE;
			o->unwind_cache = (unsigned)l;
			break;
		case OPT_LONGSYS:
			if (!strcmp(optarg, "off")) {
				o->longsys_ns = RECORD_LONGSYS_OFF;
				break;
			}
			if (!strcmp(optarg, "on")) {
				o->longsys_ns = RECORD_LONGSYS_DEFAULT;
				break;
			}
			if (cli_parse_double(cmd, "--longsys", optarg, 0.001, 3600000, &d))
				return EXIT_USAGE;
			o->longsys_ns = (uint64_t)(d * 1e6);
			break;
		case OPT_CGROUP:
			if (!*optarg || strlen(optarg) >= sizeof(o->cgroup))
				return cli_usage_error(cmd, "--cgroup: bad path '%s'", optarg);
			strcpy(o->cgroup, optarg);
			break;
		case OPT_THREADS:
			o->group = GROUP_THREAD;
			break;
		case OPT_GROUP:
			o->group = group_by_parse(optarg);
			if (o->group < 0)
				return cli_usage_error(cmd, "--group: bad value '%s' (thread, process, "
						       "command or none)", optarg);
			break;
		case OPT_ANNOTATE:
			o->annotate = true;
			break;
		case OPT_MULTI:
			o->multi_instance = true;
			break;
		case 'o':
			if (o->noutputs >= RECORD_MAX_OUTPUTS)
				return cli_usage_error(cmd, "-o: more than %d outputs",
						       RECORD_MAX_OUTPUTS);
			if (!format_families(optarg))
				return cli_usage_error(cmd, "-o: cannot tell the format of '%s' "
						       "(use .folded, .svg, .pb.gz (pprof) or "
						       ".speedscope.json; with --type threads "
						       ".json, .jsonl or .gtop; with --type sli .json, "
						       ".prom or .gtop; with --type l7 .json, .prom, "
						       ".jsonl or .gtop)", optarg);
			o->outputs[o->noutputs++] = optarg;
			break;
		case OPT_PROTOCOLS:
			if (l7_parse_protocols(cmd, optarg, &o->l7_protocols))
				return EXIT_USAGE;
			break;
		case OPT_NO_L7_COUNT:
			o->no_l7_count = true;
			break;
		case OPT_NO_TLS:
			o->no_tls = true;
			break;
		case OPT_NO_JAVA_AGENT:
			o->no_java_agent = true;
			break;
		case OPT_JAVA_NATIVE:
		case OPT_NO_JAVA_NATIVE:
			o->no_java_native = c == OPT_NO_JAVA_NATIVE;
			break;
		case OPT_PROBE_STATS:
			if (!strcmp(optarg, "on") || !strcmp(optarg, "off")) {
				o->probe_stats = optarg[1] == 'n' ? RECORD_STATS_HELD : RECORD_STATS_OFF;
				break;
			}
			if (cli_parse_double(cmd, "--probe-stats", optarg, 2, 86400, &d))
				return EXIT_USAGE;
			o->probe_stats = d;
			break;
		case OPT_L7_CAPTURE:
			if (cli_parse_long(cmd, "--l7-capture", optarg, 64, L7_CAPTURE_MAX, &l))
				return EXIT_USAGE;
			o->l7_capture = (unsigned)l;
			break;
		case OPT_HISTORY:
			if (cli_parse_double(cmd, "--history", optarg, 2, 7 * 86400, &d))
				return EXIT_USAGE;
			o->history = d;
			break;
		case OPT_TRIGGER: {
			struct trigger_expr e;
			char why[256];

			if (trigger_parse(optarg, &e, why, sizeof(why)))
				return cli_usage_error(cmd, "--trigger: %s", why);
			if (strlen(optarg) >= sizeof(o->trigger))
				return cli_usage_error(cmd, "--trigger: condition too long");
			strcpy(o->trigger, optarg);
			break;
		}
		case OPT_TRIGGER_BEFORE:
			if (cli_parse_double(cmd, "--trigger-before", optarg, 0, 3600, &o->trigger_before))
				return EXIT_USAGE;
			break;
		case OPT_TRIGGER_AFTER:
			if (cli_parse_double(cmd, "--trigger-after", optarg, 0, 3600, &o->trigger_after))
				return EXIT_USAGE;
			break;
		case OPT_TRIGGER_COOLDOWN:
			if (cli_parse_double(cmd, "--trigger-cooldown", optarg, 0, 86400,
					     &o->trigger_cooldown))
				return EXIT_USAGE;
			break;
		case OPT_PERIOD:
			if (cli_parse_double(cmd, "--period", optarg, 1, 86400, &d))
				return EXIT_USAGE;
			o->period = d;
			break;
		case OPT_OUT_DIR:
			if (strlen(optarg) >= sizeof(o->out_dir))
				return cli_usage_error(cmd, "--out-dir: path too long");
			strcpy(o->out_dir, optarg);
			break;
		case OPT_CONFIG: {
			char err[512];

			if (record_config_load(optarg, o, err, sizeof(err))) {
				cli_error("%s", err);
				return EXIT_USAGE;
			}
			if (o->group < 0)
				o->group = GROUP_PROCESS; /* gala-gopher's [PID]comm roots */
			break;
		}
		case OPT_THEME:
		case OPT_NO_COLOR:
		case OPT_ASCII:
			if (!strcmp(cmd, "record"))
				return cli_bad_option(cmd, argv, c);
			if (c == OPT_THEME)
				o->theme = optarg;
			o->no_color |= c == OPT_NO_COLOR;
			o->ascii |= c == OPT_ASCII;
			break;
		case 'h':
			fputs(x && x->help ? x->help : strcmp(cmd, "record") ? cmd_live_help
									 : cmd_record_help,
			      stdout);
			exit(0);
		default:
			return cli_bad_option(cmd, argv, c);
		}
	}
	if (o->kernel_only && o->user_only)
		return cli_usage_error(cmd, "--kernel and --user exclude each other");
	if (optind < argc)
		o->command = argv + optind;
	if (o->multi_instance && !o->period)
		return cli_usage_error(cmd, "--multi-instance needs --period");
	if (o->multi_instance && o->group < 0)
		o->group = GROUP_PROCESS; /* one file per process, as gala-gopher's stackprobe */
	if (o->trigger[0] && record_trigger_check(o, cmd))
		return EXIT_USAGE;
	if (o->period && (o->types & RECORD_TYPE_L7) && !strcmp(cmd, "record"))
		return cli_usage_error(cmd, "--period does not apply to --type l7");
	if (!o->sli && (o->longsys_ns || o->cgroup[0]) && !strcmp(cmd, "record"))
		return cli_usage_error(cmd, "--longsys and --cgroup go with --type sli");
	if (o->sli && o->multi_instance)
		return cli_usage_error(cmd, "--multi-instance is for flame graphs, not --type sli");
	return check_outputs(o, cmd);
}

