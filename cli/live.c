/* galatop (no command) / galatop live: the live view — the session's probes feeding the TUI
 * through a tui_source that folds each refresh's samples into what is shown. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "engine/history.h"
#include "engine/l7_capture.h"
#include "engine/messages.h"
#include "engine/session.h"
#include "model/shown.h"
#include "record.h"
#include "record_trigger.h"
#include "engine/tl_capture.h"
#include "tui/tui.h"
#include "util/clock.h"
#include "util/cpulist.h"
#include "util/grow.h"

const char cmd_live_help[] =
	"Usage: sudo galatop [OPTIONS] [-- CMD [ARGS]]\n"
	"       sudo galatop live [OPTIONS] [-- CMD [ARGS]]\n"
	"\n"
	"The live view: stacks sampled with eBPF (root), shown as an icicle/flame graph you drill\n"
	"into with the keyboard (F1 or ? lists the keys). Starts on-CPU profiling of the whole\n"
	"system at 99 Hz.\n"
	"\n"
	"  -d, --duration S  refresh every S seconds (default 1)\n"
	"  --type T[,T]      probes to attach at start: oncpu (default), offcpu, mem; the\n"
	"                    others load too and attach at the first `o` that reaches them;\n"
	"                    threads attaches the thread timeline at start (else when the\n"
	"                    Threads pane, key 3, first opens); l7 opens the L7 pane (key 4)\n"
	"                    at start, capture running;\n"
	"                    sli starts on the Containers pane (`5`) with the SLI probes on\n"
	"  --all-syscalls    threads: every file, net, lock and sleep call from entry to exit,\n"
	"                    not only those that block (slows every system call down)\n"
	"  --longsys MS|on|off  sli: system calls of at least MS ms (on: 10) count as cpu_longsys\n"
	"                    (off by default: its hooks slow every system call down)\n"
	"  --cgroup PATH     a cgroup target (v2 path, or a v1 controller path)\n"
	"  --group G         roots: command (default), process, thread or none; `H` cycles\n"
	"  --theme NAME      default, hot, mono, high-contrast, colorblind (`T` cycles)\n"
	"  --no-color        attributes only (NO_COLOR is honoured too)\n"
	"  --ascii           ASCII glyphs only\n"
	"  --out-dir DIR     where `s` saves snapshots (default: the current directory)\n"
	"  --history S       seconds of per-second history kept for the heatmap (`6`),\n"
	"                    ranges and snapshots (default 600; coarser past the memory cap)\n"
	"  --trigger EXPR    mark the moments EXPR holds (as `record --trigger`, e.g. 'cpu>80')\n"
	"                    on the status line, --trigger-cooldown S apart (default 30)\n"
	"\n"
	"Every probe and target option of `galatop record` applies: -F (its rate randomized\n"
	"around HZ so that loops cannot alias with it), --fixed-period, -p, -t, --comm,\n"
	"--cmdline, --container, --pod, --cpu, --kernel, --user, --no-idle, --min-block,\n"
	"--max-block, --state, --bytes, --annotate, --config; see `galatop help record`.\n"
	"Update modes (`m`): accumulate everything, a sliding window of the last 10 s, or an\n"
	"exponential decay with a 10 s half-life.\n";

#define RING_BUDGET 32 /* and about this many average slices' memory: a steady state in 32 s */

_Static_assert((int)MODE_ACCUMULATE == FOLD_ACCUMULATE && (int)MODE_WINDOW == FOLD_WINDOW &&
		       (int)MODE_DECAY == FOLD_DECAY && (int)MODE_MAX == FOLD_MODE_MAX,
	       "the TUI's update modes are the model's fold modes");

