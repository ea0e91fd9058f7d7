/* The `s` key: writes what the views show (filters and zoom applied) to files. Each format
 * is one hook in the exporters table: a new format is one function and one line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "../export/chrome_trace.h"
#include "../export/folded.h"
#include "../export/pprof.h"
#include "../export/speedscope.h"
#include "../export/snapshot.h"
#include "../export/svg.h"
#include "util/clock.h"

struct exporter {
	const char *ext;
	/* Writes p (the shown tree: filters and zoom applied) to path; 0 or -errno, with a
	 * reason in err when the writer has a better one than strerror. */
	int (*write)(const char *path, const struct profile *p, struct tui_app *a, char *err,
		     size_t errlen);
	bool named_only; /* written only when the name ends in ext, not by a bare name */
};

/* Runs fn on path opened for writing, removing the file when anything fails. */
static int with_file(const char *path, int (*fn)(FILE *, const struct profile *, struct tui_app *),
		     const struct profile *p, struct tui_app *a)
{
	FILE *f = fopen(path, "w");
	int r;

	if (!f)
		return -errno;
	r = fn(f, p, a);
	if (fclose(f) && !r)
		r = -errno;
	if (r)
		remove(path);
	return r;
}

/* What the range and baseline say, for a file's header or subtitle; "" when neither is set. */
static void travel_note(const struct tui_app *a, char *buf, size_t n)
{
	char r[96];
	int k = 0;

	buf[0] = 0;
	if (a->travel.range_on) {
		travel_range_text(a, r, sizeof(r));
		k = snprintf(buf, n, "range %s from the start", r);
	}
	if (a->travel.base.ft && k >= 0 && (size_t)k < n) {
		char scale[64];

		travel_scale_text(a, scale, sizeof(scale));
		snprintf(buf + k, n - (size_t)k, "%scompared with %s%s", k ? "; " : "",
			 a->travel.base.desc, scale);
	}
}

static int folded_fn(FILE *f, const struct profile *p, struct tui_app *a)
{
	char note[320];

	/* A comment line: readers of folded text (galatop's, flamegraph.pl's) skip it. */
	travel_note(a, note, sizeof(note));
	if (note[0])
		fprintf(f, "# %s\n", note);
	return folded_write(f, p);
}

static int write_folded(const char *path, const struct profile *p, struct tui_app *a, char *err,
			size_t errlen)
{
	return with_file(path, folded_fn, p, a);
}

static int svg_fn(FILE *f, const struct profile *p, struct tui_app *a)
{
	struct svg_opts o;
	struct tui_stats st;
	char title[256], note[320];

	a->src->ops->stats(a->src->ctx, &st);
	travel_note(a, note, sizeof(note));
	svg_opts__init(&o);
	snprintf(title, sizeof(title), "galatop %s: %s", stack_type_name(a->ptype),
		 st.origin ? st.origin : "");
	o.title = title;
	o.subtitle = note;
	o.inverted = !a->flame;
	/* The palette shown: the SVG's colors are the screen's (exact where the screen has few). */
	o.hash = a->hash_colors;
	o.palette = a->hash_colors ? PALETTE_HOT : a->palette;
	o.countname = value_kind_str(profile__kind(p));
	return svg_write(f, p, &o);
}

static int write_svg(const char *path, const struct profile *p, struct tui_app *a, char *err,
		     size_t errlen)
{
	return with_file(path, svg_fn, p, a);
}

/* A snapshot is for exploring again later: it holds every profile of the source as collected
 * (filters are re-applied in the next view, and listed in the metadata). */
