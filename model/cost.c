#include "cost.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* Program name prefixes per family, longest first; a gt_ program matching none is a stack
 * type's (profile.bpf.c: gt_oncpu, gt_offcpu, gt_mem_*, gt_proc_*). */
static const struct {
	const char *prefix;
	enum cost_family fam;
} prefixes[] = {
	{ "gt_sli_", COST_SLI },
	{ "gt_l7_", COST_L7 },
	{ "gt_tl_", COST_THREADS },
};

static const char *const family_names[COST_FAMILIES] = {
	[COST_STACKS] = "stacks",
	[COST_THREADS] = "threads",
	[COST_L7] = "l7",
	[COST_SLI] = "sli",
};

enum cost_family cost_family_of(const char *name)
{
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i].prefix, strlen(prefixes[i].prefix)))
			return prefixes[i].fam;
	return COST_STACKS;
}

const char *cost_family_name(enum cost_family f)
{
	return f < COST_FAMILIES ? family_names[f] : "?";
}

const struct cost_prog *cost__find(const struct cost *c, uint32_t id)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (c->p[i].r.id == id)
			return &c->p[i];
	return NULL;
}

static struct cost_prog *find(struct cost *c, uint32_t id)
{
	return (struct cost_prog *)cost__find(c, id);
}

/* Takes in readings r[0..n): each program's growth since its previous reading becomes its
 * window figures, added to its totals when count (a window closes), else only the baseline. */
static int take_readings(struct cost *c, const struct cost_reading *r, size_t n, bool count)
{
	size_t fresh = 0;

	for (size_t i = 0; i < n; i++)
		fresh += !find(c, r[i].id);
	if (array_grow(&c->p, &c->cap, c->n + fresh, sizeof(*c->p)))
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		c->p[i].gone = true;
		if (count)
			c->p[i].d_ns = c->p[i].d_cnt = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct cost_prog *p = find(c, r[i].id);
		uint64_t dns, dcnt;

		if (!p) {
			p = &c->p[c->n++];
			memset(p, 0, sizeof(*p));
			p->r.id = r[i].id;
			memcpy(p->r.name, r[i].name, sizeof(p->r.name));
			p->r.name[sizeof(p->r.name) - 1] = 0;
			p->fam = cost_family_of(p->r.name);
		}
		/* Counters only grow; a smaller one (never seen) counts from itself. */
		dns = r[i].run_ns >= p->r.run_ns ? r[i].run_ns - p->r.run_ns : r[i].run_ns;
		dcnt = r[i].run_cnt >= p->r.run_cnt ? r[i].run_cnt - p->r.run_cnt : r[i].run_cnt;
		if (count) {
			p->d_ns = dns;
			p->d_cnt = dcnt;
			p->tot_ns += dns;
			p->tot_cnt += dcnt;
		}
		p->r.run_ns = r[i].run_ns;
		p->r.run_cnt = r[i].run_cnt;
		p->gone = false;
	}
	return 0;
}

int cost__sample(struct cost *c, double now, double cpu_s, const struct cost_reading *r, size_t n)
{
	bool first = c->t0 == 0 && c->t == 0;

	if (r && take_readings(c, r, n, true))
		return -ENOMEM;
	if (first) {
		c->t0 = now;
		c->cpu0 = cpu_s;
		c->dt = c->dcpu = 0;
		c->win_t0 = -1;
	} else {
		c->dt = now - c->t;
		c->dcpu = cpu_s - c->cpu;
	}
	if (r) {
		/* The first readings close no window: what ran before them is the programs' own
		 * (the statistics are turned on before any program loads). */
		if (c->win_t0 >= 0) {
			c->win_secs = now - c->win_t0;
			c->on_secs += c->win_secs;
		}
		c->win_t0 = now;
	}
	c->t = now;
	c->cpu = cpu_s;
	return 0;
}

int cost__window_open(struct cost *c, double now, const struct cost_reading *r, size_t n)
{
	if (take_readings(c, r, n, false))
		return -ENOMEM;
	c->win_t0 = now;
	return 0;
}

void cost__free(struct cost *c)
{
	if (!c)
		return;
	free(c->p);
	c->p = NULL;
	c->n = c->cap = 0;
}