struct live {
	struct session s;
	struct msg_list msgs;		  /* the engine's; said on the status line while it runs */
	double refresh;			  /* seconds between updates */
	struct shown shown; /* what the TUI reads, per stack type; NULL for probes not attached */
	struct history hist; /* one slice per update per type: the window mode, the heat map, and
			      * the history snapshots carry; stack types index it */
	double last_update;
	/* Rates for the status bar, over the time between two stats() calls. */
	double rate_t, samples_per_s, own_cpu, probe_cpu;
	uint64_t rate_events;
	char probes[64];
	char sampling[64];
	unsigned renewals;
	struct strtab *old_st; /* the tables before the last renewal, kept until the next update */
	struct frames *old_ft; /* (the TUI carries its frame ids over with them) */
	char l7_err[256];     /* why the L7 capture could not start */
	/* The CPU set (`u` cycles it): the --cpu list, every CPU, or one online CPU. */
	uint8_t *cpu_set;     /* ncpus flags handed to the probes */
	uint8_t *online;      /* the online CPUs, the cycle's steps */
	size_t ncpus;
	int cpu_step;	      /* CPU_LIST, CPU_ALL, or the one CPU shown */
	bool single_cpu;      /* --cpu named one CPU: the cycle has no list step */
	char cpus[64];	      /* what the status line says; "" = every CPU from the start */
	double cpus_wall, cpus_mono; /* when the set took effect (0: from the start) */
	struct live_trigger *trig;   /* NULL without --trigger */
	bool running;	      /* the view's loop drains or updates: its first frame is drawn */
	struct leak_by_name leak_names; /* leak: allocations and oldest block per function */
	bool leak_names_ok;
};

enum { CPU_LIST = -2, CPU_ALL = -1 };

/* --trigger in the live view: the moments the condition held (a cooldown apart) are marked. */
struct live_trigger {
	struct trigger_expr e;
	struct trigger_state st;
	struct trigger_sampler *sampler;
	double *moments; /* wall-clock UNIX times */
	size_t n, cap;
	char says[384];	 /* the status line's words */
};

/* Moves what is shown and the history onto a fresh frame table once the table has grown
 * enough (the collector's profiles are empty between updates). The old tables stay until the
 * next update, for the TUI to carry its frame ids over. Nothing changes on ENOMEM. */
static void live_renew_frames(struct live *l)
{
	if (session__renew_frames(&l->s, l->shown.p, l->hist.ring, STACK_TYPES, &l->old_ft,
				  &l->old_st))
		l->renewals++;
}

/* Reads the trigger's metrics; a moment that holds (past the cooldown) is marked. */
static void live_trigger_step(struct live *l, double now)
{
	struct live_trigger *tr = l->trig;
	char why[64], hms[16];
	double moment, wall = clock_wall_s();
	time_t t = (time_t)wall;

	if (!trigger_sampler__holds(tr->sampler, now, why, sizeof(why)) ||
	    !trigger_state_step(&tr->st, now, true))
		return;
	trigger_state_due(&tr->st, now, &moment); /* a mark, not a capture: due at once */
	if (ARRAY_GROW(tr->moments, tr->cap, tr->n + 1) == 0)
		tr->moments[tr->n++] = wall;
	strftime(hms, sizeof(hms), "%H:%M:%S", localtime(&t));
	snprintf(tr->says, sizeof(tr->says), "trigger %s: %ux, last %s %s", l->s.o->trigger,
		 tr->st.fired, hms, why);
}

/* Sets up --trigger's marks (the condition was checked when parsed). 0 or -ENOMEM. */
static int live_trigger_init(struct live *l)
{
	const struct record_opts *o = l->s.o;
	struct live_trigger *tr;
	char err[256];

	if (!o->trigger[0])
		return 0;
	tr = l->trig = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	trigger_parse(o->trigger, &tr->e, err, sizeof(err));
	trigger_state_init(&tr->st, 0, 0, o->trigger_cooldown);
	tr->sampler = trigger_sampler__new(&tr->e, l->s.pids, &l->s.npids);
	if (!tr->sampler)
		return -ENOMEM;
	trigger_sampler__holds(tr->sampler, clock_mono_s(), NULL, 0); /* the first reading */
	snprintf(tr->says, sizeof(tr->says), "trigger %s: waiting", o->trigger);
	return 0;
}

