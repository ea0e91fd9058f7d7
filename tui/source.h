/* Where the TUI gets its data: a small interface the live engine implements, and a static
 * implementation over profiles loaded from files (`galatop view`). The TUI only reads. */
#ifndef GALATOP_TUI_SOURCE_H
#define GALATOP_TUI_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/profile.h"
#include "../model/stack_type.h"

struct slices;

/* The profile types a source may offer are the stack types (model/stack_type.h); `o` cycles
 * among those it has. */

/* How a live source folds new samples into what it shows; `m` cycles. */
enum tui_mode { MODE_ACCUMULATE = 0, MODE_WINDOW, MODE_DECAY, MODE_MAX };

/* Counters for the status bar; strings are owned by the source and valid until the next
 * update call. Unknown numbers are negative. */
struct tui_stats {
	bool live;		/* false for files: rates, lost and CPU are not shown */
	const char *origin;	/* "live" or the file name */
	const char *probes;	/* e.g. "oncpu offcpu", NULL if none */
	const char *sampling;	/* what the kernel samples, e.g. "mem 1/16"; NULL or "" if nothing */
	double hz;		/* sampling frequency */
	double samples_per_s;	/* samples received per second lately */
	uint64_t samples;	/* samples received so far (counts on while the view is frozen) */
	uint64_t lost;		/* samples the kernel could not deliver (ring buffer full) */
	uint64_t dropped;	/* samples user space dropped (e.g. unwinding failed) */
	double own_cpu;		/* galatop's own CPU use, percent */
	double probe_cpu;	/* its BPF programs' kernel time, percent of one CPU; < 0 unknown */
	bool probe_sampled;	/* probe_cpu is the last sampled window's (statistics on a part of the time) */
	enum tui_mode mode;	/* the update mode in effect */
	double window_s;	/* window length (MODE_WINDOW) or half-life (MODE_DECAY) */
	double since;		/* wall-clock UNIX time the data starts at, 0 when unknown */
	const char *cpus;	/* the CPUs shown, e.g. "CPU 1", "CPUs 0,2-3", "all CPUs"; NULL
				 * when every CPU is shown from the start */
	double cpus_since;	/* wall-clock UNIX time the CPU set took effect */
	const char *trigger;	/* --trigger: its condition and moments, e.g. "trigger cpu>80: 2x,
				 * last 12:31:05 cpu=93.4 > 80"; NULL without one */
	unsigned triggered;	/* how many moments it marked */
	const double *marks;	/* those moments, wall-clock UNIX times (the heatmap marks them) */
	size_t nmarks;
	const char *hint;	/* one hint about what is being recorded, NULL when none */
};

/* Data kinds beyond profiles, each shown by its own pane and each from its own probe family:
 * the thread timeline (model/timeline), the L7 tables (model/l7) and the SLI series
 * (model/sli); and galatop's own cost (model/cost, the `$` popup; live only). The pane casts
 * the pointer from data() to its model type. */
/* TUI_DATA_LEAK: a struct leak_by_name (model/leak.h), the leak profile's allocations and
 * oldest block per function name, for the top view's columns. */
enum tui_data { TUI_DATA_TIMELINE = 0, TUI_DATA_L7, TUI_DATA_SLI, TUI_DATA_COST, TUI_DATA_LEAK,
		TUI_DATA_MAX };

struct tui_source_ops {
	/* Takes in what was collected since the last call; returns true when any profile changed.
	 * Profiles returned by profile() before stay valid until this call: the TUI does not call
	 * it while frozen. A call that returns true may move the profiles onto a new frame table
	 * (the old one stays valid until the next call, for the views to carry their frame ids
	 * over: app_frame_carry). May be NULL (static data). */
	bool (*update)(void *ctx);
	/* The profile of type t, or NULL when the source has none; owned by the source. All
	 * profiles of a source share one frame table. */
	const struct profile *(*profile)(void *ctx, enum stack_type t);
	/* Fills the status-bar counters. */
	void (*stats)(void *ctx, struct tui_stats *out);
	/* Asks for update mode m (window_s: window length or half-life). 0, or -ENOTSUP when
	 * the source cannot (static data). May be NULL. */
	int (*set_mode)(void *ctx, enum tui_mode m, double window_s);
	/* Keeps collecting between updates without changing what is shown (a live source empties
	 * its kernel buffers); called every 100 ms. May be NULL. */
	void (*drain)(void *ctx);
	/* The model object of kind d (see enum tui_data), or NULL when the source has none (yet);
	 * owned by the source, valid until the next update. May be NULL. */
	const void *(*data)(void *ctx, enum tui_data d);
	/* Starts collecting kind d (a live source attaches that family's probes when its pane
	 * first opens). 0 when it runs (or already ran), else -errno with a one-line reason in
	 * err. May be NULL (static data: -ENOTSUP). */
	int (*attach)(void *ctx, enum tui_data d, char *err, size_t errlen);
	/* The per-second history of type t (model/slices; times in seconds from stats' since),
	 * or NULL when the source keeps none; owned by the source, valid until the next update.
	 * May be NULL. */
	const struct slices *(*history)(void *ctx, enum stack_type t);
	/* Shows the next CPU set in the cycle every CPU, CPU 0, CPU 1, ... (a live source
	 * changes its kernel filter and starts its profiles afresh, as they mixed CPUs). 0, or
	 * -errno with a one-line reason in err (-ENOTSUP: static data). May be NULL. */
	int (*next_cpus)(void *ctx, char *err, size_t errlen);
	/* Starts collecting profile type t, which profile() has none of yet (a live source attaches
	 * that probe at the first `o` that reaches it). 0 when profile(t) exists from now on, else
	 * -errno with a one-line reason in err (-ENOTSUP: not collectable here). May be NULL. */
	int (*attach_ptype)(void *ctx, enum stack_type t, char *err, size_t errlen);
	/* The oldest message of the source not shown yet (a warning of probes attached late, an
	 * error reading them), NULL when none; *error tells an error from a warning. The text
	 * stays valid until the next call. The status line shows it: a live source must not
	 * write to the terminal curses owns. May be NULL. */
	const char *(*message)(void *ctx, bool *error);
};

struct tui_source {
	const struct tui_source_ops *ops;
	void *ctx;
};

/* Short names: "accumulate", "window", "decay". */
const char *tui_mode_str(enum tui_mode m);

/* A source over fixed profiles (files). The profiles are borrowed and must outlive it. */
struct tui_static_source {
	struct tui_source src; /* pass &s->src to the TUI */
	const struct profile *p[STACK_TYPES];
	const void *data[TUI_DATA_MAX];
	const struct slices *history[STACK_TYPES];
	const char *origin;
	double since; /* UNIX time the data starts at, 0 when unknown */
};

/* Initializes s over no profiles; origin (borrowed) names the data in the header. */
void tui_static_source_init(struct tui_static_source *s, const char *origin);
/* Sets the profile of type t (borrowed). */
void tui_static_source_set(struct tui_static_source *s, enum stack_type t,
			   const struct profile *p);
/* Sets the history of type t (borrowed), as loaded from a snapshot. */
void tui_static_source_set_history(struct tui_static_source *s, enum stack_type t,
				   const struct slices *h);
/* Sets the model object of kind d (borrowed), as loaded from a snapshot. */
void tui_static_source_set_data(struct tui_static_source *s, enum tui_data d, const void *obj);

#endif