/* The figures of family f (COST_FAMILIES: all) or, when only < c->n, of that program alone. */
static void figures(const struct cost *c, int f, size_t only, bool interval,
		    struct cost_figures *out)
{
	memset(out, 0, sizeof(*out));
	out->secs = interval ? c->win_secs : c->on_secs;
	for (size_t i = 0; i < c->n; i++) {
		const struct cost_prog *p = &c->p[i];

		if ((f != COST_FAMILIES && (int)p->fam != f) || (only < c->n && i != only))
			continue;
		out->ns += interval ? p->d_ns : p->tot_ns;
		out->calls += interval ? p->d_cnt : p->tot_cnt;
	}
	if (out->calls)
		out->ns_per_call = (double)out->ns / (double)out->calls;
	if (out->secs > 0) {
		out->calls_per_s = (double)out->calls / out->secs;
		out->cpu_pct = 100.0 * (double)out->ns / 1e9 / out->secs;
	}
}

void cost__figures(const struct cost *c, int f, bool interval, struct cost_figures *out)
{
	figures(c, f, SIZE_MAX, interval, out);
}

double cost__own_cpu(const struct cost *c, bool interval)
{
	double secs = interval ? c->dt : c->t - c->t0;

	if (secs <= 0)
		return -1;
	return 100.0 * (interval ? c->dcpu : c->cpu - c->cpu0) / secs;
}

/* Appends to buf at *n (as snprintf: *n counts what was needed). */
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(*n < len ? buf + *n : NULL, *n < len ? len - *n : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n += (size_t)k;
}

static void put_figures(char *buf, size_t len, size_t *n, const char *name,
			const struct cost_figures *fg)
{
	put(buf, len, n, "%-24s %9.0f %12.0f %8.2f%% %14llu\n", name, fg->ns_per_call,
	    fg->calls_per_s, fg->cpu_pct, (unsigned long long)fg->calls);
}

size_t cost__format(const struct cost *c, bool interval, char *buf, size_t len)
{
	struct cost_figures all, fam;
	size_t n = 0;
	double own = cost__own_cpu(c, interval), secs = interval ? c->dt : c->t - c->t0;

	if (len)
		buf[0] = 0;
	cost__figures(c, COST_FAMILIES, interval, &all);
	put(buf, len, &n, "galatop CPU %.2f%% of one core (%.2f s in %.1f s)", own < 0 ? 0 : own,
	    interval ? c->dcpu : c->cpu - c->cpu0, secs);
	if (!c->stats_on) {
		put(buf, len, &n, "; BPF statistics off: probes' kernel time unknown\n");
		return n;
	}
	if (!c->period) {
		put(buf, len, &n, "; its probes in the kernel %.2f%% (%.3f s)\n", all.cpu_pct,
		    (double)all.ns / 1e9);
	} else if (interval) {
		put(buf, len, &n,
		    "; its probes in the kernel %.2f%%, sampled (BPF statistics on %.0f s in %.0f: "
		    "the last window, %.1f s)\n",
		    all.cpu_pct, COST_WINDOW_S, c->period, all.secs);
	} else {
		/* The windows' share of the kernel time, scaled to the whole run. */
		put(buf, len, &n,
		    "; its probes in the kernel %.2f%% (about %.3f s), sampled (BPF statistics on "
		    "%.1f s of %.1f s, %.0f s in %.0f; calls counted while on)\n",
		    all.cpu_pct, all.cpu_pct / 100 * secs, all.secs, secs, COST_WINDOW_S, c->period);
	}
	put(buf, len, &n, "%-24s %9s %12s %9s %14s\n", "family/program", "ns/call", "calls/s",
	    "CPU", "calls");
	for (int f = 0; f < COST_FAMILIES; f++) {
		bool any = false;

		for (size_t i = 0; i < c->n; i++)
			any |= (int)c->p[i].fam == f;
		if (!any)
			continue;
		cost__figures(c, f, interval, &fam);
		put_figures(buf, len, &n, cost_family_name((enum cost_family)f), &fam);
		for (size_t i = 0; i < c->n; i++) {
			const struct cost_prog *p = &c->p[i];
			struct cost_figures pf;
			char name[64];

			if ((int)p->fam != f)
				continue;
			figures(c, f, i, interval, &pf);
			if (!pf.calls)
				continue; /* attached to what did not happen: no cost */
			snprintf(name, sizeof(name), "  %s", p->r.name);
			put_figures(buf, len, &n, name, &pf);
		}
	}
	return n;
}