static bool live_update(void *ctx)
{
	struct live *l = ctx;
	double now = clock_mono_s(), dt = now - l->last_update, window_s = l->shown.window_s;

	l->running = true;
	if (l->old_ft) {
		frames__free(l->old_ft);
		strtab__free(l->old_st);
		l->old_ft = NULL;
		l->old_st = NULL;
		/* The old tables and profiles were large and freed at once: give the pages back,
		 * so that RSS follows what is held rather than its high-water mark. */
		malloc_trim(0);
	}
	session__poll(&l->s, 0);
	if (l->s.tl)
		tl_capture__refresh(l->s.tl);
	if (!(dt > 0))
		return false; /* no time passed: nothing to fold */
	if (l->s.sli)
		sli_collector__close(l->s.sli);
	/* A window does not reach back past a change of CPUs: what is shown is one CPU set. */
	if (l->shown.mode == FOLD_WINDOW && l->cpus_mono > 0 && now - l->cpus_mono < window_s)
		window_s = now - l->cpus_mono;
	for_each_stack_type(t) {
		if (!l->shown.p[t])
			continue;
		history_heat(&l->hist, &l->s, t);
		if (shown_fold(&l->shown, t, l->hist.ring[t], collector__profile(l->s.col, t),
			       l->last_update - l->hist.mono0, now - l->hist.mono0, window_s))
			return false; /* out of memory: keep showing what there is */
	}
	collector__clear(l->s.col);
	live_renew_frames(l);
	if (l->shown.p[STACK_LEAK])
		l->leak_names_ok = !leak_set__by_name(collector__leak(l->s.col), l->s.ft,
						      clock_mono_ns(), &l->leak_names);
	l->last_update = now;
	if (l->trig)
		live_trigger_step(l, now);
	return true;
}

static const struct profile *live_profile(void *ctx, enum stack_type t)
{
	struct live *l = ctx;

	return (unsigned)t < STACK_TYPES ? l->shown.p[t] : NULL;
}

static void live_stats(void *ctx, struct tui_stats *out)
{
	struct live *l = ctx;
	struct probe_stats ps;
	struct collector_stats cs;
	struct cost_figures cf;
	double now = clock_mono_s();

	/* Keep the ring buffer drained even while the view is frozen: the collector holds what
	 * arrives until the next update. Not before the loop runs: the first frame comes first. */
	if (l->running)
		session__poll(&l->s, 0);
	memset(&ps, 0, sizeof(ps));
	if (l->s.probes)
		probes__stats(l->s.probes, &ps);
	collector__stats(l->s.col, &cs);
	if (now - l->rate_t >= 0.5) {
		l->samples_per_s = (double)(cs.events - l->rate_events) / (now - l->rate_t);
		l->rate_t = now;
		session__cost_sample(&l->s);
		l->own_cpu = cost__own_cpu(&l->s.cost.model, true);
		cost__figures(&l->s.cost.model, COST_FAMILIES, true, &cf);
		/* Sampled: none until the first window closed. */
		l->probe_cpu = l->s.cost.model.stats_on && cf.secs > 0 ? cf.cpu_pct : -1;
		l->rate_events = cs.events;
	}
	memset(out, 0, sizeof(*out));
	out->live = true;
	out->origin = "live";
	out->probes = l->probes;
	session__sampling(&l->s, true, l->sampling, sizeof(l->sampling));
	out->sampling = l->sampling;
	out->hz = l->s.o->freq;
	out->samples_per_s = l->samples_per_s;
	out->samples = cs.events;
	out->lost = ps.drops;
	if (l->s.l7)
		out->lost += l7_capture__drops(l->s.l7);
	out->dropped = ps.lost_user + ps.kstack_fail + ps.ustack_fail;
	out->own_cpu = l->own_cpu;
	out->probe_cpu = l->probe_cpu;
	out->probe_sampled = l->s.cost.model.period > 0;
	out->mode = (enum tui_mode)l->shown.mode;
	out->window_s = l->shown.window_s;
	out->since = l->hist.wall0;
	out->cpus = l->cpus[0] ? l->cpus : NULL;
	out->cpus_since = l->cpus_wall ? l->cpus_wall : l->hist.wall0;
	out->trigger = l->trig ? l->trig->says : NULL;
	out->triggered = l->trig ? l->trig->st.fired : 0;
	out->marks = l->trig ? l->trig->moments : NULL;
	out->nmarks = l->trig ? l->trig->n : 0;
	out->hint = session__java_hint(&l->s);
}

