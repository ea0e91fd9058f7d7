/* galatop (no command) / galatop live: the live view — the session's probes feeding the TUI
 * through a tui_source that folds each refresh's samples into what is shown. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "session.h"
#include "tui/tui.h"

const char cmd_live_help[] =
	"Usage: sudo galatop [OPTIONS] [-- CMD [ARGS]]\n"
	"       sudo galatop live [OPTIONS] [-- CMD [ARGS]]\n"
	"\n"
	"The live view: stacks sampled with eBPF (root), shown as an icicle/flame graph you drill\n"
	"into with the keyboard (F1 or ? lists the keys). Starts on-CPU profiling of the whole\n"
	"system at 99 Hz.\n"
	"\n"
	"  -d, --duration S  refresh every S seconds (default 1)\n"
	"  --type T[,T]      probes to attach: oncpu (default), offcpu, mem; `o` cycles them\n"
	"  --theme NAME      default, hot, mono, high-contrast, colorblind (`T` cycles)\n"
	"  --no-color        attributes only (NO_COLOR is honoured too)\n"
	"  --ascii           ASCII glyphs only\n"
	"  --out-dir DIR     where `s` saves snapshots (default: the current directory)\n"
	"\n"
	"Every probe and target option of `galatop record` applies: -F, -p, -t, --comm,\n"
	"--cmdline, --container, --pod, --cpu, --kernel, --user, --no-idle, --min-block,\n"
	"--max-block, --state, --bytes, --annotate, --config; see `galatop help record`.\n"
	"Update modes (`m`): accumulate everything, a sliding window of the last 10 s, or an\n"
	"exponential decay with a 10 s half-life.\n";

#define WINDOW_MAX 120 /* slices kept for the sliding window */

static const enum gt_event_type event_of[PTYPE_MAX] = {
	[PTYPE_ONCPU] = GT_EV_ONCPU, [PTYPE_OFFCPU] = GT_EV_OFFCPU, [PTYPE_MEM] = GT_EV_MEM,
};
static const unsigned probe_of[PTYPE_MAX] = {
	[PTYPE_ONCPU] = PROBE_ONCPU, [PTYPE_OFFCPU] = PROBE_OFFCPU, [PTYPE_MEM] = PROBE_MEM,
};