static int write_gtop(const char *path, const struct profile *shown, struct tui_app *a, char *err,
		      size_t errlen)
{
	struct snapshot_build b;
	struct snapshot_kv filters[12];
	struct snapshot *s = &b.sn;
	struct tui_stats st;
	char pid[16], range[64];
	size_t nf = 0;

	a->src->ops->stats(a->src->ctx, &st);
	/* Where and when: live data was recorded on this host and kernel, over the time range
	 * the data covers (after a change of CPUs the profiles start afresh); a file's history
	 * keeps its time 0. */
	if (st.live)
		snapshot_build_init(&b, true, "saved from galatop's live view",
				    st.cpus && st.cpus_since > st.since ? st.cpus_since : st.since,
				    clock_wall_s());
	else
		snapshot_build_init(&b, false, st.origin, st.since > 0 ? st.since : 0,
				    st.since > 0 ? st.since : 0);
	for_each_stack_type(t)
		snapshot_build_stack(&b, t, a->src->ops->profile(a->src->ctx, t), app_history(a, t),
				     st.live, st.hz);
	if (a->filter.hide_kernel)
		filters[nf++] = (struct snapshot_kv){ "hide_kernel", "true" };
	if (a->filter.regroup)
		filters[nf++] = (struct snapshot_kv){ "group", group_by_str(a->filter.group) };
	if (a->filter.pid) {
		snprintf(pid, sizeof(pid), "%u", a->filter.pid);
		filters[nf++] = (struct snapshot_kv){ "pid", pid };
	}
	if (a->filter.comm[0])
		filters[nf++] = (struct snapshot_kv){ "comm", a->filter.comm };
	if (a->filter.container[0])
		filters[nf++] = (struct snapshot_kv){ "container", a->filter.container };
	if (a->match_on)
		filters[nf++] = (struct snapshot_kv){ "search", a->match_desc };
	/* The range picked in the heatmap (as --range takes it; `galatop view` opens it so) and
	 * the baseline of a comparison. */
	if (a->travel.range_on) {
		snprintf(range, sizeof(range), "%.3f-%.3f", a->travel.from, a->travel.to);
		filters[nf++] = (struct snapshot_kv){ "range", range };
	}
	if (a->travel.base.ft)
		filters[nf++] = (struct snapshot_kv){ "baseline", a->travel.base.desc };
	/* The kernel's CPU filter (`u`, --cpu) and the trigger's marks, as the status line says. */
	if (st.live && st.cpus)
		filters[nf++] = (struct snapshot_kv){ "cpus", st.cpus };
	if (st.live && st.trigger)
		filters[nf++] = (struct snapshot_kv){ "trigger", st.trigger };
	if (a->src->ops->data)
		s->timeline = (struct timeline *)a->src->ops->data(a->src->ctx, TUI_DATA_TIMELINE);
	s->meta.filters = filters;
	s->meta.nfilters = nf;
	/* The L7 tables and the Containers pane's series too, when the source has them
	 * (snapshot_write only reads them). */
	if (a->src->ops->data) {
		s->l7 = (struct l7_table *)a->src->ops->data(a->src->ctx, TUI_DATA_L7);
		if (s->l7 && st.live)
			s->l7_secs = s->meta.end - s->meta.start;
		s->sli = (struct sli *)a->src->ops->data(a->src->ctx, TUI_DATA_SLI);
		if (s->sli && st.live)
			snapshot_build_probe(&b, "sli", NULL, 0);
	}
	return snapshot_write(path, s, err, errlen);
}

static int trace_fn(FILE *f, const struct profile *p, struct tui_app *a)
{
	return chrome_trace_write(f, a->src->ops->data(a->src->ctx, TUI_DATA_TIMELINE));
}

/* The thread timeline as a Chrome trace, when the source has one (else skipped: 1). */
static int write_trace(const char *path, const struct profile *p, struct tui_app *a, char *err,
		       size_t errlen)
{
	if (!a->src->ops->data || !a->src->ops->data(a->src->ctx, TUI_DATA_TIMELINE))
		return 1;
	return with_file(path, trace_fn, p, a);
}

/* The shown profile as pprof, dated as the data it comes from. */
static int pprof_fn(FILE *f, const struct profile *p, struct tui_app *a)
{
	struct typed_profile tp = { a->ptype, p };
	struct pprof_meta m = { 0 };
	struct tui_stats st;

	a->src->ops->stats(a->src->ctx, &st);
	m.hz = st.hz;
	if (st.since > 0) {
		m.start = st.since;
		m.duration = st.live ? clock_wall_s() - st.since : 0;
	}
	return pprof_write(f, &tp, 1, &m);
}