/* Says in l->cpus which CPUs the current step shows. */
static void live_describe_cpus(struct live *l)
{
	char list[48];

	if (l->cpu_step == CPU_ALL) {
		snprintf(l->cpus, sizeof(l->cpus), "all CPUs");
	} else if (l->cpu_step >= 0) {
		snprintf(l->cpus, sizeof(l->cpus), "CPU %d", l->cpu_step);
	} else {
		cpulist_format(l->cpu_set, l->ncpus, list, sizeof(list));
		snprintf(l->cpus, sizeof(l->cpus), "CPUs %s", list);
	}
}

/* The cycle: the --cpu list (when it named several CPUs), every CPU, then each online CPU. */
static int live_next_cpus(void *ctx, char *err, size_t errlen)
{
	struct live *l = ctx;
	int step = l->cpu_step, r;

	if (!l->s.probes) {
		snprintf(err, errlen, "no stack probes run: the CPU filter applies to %s",
			 stack_type_list());
		return -ENOTSUP;
	}
	if (step == CPU_LIST) {
		step = CPU_ALL;
	} else {
		do
			step++;
		while ((size_t)step < l->ncpus && !l->online[step]);
		if ((size_t)step >= l->ncpus)
			step = l->s.o->cpu_list[0] && !l->single_cpu ? CPU_LIST : CPU_ALL;
	}
	if (step == CPU_LIST)
		cpulist_parse(l->s.o->cpu_list, l->cpu_set, l->ncpus, NULL);
	else if (step == CPU_ALL)
		memset(l->cpu_set, 1, l->ncpus);
	else {
		memset(l->cpu_set, 0, l->ncpus);
		l->cpu_set[step] = 1;
	}
	r = probes__set_cpus(l->s.probes, l->cpu_set, l->ncpus);
	if (r) {
		snprintf(err, errlen, "cannot change the CPU filter: %s", strerror(-r));
		return r;
	}
	l->cpu_step = step;
	live_describe_cpus(l);
	/* What was collected under the old set goes: the profiles start afresh on the new one. */
	session__poll(&l->s, 0);
	collector__clear(l->s.col);
	shown_clear(&l->shown);
	l->last_update = l->cpus_mono = clock_mono_s();
	l->cpus_wall = clock_wall_s();
	return 0;
}

/* Sets up the CPU cycle from --cpu (the probes open with a switchable set). 0 or -ENOMEM. */
static int live_cpus_init(struct live *l, const struct record_opts *o)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	l->ncpus = n > 0 ? (size_t)n : 1;
	l->cpu_set = calloc(l->ncpus, 1);
	l->online = calloc(l->ncpus, 1);
	if (!l->cpu_set || !l->online)
		return -ENOMEM;
	if (cpulist_online(l->online, l->ncpus) <= 0)
		memset(l->online, 1, l->ncpus);
	l->cpu_step = CPU_ALL;
	if (!o->cpu_list[0])
		return 0;
	if (cpulist_parse(o->cpu_list, l->cpu_set, l->ncpus, NULL) == 1) {
		l->single_cpu = true;
		l->cpu_step = (int)((uint8_t *)memchr(l->cpu_set, 1, l->ncpus) - l->cpu_set);
	} else {
		l->cpu_step = CPU_LIST;
	}
	live_describe_cpus(l);
	return 0;
}

static int live_set_mode(void *ctx, enum tui_mode m, double window_s)
{
	struct live *l = ctx;

	return shown_set_mode(&l->shown, l->hist.ring, (enum fold_mode)m, window_s);
}

static void live_drain(void *ctx)
{
	struct live *l = ctx;

	l->running = true;
	session__poll(&l->s, 0);
}

static const void *live_data(void *ctx, enum tui_data d)
{
	struct live *l = ctx;

	if (d == TUI_DATA_TIMELINE && l->s.tl)
		return tl_capture__timeline(l->s.tl);
	if (d == TUI_DATA_SLI && l->s.sli)
		return sli_collector__model(l->s.sli);
	if (d == TUI_DATA_L7 && l->s.l7)
		return l7_capture__table(l->s.l7);
	if (d == TUI_DATA_COST)
		return &l->s.cost.model;
	if (d == TUI_DATA_LEAK && l->leak_names_ok)
		return &l->leak_names;
	return NULL;
}

