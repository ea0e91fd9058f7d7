/* SLI series: per group (host, container, pod, service, cgroup) the time its tasks lost to the
 * scheduler, memory and block I/O (totals, counts, model/hist histograms), the same over the
 * last interval with a 60-interval sparkline per SLI, pressure (PSI) and CPU throttling next to
 * them, and the group's threads. Filled by a collector one interval at a time; read by the
 * Containers pane and the exporters. Also the pure parsers of the kernel files those side
 * figures come from. Values missing at their source are NaN, never 0. */
#ifndef GALATOP_MODEL_SLI_H
#define GALATOP_MODEL_SLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"

/* In the order of bpf/sli_event.h's enum gt_sli_kind. */
enum sli_kind {
	SLI_CPU_WAIT = 0,
	SLI_CPU_RUNDELAY,
	SLI_CPU_SLEEP,
	SLI_CPU_BLOCK,
	SLI_CPU_IOWAIT,
	SLI_CPU_LONGSYS,
	SLI_MEM_RECLAIM,
	SLI_MEM_SWAPIN,
	SLI_MEM_COMPACT,
	SLI_BIO_LATENCY,
	SLI_MAX,
};

enum sli_gkind { SLI_G_HOST = 0, SLI_G_CONTAINER, SLI_G_POD, SLI_G_SERVICE, SLI_G_CGROUP,
		 SLI_G_MAX };

/* Pressure stall figures: some/full for cpu, memory and io. */
enum sli_psi { SLI_PSI_CPU_SOME = 0, SLI_PSI_CPU_FULL, SLI_PSI_MEM_SOME, SLI_PSI_MEM_FULL,
	       SLI_PSI_IO_SOME, SLI_PSI_IO_FULL, SLI_PSI_MAX };

#define SLI_SPARK 60	   /* intervals kept for sparklines */
/* Sparkline series: one per SLI (% of wall time), then these side figures. */
enum { SLI_SERIES_PSI_CPU = SLI_MAX, SLI_SERIES_PSI_MEM, SLI_SERIES_PSI_IO, SLI_SERIES_THROTTLED,
       SLI_SERIES_MAX };
#define SLI_MAX_THREADS 256 /* threads kept per group (the busiest by total delay) */
#define SLI_COMM_LEN 16

/* "cpu_wait", ... and "host", "container", ...; parse gives -1 for an unknown name. */
const char *sli_name(enum sli_kind k);
int sli_parse_name(const char *s);
/* One line: the hook an SLI is measured at. */
const char *sli_hook(enum sli_kind k);
/* The notes' prefix when mem_swapin comes from major faults rather than delay accounting. */
#define SLI_SWAPIN_FAULTS "mem_swapin: major faults on swap"
const char *sli_gkind_str(enum sli_gkind k);
int sli_parse_gkind(const char *s);
/* "cpu_some", "cpu_full", "memory_some", ... */
const char *sli_psi_name(enum sli_psi p);

struct sli_thread {
	uint32_t tid, tgid;
	char comm[SLI_COMM_LEN]; /* sanitized */
	uint64_t ns[SLI_MAX];	 /* totals */
	uint64_t d_ns[SLI_MAX];	 /* the last interval */
};

struct sli_group {
	char *id;   /* stable key, e.g. "host", "container:<id>", "cgroup:/a/b" */
	char *name; /* shown, sanitized: "host", "[Con]web", "[Pod]api", "/system.slice/x.service" */
	enum sli_gkind kind;
	uint64_t ns[SLI_MAX], count[SLI_MAX]; /* totals since the start */
	struct hist hist[SLI_MAX];
	uint64_t d_ns[SLI_MAX], d_count[SLI_MAX]; /* the current (or last closed) interval */
	struct hist d_hist[SLI_MAX];
	float spark[SLI_SERIES_MAX][SLI_SPARK];	   /* % of wall time per interval, oldest first
						    * (NaN: missing) */
	double psi[SLI_PSI_MAX];		   /* % of wall time stalled, last interval */
	uint64_t psi_total[SLI_PSI_MAX];	   /* the kernel's totals (us) at the last close */
	double throttled_pct, nr_throttled;	   /* last interval: % of wall time, periods */
	uint64_t thr_total_ns, thr_total_n;	   /* the kernel's totals at the last close */
	bool psi_seen, thr_seen;		   /* the totals above hold a baseline */
	char *psi_src, *thr_src;		   /* the files read, NULL when missing */
	struct sli_thread *threads; /* by delay in total, sleep aside, most first (at close) */
	size_t nthreads, capthreads;
};