static int write_pprof(const char *path, const struct profile *p, struct tui_app *a, char *err,
		       size_t errlen)
{
	return with_file(path, pprof_fn, p, a);
}

static int speedscope_fn(FILE *f, const struct profile *p, struct tui_app *a)
{
	struct typed_profile tp = { a->ptype, p };
	char name[64];

	snprintf(name, sizeof(name), "galatop %s", stack_type_name(a->ptype));
	return speedscope_write(f, &tp, 1, name);
}

static int write_speedscope(const char *path, const struct profile *p, struct tui_app *a,
			    char *err, size_t errlen)
{
	return with_file(path, speedscope_fn, p, a);
}

/* A name ending in one of these extensions picks that format (the longest that matches). */
static const struct exporter exporters[] = {
	{ ".svg", write_svg, false },
	{ ".folded", write_folded, false },
	{ ".gtop", write_gtop, false },
	{ ".json", write_trace, false },
	{ ".pb.gz", write_pprof, true },
	{ ".speedscope.json", write_speedscope, true },
};
#define NEXPORTERS (sizeof(exporters) / sizeof(exporters[0]))

const char *export_formats(void)
{
	static char buf[64];
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NEXPORTERS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "", exporters[i].ext);
	return buf;
}

void export_default_name(const struct tui_app *a, char *buf, size_t n)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH"), *dir = a->opts->out_dir;
	time_t now = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : time(NULL);
	struct tm tm;
	char stamp[32];

	/* SOURCE_DATE_EPOCH makes the name reproducible (tests). */
	if (sde && *sde)
		gmtime_r(&now, &tm);
	else
		localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (dir && *dir)
		snprintf(buf, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", "galatop-");
	else
		snprintf(buf, n, "galatop-");
	snprintf(buf + strlen(buf), n - strlen(buf), "%s", stamp);
}

void export_save(struct tui_app *a, const char *name)
{
	struct profile_filter zoom = { 0 };
	struct profile *zp = NULL;
	const struct profile *p = a->disp;
	const struct exporter *only = NULL;
	char done[256] = "", path[512];
	size_t len = strlen(name), dn = 0;

	for (size_t i = 0; i < NEXPORTERS; i++) {
		size_t el = strlen(exporters[i].ext);

		if (len > el && !strcmp(name + len - el, exporters[i].ext))
			only = &exporters[i];
	}
	zoom.prefix = a->zoom.v;
	zoom.prefix_n = a->zoom.n;
	if (zoom.prefix_n) {
		zp = profile__filter(a->disp, &zoom);
		if (!zp) {
			app_msg(a, ROLE_ERROR, "out of memory");
			return;
		}
		p = zp;
	}
	for (size_t i = 0; i < NEXPORTERS; i++) {
		const struct exporter *e = &exporters[i];
		char err[256] = "";
		int r;

		if ((only && e != only) || (!only && e->named_only))
			continue;
		snprintf(path, sizeof(path), "%s%s", name, only ? "" : e->ext);
		r = e->write(path, p, a, err, sizeof(err));
		if (r > 0 && !only)
			continue; /* nothing of that kind to write */
		if (r > 0)
			r = -ENODATA;
		if (r) {
			if (err[0])
				app_msg(a, ROLE_ERROR, "%s", err);
			else
				app_msg(a, ROLE_ERROR, "cannot write %s: %s", path,
					r == -ENODATA ? "nothing to draw" : strerror(-r));
			profile__free(zp);
			return;
		}
		dn += (size_t)snprintf(done + dn, sizeof(done) - dn, "%s%s", dn ? ", " : "", path);
		if (dn >= sizeof(done))
			dn = sizeof(done) - 1;
	}
	app_msg(a, ROLE_STATUS, "saved %s", done);
	profile__free(zp);
}