/* The L7 capture starts when its pane first opens (or at start with --type l7). */
static int live_attach_l7(struct live *l, char *err, size_t errlen)
{
	int r;

	if (l->s.l7)
		return 0;
	if (l->l7_err[0]) { /* tried already: say why again */
		snprintf(err, errlen, "%s", l->l7_err);
		return -EPERM;
	}
	r = session__attach_l7(&l->s, l->l7_err, sizeof(l->l7_err));
	if (r) {
		snprintf(err, errlen, "%s", l->l7_err);
		return r;
	}
	snprintf(l->probes + strlen(l->probes), sizeof(l->probes) - strlen(l->probes), "%sl7",
		 l->probes[0] ? " " : "");
	return 0;
}

/* A pane's probes attach when it first opens (or at start with --type threads / sli). */
static int live_attach(void *ctx, enum tui_data d, char *err, size_t errlen)
{
	struct live *l = ctx;
	int r;

	switch (d) {
	case TUI_DATA_TIMELINE:
		r = session__threads_open(&l->s, err, errlen);
		if (!r) {
			tl_capture__refresh(l->s.tl);
			snprintf(l->probes + strlen(l->probes), sizeof(l->probes) - strlen(l->probes),
				 "%s%s", l->probes[0] ? " " : "", "threads");
		}
		return r;
	case TUI_DATA_SLI:
		return session__attach_sli(&l->s, err, errlen);
	case TUI_DATA_L7:
		return live_attach_l7(l, err, errlen);
	default:
		snprintf(err, errlen, "not collected by this galatop");
		return -ENOTSUP;
	}
}

static const struct slices *live_history(void *ctx, enum stack_type t)
{
	struct live *l = ctx;

	return (unsigned)t < STACK_TYPES ? l->hist.ring[t] : NULL;
}

/* Room in shown.p[t] and the history ring of profile type t, named in the status bar; 0 or
 * -ENOMEM. */
static int live_add_ptype(struct live *l, enum stack_type t)
{
	enum value_kind kind = profile__kind(collector__profile(l->s.col, t));

	if (history_add(&l->hist, &l->s, t) ||
	    shown_add(&l->shown, t, l->s.ft, kind, l->hist.ring[t]))
		return -ENOMEM;
	slices__set_budget(l->hist.ring[t], RING_BUDGET);
	snprintf(l->probes + strlen(l->probes), sizeof(l->probes) - strlen(l->probes), "%s%s",
		 l->probes[0] ? " " : "", stack_type_name(t));
	return 0;
}