struct sli {
	struct sli_group **groups;
	size_t n, cap;
	unsigned have;		/* 1 << SLI_* measured */
	char *notes;		/* coverage remarks (e.g. where mem_swapin comes from), or NULL */
	uint64_t longsys_ns;	/* cpu_longsys threshold */
	double start, end;	/* UNIX seconds the totals cover */
	double dt;		/* length of the last closed interval, seconds */
	unsigned nspark;	/* sparkline points filled (<= SLI_SPARK) */
	unsigned long intervals; /* intervals closed */
};

/* A new empty series; NULL on ENOMEM. */
struct sli *sli__new(void);
/* Frees s and its groups; NULL is a no-op. */
void sli__free(struct sli *s);
/* The group with key id, created (name sanitized, kind) when new; NULL on ENOMEM. */
struct sli_group *sli__group(struct sli *s, const char *id, const char *name, enum sli_gkind kind);
/* The group with key id or NULL. */
struct sli_group *sli__find(const struct sli *s, const char *id);
/* The hook of SLI k in s: sli_hook(k), but for mem_swapin the source the notes name. */
const char *sli__hook(const struct sli *s, enum sli_kind k);
/* Adds src's totals (delays, counts, histograms per group; groups created as needed) to dst's,
 * so that a series that replaces another goes on from it. 0 or -ENOMEM. */
int sli__add_totals(struct sli *dst, const struct sli *src);
/* Sets the coverage notes (copied; NULL clears). 0 or -ENOMEM. */
int sli__set_notes(struct sli *s, const char *notes);

/* Adds count delays of ns in total to g's current interval. */
void sli_group__add(struct sli_group *g, enum sli_kind k, uint64_t ns, uint64_t count);
/* Adds n delays in histogram bucket idx (model/hist index) to g's current interval. 0 or
 * -EINVAL/-ENOMEM. */
int sli_group__add_bucket(struct sli_group *g, enum sli_kind k, unsigned idx, uint64_t n);
/* Adds a thread's delays of the current interval (ns per SLI); comm is sanitized. 0 or -ENOMEM. */
int sli_group__add_thread(struct sli_group *g, uint32_t tid, uint32_t tgid, const char *comm,
			  const uint64_t ns[SLI_MAX]);
/* Records the kernel's cumulative PSI totals (us; UINT64_MAX = missing) and CPU throttling
 * totals (periods, ns; UINT64_MAX = missing) read at the close of the interval; rates follow
 * from the previous close. src names the files (copied, NULL = missing). */
void sli_group__set_psi(struct sli_group *g, const uint64_t total_us[SLI_PSI_MAX], const char *src);
void sli_group__set_throttle(struct sli_group *g, uint64_t nr, uint64_t ns, const char *src);

/* Closes the current interval of dt seconds ending at UNIX time end: folds it into the totals,
 * the rates and the sparklines; its figures stay readable as the last interval's. Call
 * sli__begin before feeding the next one. */
void sli__close(struct sli *s, double dt, double end);
/* Empties every group's current interval (totals stay). */
void sli__begin(struct sli *s);

/* The last closed interval's delay of SLI k as % of wall time (can pass 100 with many threads). */
double sli_group__pct(const struct sli *s, const struct sli_group *g, enum sli_kind k);
/* Sparkline point i (0 = oldest of s->nspark) of series (an SLI or SLI_SERIES_*). */
double sli_group__spark(const struct sli *s, const struct sli_group *g, unsigned series,
			unsigned i);
/* The series' name in files: the SLI's name, "psi_cpu_some", "psi_memory_some",
 * "psi_io_some", "throttled". */
const char *sli_series_name(unsigned series);

/* Parsers of kernel text (any bytes, NUL-terminated). A PSI file ("some avg10=.. total=N" and
 * "full ..." lines): the totals in us, UINT64_MAX where a line is missing; 0, or -EINVAL when
 * neither line is there. */
int sli_parse_psi(const char *text, uint64_t *some_us, uint64_t *full_us);
/* A cpu.stat (v1: nr_throttled, throttled_time in ns; v2: nr_throttled, throttled_usec): 0, or
 * -EINVAL without both figures. */
int sli_parse_cpu_stat(const char *text, uint64_t *nr_throttled, uint64_t *throttled_ns);

#endif