struct live {
	struct session s;
	double refresh;			  /* seconds between updates */
	struct profile *shown[PTYPE_MAX]; /* what the TUI reads; NULL for probes not attached */
	struct profile *ring[PTYPE_MAX][WINDOW_MAX]; /* window mode: one slice per update */
	size_t nring, slot;
	enum tui_mode mode;
	double window_s;
	double last_update;
	double since; /* wall-clock start, for snapshots */
	/* Rates for the status bar, over the time between two stats() calls. */
	double rate_t, rate_cpu, samples_per_s, own_cpu;
	uint64_t rate_events;
	char probes[64];
};

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_sec(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void clear_ring(struct live *l)
{
	for (int t = 0; t < PTYPE_MAX; t++)
		for (size_t i = 0; i < WINDOW_MAX; i++)
			if (l->ring[t][i])
				profile__clear(l->ring[t][i]);
	l->slot = 0;
}

/* Folds one slice (what arrived since the last update) into what is shown. */
static int fold_slice(struct live *l, int t, const struct profile *slice, double dt)
{
	struct profile *shown = l->shown[t];

	switch (l->mode) {
	case MODE_WINDOW: {
		struct profile *r = l->ring[t][l->slot];

		if (!r) {
			r = profile__new(profile__frames(shown), profile__kind(shown), false);
			if (!r)
				return -ENOMEM;
			l->ring[t][l->slot] = r;
		}
		profile__clear(r);
		if (profile__merge(r, slice))
			return -ENOMEM;
		profile__clear(shown);
		for (size_t i = 0; i < l->nring; i++)
			if (l->ring[t][i] && profile__merge(shown, l->ring[t][i]))
				return -ENOMEM;
		return 0;
	}
	case MODE_DECAY:
		profile__scale(shown, pow(0.5, dt / l->window_s));
		return profile__merge(shown, slice);
	default:
		return profile__merge(shown, slice);
	}
}

static bool live_update(void *ctx)
{
	struct live *l = ctx;
	double now = now_sec(), dt = now - l->last_update;

	probes__poll(l->s.probes, 0);
	for (int t = 0; t < PTYPE_MAX; t++)
		if (l->shown[t] && fold_slice(l, t, collector__profile(l->s.col, event_of[t]), dt))
			return false; /* out of memory: keep showing what there is */
	if (l->mode == MODE_WINDOW)
		l->slot = (l->slot + 1) % l->nring;
	collector__clear(l->s.col);
	l->last_update = now;
	return true;
}

static const struct profile *live_profile(void *ctx, enum tui_ptype t)
{
	struct live *l = ctx;

	return (unsigned)t < PTYPE_MAX ? l->shown[t] : NULL;
}

static void live_stats(void *ctx, struct tui_stats *out)
{
	struct live *l = ctx;
	struct probe_stats ps;
	struct collector_stats cs;
	double now = now_sec(), cpu = cpu_sec();

	/* Keep the ring buffer drained even while the view is frozen: the collector holds what
	 * arrives until the next update. */
	probes__poll(l->s.probes, 0);
	probes__stats(l->s.probes, &ps);
	collector__stats(l->s.col, &cs);
	if (now - l->rate_t >= 0.5) {
		l->samples_per_s = (double)(cs.events - l->rate_events) / (now - l->rate_t);
		l->own_cpu = 100 * (cpu - l->rate_cpu) / (now - l->rate_t);
		l->rate_t = now;
		l->rate_cpu = cpu;
		l->rate_events = cs.events;
	}
	memset(out, 0, sizeof(*out));
	out->live = true;
	out->origin = "live";
	out->probes = l->probes;
	out->hz = l->s.o->freq;
	out->samples_per_s = l->samples_per_s;
	out->samples = cs.events;
	out->lost = ps.drops;
	out->dropped = ps.lost_user + ps.kstack_fail + ps.ustack_fail;
	out->own_cpu = l->own_cpu;
	out->mode = l->mode;
	out->window_s = l->window_s;
	out->since = l->since;
}

static int live_set_mode(void *ctx, enum tui_mode m, double window_s)
{
	struct live *l = ctx;

	if ((unsigned)m >= MODE_MAX || !(window_s > 0))
		return -EINVAL;
	l->mode = m;
	l->window_s = window_s;
	l->nring = (size_t)ceil(window_s / l->refresh);
	if (l->nring < 1)
		l->nring = 1;
	if (l->nring > WINDOW_MAX)
		l->nring = WINDOW_MAX;
	/* What is shown stays until the next update folds new samples in the new way; a window
	 * starts empty rather than from slices of another length. */
	clear_ring(l);
	return 0;
}

static void live_drain(void *ctx)
{
	struct live *l = ctx;

	probes__poll(l->s.probes, 0);
}

static const struct tui_source_ops live_ops = {
	.drain = live_drain,
	.update = live_update,
	.profile = live_profile,
	.stats = live_stats,
	.set_mode = live_set_mode,
};

static void live_free(struct live *l)
{
	for (int t = 0; t < PTYPE_MAX; t++) {
		profile__free(l->shown[t]);
		for (size_t i = 0; i < WINDOW_MAX; i++)
			profile__free(l->ring[t][i]);
	}
}

int cmd_live(int argc, char **argv)
{
	struct record_opts o;
	struct live l = { .mode = MODE_ACCUMULATE, .window_s = 10 };
	struct tui_source src = { &live_ops, &l };
	struct tui_opts to = { 0 };
	int ret;

	record_opts_init(&o);
	ret = record_parse_args(argc, argv, &o, "live");
	if (ret)
		return ret;
	l.refresh = o.duration > 0 ? o.duration : 1;
	o.duration = 0;
	if (!o.types)
		o.types = PROBE_ONCPU;
	o.threads = true; /* so that `H` can show threads; the view merges them by default */
	o.source_lines = true; /* the detail line shows file:line */
	ret = session_open(&l.s, &o);
	if (ret)
		return ret;
	l.nring = (size_t)ceil(l.window_s / l.refresh);
	for (int t = 0; t < PTYPE_MAX; t++) {
		if (!(o.types & probe_of[t]))
			continue;
		l.shown[t] = profile__new(l.s.ft, profile__kind(collector__profile(l.s.col, event_of[t])),
					  false);
		if (!l.shown[t]) {
			cli_error("out of memory");
			live_free(&l);
			session_close(&l.s, true);
			return 1;
		}
		snprintf(l.probes + strlen(l.probes), sizeof(l.probes) - strlen(l.probes), "%s%s",
			 l.probes[0] ? " " : "", tui_ptype_str((enum tui_ptype)t));
	}
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		l.since = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	}
	l.last_update = l.rate_t = now_sec();
	l.rate_cpu = cpu_sec();
	session_start_command(&l.s);
	to.theme = o.theme;
	to.no_color = o.no_color;
	to.ascii = o.ascii;
	to.out_dir = strcmp(o.out_dir, ".") ? o.out_dir : NULL;
	to.refresh_ms = (int)(l.refresh * 1000);
	to.merge_threads = true;
	ret = tui_run(&src, &to);
	live_free(&l);
	session_close(&l.s, true);
	return ret;
}