/* `o` reached a profile type not attached at start: its probe, loaded then, attaches now. */
static int live_attach_ptype(void *ctx, enum stack_type t, char *err, size_t errlen)
{
	struct live *l = ctx;
	int r;

	if ((unsigned)t >= STACK_TYPES)
		return -EINVAL;
	if (l->shown.p[t])
		return 0;
	if (!(l->s.o->lazy_types & stack_types[t].probe)) {
		snprintf(err, errlen, "%s: not collected by this galatop (--type)", stack_type_name(t));
		return -ENOTSUP;
	}
	r = session__attach_probe(&l->s, stack_types[t].probe, err, errlen);
	if (r)
		return r;
	if (live_add_ptype(l, t)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static const char *live_message(void *ctx, bool *error)
{
	struct live *l = ctx;
	const struct msg *m = msg_list__next(&l->msgs);

	if (!m)
		return NULL;
	*error = m->level == MSG_ERROR;
	return m->text;
}

static const struct tui_source_ops live_ops = {
	.history = live_history,
	.drain = live_drain,
	.update = live_update,
	.profile = live_profile,
	.stats = live_stats,
	.set_mode = live_set_mode,
	.data = live_data,
	.attach = live_attach,
	.next_cpus = live_next_cpus,
	.attach_ptype = live_attach_ptype,
	.message = live_message,
};

static void live_free(struct live *l)
{
	free(l->cpu_set);
	free(l->online);
	if (l->trig) {
		trigger_sampler__free(l->trig->sampler);
		free(l->trig->moments);
		free(l->trig);
		l->trig = NULL;
	}
	l->cpu_set = l->online = NULL;
	shown_free(&l->shown);
	history_free(&l->hist);
	leak_by_name__free(&l->leak_names);
	frames__free(l->old_ft);
	strtab__free(l->old_st);
}

/* live_free, then the session closes and what the engine still has to say is said. */
static void live_close(struct live *l)
{
	live_free(l);
	session__close(&l->s, true);
	cli_say(&l->msgs);
	msg_list__free(&l->msgs);
}

int cmd_live(int argc, char **argv)
{
	struct record_opts o;
	struct live l = { 0 };
	struct tui_source src = { &live_ops, &l };
	struct tui_opts to = { 0 };
	int ret;

	record_opts__init(&o);
	ret = record_parse_args(argc, argv, &o, "live");
	if (ret)
		return ret;
	l.refresh = o.duration > 0 ? o.duration : 1;
	shown_init(&l.shown, FOLD_ACCUMULATE, 10, o.max_stacks);
	o.duration = 0;
	if (o.types & RECORD_TYPE_L7) {
		to.first_view = "L7"; /* the capture attaches when the app opens the pane */
		o.types &= ~RECORD_TYPE_L7;
	}
	if (!o.types)
		o.types = PROBE_ONCPU;
	/* The other stack probes are loaded now (the verifier's time is spent before the first
	 * frame) and attached at the first `o` that reaches them: until then they cost nothing. */
	if (o.types & stack_type_probes())
		o.lazy_types = stack_type_probes();
	/* leak probes each target process alone; with no process targets it would trap every
	 * malloc on the box, so it is there only when asked for (--type leak). */
	if (!o.npids && !o.command && !o.cmdline[0])
		o.lazy_types &= ~PROBE_LEAK;
	/* Recorded per thread so that `H` can show every grouping; the view starts with --group. */
	to.regroup = true;
	to.group = o.group < 0 ? GROUP_COMMAND : o.group;
	o.group = GROUP_THREAD;
	o.source_lines = true; /* the detail line shows file:line */
	o.cpu_switch = true;   /* `u` changes the CPUs at run time */
	if (live_cpus_init(&l, &o)) {
		cli_error("out of memory");
		live_free(&l);
		return 1;
	}
	ret = session__open(&l.s, &o, &l.msgs);
	cli_say(&l.msgs);
	if (ret) {
		live_free(&l);
		msg_list__free(&l.msgs);
		return ret;
	}
	if (getenv("GALATOP_RENEW_FRAMES")) /* tests: renewals within seconds */
		l.s.renew_min = (uint32_t)strtoul(getenv("GALATOP_RENEW_FRAMES"), NULL, 10);
	if (history_open(&l.hist, &l.s, o.history ? o.history : HISTORY_DEFAULT_S,
			 (size_t)((o.history ? o.history : HISTORY_DEFAULT_S) / l.refresh) + 2,
			 false) ||
	    live_trigger_init(&l)) {
		cli_error("out of memory");
		live_close(&l);
		return 1;
	}
	for (int t = 0; t < STACK_TYPES; t++) {
		if ((o.types & stack_types[t].probe) && live_add_ptype(&l, (enum stack_type)t)) {
			cli_error("out of memory");
			live_close(&l);
			return 1;
		}
	}
	if (l.s.tl)
		snprintf(l.probes + strlen(l.probes), sizeof(l.probes) - strlen(l.probes), "%s%s",
			 l.probes[0] ? " " : "", "threads");
	l.last_update = l.rate_t = clock_mono_s();
	session__start_command(&l.s);
	cli_say(&l.msgs);
	to.theme = o.theme;
	to.no_color = o.no_color;
	to.ascii = o.ascii;
	to.out_dir = strcmp(o.out_dir, ".") ? o.out_dir : NULL;
	to.refresh_ms = (int)(l.refresh * 1000);
	if (o.types == PROBE_THREADS && !o.sli)
		to.first_view = "Threads";
	if (o.sli)
		to.first_view = "Containers";
	ret = tui_run(&src, &to);
	if (getenv("GALATOP_RENEW_FRAMES")) /* tests: say that renewals happened */
		fprintf(stderr, "galatop: frame table renewed %u times\n", l.renewals);
	session__poll_report(&l.s);
	if (l.s.poll_err)
		ret = 1;
	live_close(&l);
	return ret;
}
